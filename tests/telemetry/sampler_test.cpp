#include "inferscope/telemetry/sampler.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <thread>

#include "inferscope/core/errors.h"

namespace inferscope::telemetry {
namespace {

struct Page {
  double running, waiting, kv, prompt;
  double b01, b05, inf, sum;  // TTFT cumulative buckets (le 0.1, 0.5, +Inf) and sum
};

std::string vllm_page(const Page& p) {
  return fmt::format(
      "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{{engine=\"0\"}} {}\n"
      "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{{engine=\"0\"}} {}\n"
      "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{{engine=\"0\"}} {}\n"
      "# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{{engine=\"0\"}} {}\n"
      "# TYPE vllm:time_to_first_token_seconds histogram\n"
      "vllm:time_to_first_token_seconds_bucket{{engine=\"0\",le=\"0.1\"}} {}\n"
      "vllm:time_to_first_token_seconds_bucket{{engine=\"0\",le=\"0.5\"}} {}\n"
      "vllm:time_to_first_token_seconds_bucket{{engine=\"0\",le=\"+Inf\"}} {}\n"
      "vllm:time_to_first_token_seconds_count{{engine=\"0\"}} {}\n"
      "vllm:time_to_first_token_seconds_sum{{engine=\"0\"}} {}\n",
      p.running, p.waiting, p.kv, p.prompt, p.b01, p.b05, p.inf, p.inf, p.sum);
}

TelemetryConfig quiet_config() {
  TelemetryConfig cfg;
  cfg.gpu = GpuBackend::off;
  cfg.host = false;
  cfg.log = [](const std::string&) {};
  return cfg;
}

TEST(Sampler, WindowDeltasAndSeriesOnAManualClock) {
  const std::vector<Page> pages = {
      {2, 0, 0.1, 1000, 5, 10, 10, 2},   // t=0, before the window
      {4, 1, 0.2, 1000, 5, 10, 10, 2},   // window start, t=0.5
      {8, 3, 0.6, 3000, 10, 25, 30, 10},  // t=1
      {6, 2, 0.5, 5000, 15, 40, 50, 20},  // t=2
      {0, 0, 0.0, 9000, 25, 60, 70, 30},  // window end, t=2.5
  };
  std::size_t calls = 0;
  ManualClock clock(0);
  ClientStats client;
  auto cfg = quiet_config();
  cfg.metrics_url = "http://engine/metrics";
  cfg.client = &client;
  cfg.fetch = [&](const std::string& url) {
    EXPECT_EQ(url, "http://engine/metrics");
    return FetchResult{true, vllm_page(pages[std::min(calls++, pages.size() - 1)]), {}};
  };
  TelemetrySampler tel(cfg, clock);
  tel.start();  // virtual clock: no thread
  tel.sample_once();
  clock.set(kNsPerSec / 2);
  tel.mark_window_start();
  clock.set(kNsPerSec);
  client.record_lag(4 * kNsPerMs);
  tel.sample_once();
  clock.set(2 * kNsPerSec);
  tel.sample_once();
  clock.set(5 * kNsPerSec / 2);
  tel.mark_window_end();
  tel.stop();
  EXPECT_EQ(calls, 5u);

  const auto s = tel.summary();
  EXPECT_EQ(s["engine"]["engine"], "vllm");
  EXPECT_EQ(s["engine"]["detected"], true);
  EXPECT_EQ(s["engine"]["scrapes_ok"], 5);
  EXPECT_EQ(s["samples"]["engine"], 5);
  EXPECT_EQ(s["samples"]["client"], 3);
  EXPECT_EQ(s["window"]["marked"], true);
  // Series over the window [0.5 s, 2.5 s]: pages 2..5.
  const auto& running = s["series"]["engine.running"];
  EXPECT_EQ(running["n"], 4);
  EXPECT_DOUBLE_EQ(running["mean"].get<double>(), (4 + 8 + 6 + 0) / 4.0);
  EXPECT_DOUBLE_EQ(running["max"].get<double>(), 8);
  EXPECT_DOUBLE_EQ(running["last"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(s["series"]["engine.kv_usage"]["mean"].get<double>(), (0.2 + 0.6 + 0.5 + 0.0) / 4);
  EXPECT_DOUBLE_EQ(s["series"]["client.loop_lag_max_ms"]["max"].get<double>(), 4.0);
  // Counter delta between the window's snapshots.
  EXPECT_DOUBLE_EQ(s["engine_counters"]["prompt_tokens"]["delta"].get<double>(), 8000);
  // TTFT delta: buckets {20, 50, 60}, sum 28.
  const auto& ttft = s["engine_histograms"]["ttft"];
  EXPECT_DOUBLE_EQ(ttft["count"].get<double>(), 60);
  EXPECT_DOUBLE_EQ(ttft["sum"].get<double>(), 28);
  EXPECT_NEAR(ttft["p50"].get<double>(), 0.1 + 0.4 * 10.0 / 30.0, 1e-12);
  EXPECT_DOUBLE_EQ(ttft["p95"].get<double>(), 0.5);  // rank 57 lies in the +Inf bucket
  EXPECT_EQ(ttft["buckets"][2][0], "+Inf");
  EXPECT_EQ(ttft["source"], "vllm:time_to_first_token_seconds");
  EXPECT_EQ(ttft["reset"], false);

  // telemetry.jsonl: one object per record, times relative to the origin.
  const auto path = std::filesystem::path(::testing::TempDir()) / "inferscope_telemetry_test.jsonl";
  tel.write_jsonl(path, kNsPerSec / 2);
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(lines[0]["t"], -kNsPerSec / 2);
  EXPECT_EQ(lines[0]["source"], "engine");
  EXPECT_EQ(lines[0]["running"], 2);
  EXPECT_EQ(lines[0]["ttft_count"], 10);
  EXPECT_EQ(lines[1]["source"], "client");
  EXPECT_EQ(lines[2]["t"], 0);
  std::filesystem::remove(path);

  const auto m = tel.manifest();
  EXPECT_EQ(m["gpu_backend"], "none");
  EXPECT_EQ(m["engine"], "vllm");
}

TEST(Sampler, EngineFailuresAreNotedOnceAndTheRunGoesOn) {
  ManualClock clock(0);
  std::vector<std::string> logged;
  auto cfg = quiet_config();
  cfg.metrics_url = "http://engine/metrics";
  cfg.log = [&](const std::string& m) { logged.push_back(m); };
  int n = 0;
  cfg.fetch = [&](const std::string&) {
    ++n;
    if (n <= 2) return FetchResult{false, {}, "connection refused"};
    if (n == 3) return FetchResult{true, "<html>not metrics</html>", {}};
    return FetchResult{true, "process_cpu_seconds_total 1\n", {}};
  };
  TelemetrySampler tel(cfg, clock);
  tel.start();
  for (int i = 0; i < 5; ++i) {
    tel.sample_once();
    clock.advance(kNsPerSec);
  }
  tel.stop();
  const auto s = tel.summary();
  EXPECT_EQ(s["engine"]["scrapes_failed"], 3);
  EXPECT_EQ(s["engine"]["scrapes_ok"], 2);
  EXPECT_EQ(s["engine"]["engine"], "unknown");
  ASSERT_EQ(logged.size(), 3u);  // refused (once), not Prometheus, no known engine (once)
  EXPECT_NE(logged[0].find("connection refused"), std::string::npos);
  EXPECT_NE(logged[1].find("line 1"), std::string::npos);
  EXPECT_NE(logged[2].find("--engine"), std::string::npos);
  EXPECT_EQ(s["notes"].size(), 3u);
  EXPECT_TRUE(s["engine_histograms"].empty());
}

TEST(Sampler, RejectsANonPositiveInterval) {
  ManualClock clock;
  auto cfg = quiet_config();
  cfg.interval_ns = 0;
  EXPECT_THROW(TelemetrySampler(cfg, clock), InputError);
}

// Waits (bounded) until `pred` holds.
template <typename P>
bool eventually(P pred) {
  for (int i = 0; i < 500; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

TEST(Sampler, ThreadTakesWindowSnapshotsWithoutBlockingTheCaller) {
  std::atomic<int> calls{0};
  auto cfg = quiet_config();
  cfg.interval_ns = 20 * kNsPerMs;
  cfg.metrics_url = "http://engine/metrics";
  cfg.engine = Engine::vllm;
  cfg.fetch = [&](const std::string&) {
    const int i = calls.fetch_add(1);
    return FetchResult{true, vllm_page({1, 0, 0.5, 100.0 * i, 1.0 * i, 2.0 * i, 2.0 * i, 0.1 * i}), {}};
  };
  ClientStats client;
  cfg.client = &client;
  TelemetrySampler tel(cfg, SteadyClock::instance());
  tel.start();
  ASSERT_TRUE(eventually([&] { return calls.load() >= 2; }));
  tel.mark_window_start();
  ASSERT_TRUE(eventually([&] { return calls.load() >= 5; }));
  tel.mark_window_end();
  tel.stop();
  const auto s = tel.summary();
  EXPECT_EQ(s["engine"]["detected"], false);
  const double delta = s["engine_counters"]["prompt_tokens"]["delta"].get<double>();
  EXPECT_GT(delta, 0);
  EXPECT_EQ(static_cast<long>(delta) % 100, 0);
  EXPECT_GT(s["engine_histograms"]["ttft"]["count"].get<double>(), 0);
  // On a real clock the client series carry CPU shares.
  EXPECT_TRUE(s["series"].contains("client.process_cpu_pct"));
}

// A loopback HTTP/1.1 server that answers every GET with `body`, for at most `max_conns`
// connections and `deadline` overall.
class TinyServer {
 public:
  TinyServer(std::string body, int max_conns) : body_(std::move(body)), max_conns_(max_conns) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0) return;
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~TinyServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  int served() const { return served_.load(); }

 private:
  void serve() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!stop_ && served_ < max_conns_ && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      std::string req;
      char buf[2048];
      pollfd pc{c, POLLIN, 0};
      while (req.find("\r\n\r\n") == std::string::npos && ::poll(&pc, 1, 1000) > 0) {
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        req.append(buf, static_cast<std::size_t>(n));
      }
      const std::string resp = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " +
                               std::to_string(body_.size()) + "\r\nConnection: close\r\n\r\n" + body_;
      std::size_t off = 0;
      while (off < resp.size()) {
        const ssize_t n = ::write(c, resp.data() + off, resp.size() - off);
        if (n <= 0) break;
        off += static_cast<std::size_t>(n);
      }
      ::close(c);
      ++served_;
    }
  }
  std::string body_;
  int max_conns_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> served_{0};
  std::thread thread_;
};

TEST(Sampler, ScrapesARecordedLlamaCppPageOverLoopback) {
  std::ifstream in(std::string(INFERSCOPE_TEST_DATA) + "/telemetry/llamacpp_metrics.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  TinyServer server(ss.str(), 20);
  ASSERT_GT(server.port(), 0);
  auto cfg = quiet_config();
  cfg.interval_ns = 20 * kNsPerMs;
  cfg.metrics_url = default_metrics_url(fmt::format("http://127.0.0.1:{}", server.port()), Engine::unknown);
  TelemetrySampler tel(cfg, SteadyClock::instance());
  tel.start();
  ASSERT_TRUE(eventually([&] { return server.served() >= 3; }));
  tel.stop();
  const auto s = tel.summary();
  EXPECT_EQ(s["engine"]["engine"], "llamacpp");
  EXPECT_GE(s["engine"]["scrapes_ok"].get<int>(), 3);
  EXPECT_DOUBLE_EQ(s["series"]["engine.generation_tokens"]["last"].get<double>(), 432);
  bool noted = false;
  for (const auto& n : s["notes"]) noted |= n.get<std::string>() == kLlamaCppScrapeNote;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace inferscope::telemetry
