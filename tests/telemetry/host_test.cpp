#include "inferscope/telemetry/host.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "inferscope/telemetry/client_stats.h"

namespace inferscope::telemetry {
namespace {

namespace fs = std::filesystem;

std::map<std::string, double> as_map(const Values& v) { return {v.begin(), v.end()}; }

void copy_snapshot(const std::string& which, const fs::path& root) {
  const fs::path src = fs::path(INFERSCOPE_TEST_DATA) / "telemetry" / "proc" / which;
  fs::create_directories(root / "net");
  for (const char* f : {"stat", "meminfo", "net/dev"})
    fs::copy_file(src / f, root / f, fs::copy_options::overwrite_existing);
}

TEST(Host, ParsesProcStat) {
  const auto cpus = parse_proc_stat("cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 2 3 4\nintr 5\n");
  ASSERT_EQ(cpus.size(), 2u);
  EXPECT_EQ(cpus[0].name, "cpu");
  EXPECT_EQ(cpus[0].total(), 1u + 2 + 3 + 4 + 5 + 6 + 7 + 8);  // guest time is already in user
  EXPECT_EQ(cpus[1].idle_all(), 4u);
}

TEST(Host, ParsesMeminfoAndNetDev) {
  const auto m = parse_meminfo("MemTotal: 100 kB\nMemFree: 10 kB\nMemAvailable: 40 kB\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->total_bytes, 102400u);
  EXPECT_EQ(m->available_bytes, 40960u);
  EXPECT_FALSE(parse_meminfo("MemTotal: 100 kB\n"));
  const auto d = parse_net_dev("h1\nh2\n  eth0: 10 1 0 0 0 0 0 0 20 2 0 0 0 0 0 0\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].iface, "eth0");
  EXPECT_EQ(d[0].rx_bytes, 10u);
  EXPECT_EQ(d[0].tx_bytes, 20u);
}

TEST(Host, SamplerTurnsCountersIntoRates) {
  const fs::path root = fs::path(::testing::TempDir()) / "inferscope_proc_test";
  fs::remove_all(root);
  copy_snapshot("t0", root);
  HostSampler h(root.string());
  const auto first = as_map(h.sample(0));
  EXPECT_FALSE(first.contains("cpu_pct"));  // no rate from one reading
  EXPECT_EQ(first.at("mem_total_bytes"), 16384000.0 * 1024);

  copy_snapshot("t1", root);
  const auto v = as_map(h.sample(2 * kNsPerSec));
  // All cores: 500 ticks passed, 300 of them idle or iowait.
  EXPECT_DOUBLE_EQ(v.at("cpu_pct"), 40.0);
  EXPECT_DOUBLE_EQ(v.at("cpu0_pct"), 56.0);  // 110 idle of 250
  EXPECT_DOUBLE_EQ(v.at("cpu1_pct"), 24.0);  // 190 idle of 250
  EXPECT_DOUBLE_EQ(v.at("cpu_max_core_pct"), 56.0);
  EXPECT_DOUBLE_EQ(v.at("mem_used_bytes"), (16384000.0 - 4096000.0) * 1024);
  // eth0 + eth1 received 4.1 MB and sent 0.5 MB in 2 s; lo moved 2 MB.
  EXPECT_DOUBLE_EQ(v.at("net_rx_bytes_per_s"), 2050000.0);
  EXPECT_DOUBLE_EQ(v.at("net_tx_bytes_per_s"), 250000.0);
  EXPECT_DOUBLE_EQ(v.at("lo_bytes_per_s"), 1000000.0);
  fs::remove_all(root);
}

TEST(Host, MissingProcFilesGiveNoValues) {
  HostSampler h("/nonexistent-proc-root");
  EXPECT_TRUE(h.sample(0).empty());
  EXPECT_TRUE(h.sample(kNsPerSec).empty());
}

TEST(Host, ProcessCpuAdvancesWithWork) {
  const Nanos before = process_cpu_ns();
  volatile double x = 0;
  for (int i = 0; i < 20'000'000 && process_cpu_ns() - before < 2 * kNsPerMs; ++i) x = x + 1.0;
  EXPECT_GT(process_cpu_ns(), before);
}

TEST(ClientStatsTest, TakeReportsIntervalMaxAndResets) {
  ClientStats cs;
  cs.record_lag(3 * kNsPerMs);
  cs.record_lag(7 * kNsPerMs);
  cs.record_lag(1 * kNsPerMs);
  cs.record_lag(-5);  // clamped
  cs.set_in_flight(12);
  auto r = cs.take();
  EXPECT_EQ(r.lag_max_ns, 7 * kNsPerMs);
  EXPECT_EQ(r.lag_last_ns, 0);
  EXPECT_EQ(r.lag_samples, 4u);
  EXPECT_EQ(r.in_flight, 12);
  EXPECT_FALSE(r.loop_thread_cpu_ns);
  r = cs.take();
  EXPECT_EQ(r.lag_max_ns, 0);
  EXPECT_EQ(r.lag_samples, 0u);

  cs.attach_loop_thread();
  EXPECT_TRUE(cs.take().loop_thread_cpu_ns);
  cs.detach_loop_thread();
  EXPECT_FALSE(cs.take().loop_thread_cpu_ns);
}

}  // namespace
}  // namespace inferscope::telemetry
