// Telemetry against the simulated engine under load, scraped over HTTP like a real vLLM:
// KV usage and waiting requests must rise with concurrency.
#include <gtest/gtest.h>

#include "../sim/sim_test_util.h"
#include "inferscope/client/http_target.h"
#include "inferscope/load/runner.h"
#include "inferscope/sim/server.h"
#include "inferscope/telemetry/engine_map.h"
#include "inferscope/telemetry/sampler.h"
#include "inferscope/workload/tokenizer.h"
#include "inferscope/workload/workload.h"

namespace inferscope::telemetry {
namespace {

struct Observed {
  double kv_mean = 0, kv_max = 0, waiting_max = 0;
  nlohmann::json summary;
};

// One closed-loop run at `concurrency` against a fresh sim server (time scaled ×4 so the
// test is quick), sampled every 20 ms of wall time.
Observed run_at(int concurrency) {
  sim::EngineConfig cfg = sim::testing::make_config();
  // A small KV pool and a small step budget so the engine fills and queues.
  cfg.num_gpu_blocks_override = 2048;  // 32k tokens
  cfg.max_num_batched_tokens = 2048;
  sim::ServeOptions so;
  so.port = 0;
  so.time_scale = 4;
  sim::SimServer server(cfg, so);
  server.start();

  HttpTargetOptions ho;
  ho.base_url = server.base_url();
  ho.protocol.model = cfg.model_name();
  auto target = make_http_target(ho, SteadyClock::instance());
  TelemetryConfig tc;
  tc.interval_ns = 20 * kNsPerMs;
  tc.metrics_url = server.base_url() + "/metrics";
  tc.gpu = GpuBackend::off;
  tc.host = false;
  tc.log = [](const std::string&) {};
  TelemetrySampler sampler(tc, SteadyClock::instance());
  sampler.start();

  workload::SimTextTokenizer tok;
  auto source = workload::make_session_source(workload::fixed_workload(1024, 64), 7, tok);
  LoadOptions lo;
  lo.concurrency = concurrency;
  lo.requests = static_cast<std::size_t>(2 * concurrency);
  lo.on_measure_start = [&] { sampler.mark_window_start(); };
  lo.on_measure_end = [&] { sampler.mark_window_end(); };
  const LoadResult r = run_load(*target, *source, lo);
  sampler.stop();
  server.stop();
  for (const auto& rec : r.records) EXPECT_TRUE(rec.ok()) << rec.error_detail;

  Observed o;
  o.summary = sampler.summary();
  const auto& series = o.summary.at("series");
  o.kv_mean = series.at("engine.kv_usage").at("mean").get<double>();
  o.kv_max = series.at("engine.kv_usage").at("max").get<double>();
  o.waiting_max = series.at("engine.waiting").at("max").get<double>();
  return o;
}

TEST(TelemetrySimUnderLoad, KvUsageAndWaitingRiseWithConcurrency) {
  const Observed low = run_at(2);
  const Observed high = run_at(32);
  // 2 × ~1.1k tokens of 32k blocks ≈ 7 %; 32 sequences need more than the pool: near full.
  EXPECT_GT(high.kv_max, 2 * low.kv_max) << high.summary.dump();
  EXPECT_GT(high.kv_mean, low.kv_mean);
  EXPECT_GT(high.kv_max, 0.5);
  // 32 prompts of 1024 tokens against a 2048-token step budget: most of them wait.
  EXPECT_GE(high.waiting_max, 8);
  EXPECT_LE(low.waiting_max, 2);
  // The sampler detected the engine from its page (the sim's marker family) and kept its
  // histograms.
  EXPECT_EQ(high.summary.at("engine").at("engine"), "sim");
  EXPECT_TRUE(high.summary.at("engine_histograms").contains("ttft"));
}

}  // namespace
}  // namespace inferscope::telemetry
