// `sim serve` timing accuracy: how far from their simulated times the server writes tokens
// while it holds many concurrent streams. Starts the simulated engine (Llama-3-8B on
// H200-SXM) on a loopback port with a ground-truth log, drives it with the real HTTP
// client in closed loop, and reports each request's worst |write time − simulated time|.
//
//   bench_sim_serve [--streams 2000] [--requests 4000] [--input-len 100] [--output-len 100]
//
// The client shares the machine: read its validity line before trusting the server's
// numbers (a saturated client delays reads, not the server's writes, but competes for CPU).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "inferscope/client/http_target.h"
#include "inferscope/load/runner.h"
#include "inferscope/sim/profile.h"
#include "inferscope/sim/server.h"
#include "inferscope/stats/summary.h"
#include "inferscope/workload/tokenizer.h"
#include "inferscope/workload/workload.h"

namespace {

long flag(int argc, char** argv, std::string_view name, long def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (name == argv[i]) return std::strtol(argv[i + 1], nullptr, 10);
  return def;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace inferscope;
  const long streams = flag(argc, argv, "--streams", 2000);
  const long requests = flag(argc, argv, "--requests", 2 * streams);
  const long input_len = flag(argc, argv, "--input-len", 100);
  const long output_len = flag(argc, argv, "--output-len", 100);

  // Two descriptors per stream (client and server in one process).
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);

  const std::string truth =
      (std::filesystem::temp_directory_path() / ("inferscope-serve-truth-" + std::to_string(::getpid()) + ".jsonl")).string();
  sim::EngineConfig cfg;
  cfg.gpu = sim::load_gpu_profile("H200-SXM", {});
  cfg.model = sim::load_model_profile("Llama-3-8B", {});
  sim::ServeOptions so;
  so.port = 0;
  so.ground_truth_path = truth;
  LoadResult result;
  {
    sim::SimServer server(cfg, so);
    server.start();
    HttpTargetOptions ho;
    ho.base_url = server.base_url();
    ho.protocol.model = cfg.model_name();
    ho.proxy = "";
    auto target = make_http_target(ho, SteadyClock::instance());
    workload::SimTextTokenizer tok;
    auto source = workload::make_session_source(workload::fixed_workload(input_len, output_len), 1, tok);
    LoadOptions lo;
    lo.concurrency = static_cast<int>(streams);
    lo.requests = static_cast<std::size_t>(requests);
    result = run_load(*target, *source, lo);
    server.stop();
  }
  std::size_t failed = 0;
  for (const auto& r : result.records) failed += !r.ok();
  std::vector<double> lag_ms;
  std::ifstream in(truth);
  for (std::string line; std::getline(in, line);)
    lag_ms.push_back(static_cast<double>(nlohmann::json::parse(line).value("max_lag_ns", 0)) / 1e6);
  std::filesystem::remove(truth);
  const Summary s = summarize(lag_ms);
  std::printf("streams %ld, requests %zu (%zu failed), %ld in / %ld out tokens\n", streams, result.records.size(), failed,
              input_len, output_len);
  std::printf("worst |write - simulated| per request, ms: p50 %.2f  p90 %.2f  p99 %.2f  max %.2f  (%zu requests)\n",
              s.p50, s.p90, s.p99, s.max, s.count);
  const auto reasons = check_load_validity(result);
  std::printf("client: %s\n", reasons.empty() ? "valid" : reasons.front().c_str());
  return failed == 0 ? 0 : 1;
}
