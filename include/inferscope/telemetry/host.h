#pragma once
// Host readings from /proc: per-core CPU, memory, network bytes; and this process's CPU.
// Parsers are pure; HostSampler keeps the previous counters to turn them into rates.
//
// Threading: HostSampler is used from one thread at a time (the sampler thread).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "inferscope/core/clock.h"

namespace inferscope::telemetry {

// One "cpu"/"cpuN" line of /proc/stat, in USER_HZ ticks.
struct CpuTimes {
  std::string name;  // "cpu" (all cores) or "cpuN"
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  std::uint64_t total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
  std::uint64_t idle_all() const { return idle + iowait; }
};
std::vector<CpuTimes> parse_proc_stat(std::string_view text);
// Busy share of the ticks between two readings, percent 0..100; nullopt if no ticks passed.
std::optional<double> cpu_busy_pct(const CpuTimes& before, const CpuTimes& after);

struct MemInfo {
  std::uint64_t total_bytes = 0, available_bytes = 0;
};
std::optional<MemInfo> parse_meminfo(std::string_view text);

struct NetDev {
  std::string iface;
  std::uint64_t rx_bytes = 0, tx_bytes = 0;
};
std::vector<NetDev> parse_net_dev(std::string_view text);

// Series a host sample carries: named values in a stable order.
using Values = std::vector<std::pair<std::string, double>>;

class HostSampler {
 public:
  // Reads <proc_root>/stat, meminfo, net/dev. Tests point proc_root at recorded files.
  explicit HostSampler(std::string proc_root = "/proc");
  // Values at time t (ns on the run clock). Rates (CPU %, bytes/s) need a previous
  // reading and appear from the second call on. Keys: cpu_pct, cpu_max_core_pct,
  // cpu<N>_pct, mem_used_bytes, mem_total_bytes, net_rx_bytes_per_s, net_tx_bytes_per_s
  // (all interfaces but lo), lo_bytes_per_s. Missing files just leave their keys out.
  Values sample(Nanos t);

 private:
  std::string root_;
  std::optional<Nanos> prev_t_;
  std::vector<CpuTimes> prev_cpu_;
  std::optional<std::pair<std::uint64_t, std::uint64_t>> prev_net_;  // rx, tx (not lo)
  std::optional<std::uint64_t> prev_lo_;
};

// CPU time (user + system) this process has used so far, from getrusage(RUSAGE_SELF).
Nanos process_cpu_ns();

}  // namespace inferscope::telemetry
