// Cost of summarising latency samples (runs once per report, not on the hot path).
#include <benchmark/benchmark.h>

#include <random>

#include "inferscope/stats/summary.h"

static void BM_Summarize(benchmark::State& state) {
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> d(3, 1);
  std::vector<double> v(static_cast<std::size_t>(state.range(0)));
  for (auto& x : v) x = d(rng);
  for (auto _ : state) benchmark::DoNotOptimize(inferscope::summarize(v));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Summarize)->Arg(1000)->Arg(100000);
BENCHMARK_MAIN();
