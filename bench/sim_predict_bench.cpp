// How much faster than real time `sim predict` runs: Llama-3-8B on H200-SXM, Poisson
// arrivals at 20 requests/s, 1000 prompt / 200 output tokens (docs/simulator.md).
// Counter `x_real_time` = simulated seconds per CPU second (CPU time, so a busy shared
// machine does not distort it).
#include <benchmark/benchmark.h>

#include "inferscope/load/arrivals.h"
#include "inferscope/load/runner.h"
#include "inferscope/sim/engine.h"
#include "inferscope/sim/profile.h"
#include "inferscope/sim/sim_target.h"
#include "inferscope/workload/tokenizer.h"
#include "inferscope/workload/workload.h"

namespace {
using namespace inferscope;

sim::EngineConfig config() {
  sim::EngineConfig c;
  c.gpu = sim::load_gpu_profile("H200-SXM", {});
  c.model = sim::load_model_profile("Llama-3-8B", {});
  return c;
}

constexpr int kRequests = 2000;  // 100 s of traffic at 20 req/s

// The engine alone: synthetic prompts, no load generator.
void BM_EngineOnly(benchmark::State& state) {
  const auto cfg = config();
  double simulated = 0;
  for (auto _ : state) {
    sim::Simulator s(cfg);
    ArrivalProcess arrivals(ArrivalKind::poisson, 20.0, 1.0, 42);
    for (int i = 0; i < kRequests; ++i) {
      const Nanos t = arrivals.next();
      s.run_until(t);
      s.submit(t, sim::SimRequestSpec{"", 1000, 200, true, 0});
    }
    while (auto t = s.next_event_time()) s.run_until(*t);
    simulated += ns_to_s(s.now());
  }
  state.counters["x_real_time"] = benchmark::Counter(simulated, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineOnly)->Unit(benchmark::kMillisecond);

// What `sim predict --rate 20 --requests 2000 --input-len 1000 --output-len 200` runs:
// the load generator, prompt text built for the sim tokenizer, the in-process target.
void BM_PredictThroughLoadGenerator(benchmark::State& state) {
  const auto cfg = config();
  workload::SimTextTokenizer tok;
  double simulated = 0;
  for (auto _ : state) {
    sim::SimTarget target(cfg);
    auto source = workload::make_session_source(workload::fixed_workload(1000, 200), 42, tok);
    LoadOptions opt;
    opt.mode = LoadMode::open;
    opt.rate_rps = 20;
    opt.requests = kRequests;
    opt.seed = 42;
    const LoadResult r = run_load(target, *source, opt);
    benchmark::DoNotOptimize(r.records.size());
    simulated += ns_to_s(target.clock().now_ns());
  }
  state.counters["x_real_time"] = benchmark::Counter(simulated, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PredictThroughLoadGenerator)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
