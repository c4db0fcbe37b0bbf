#include "inferscope/telemetry/engine_map.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "inferscope/core/errors.h"

namespace inferscope::telemetry {
namespace {

Scrape load(const std::string& name) {
  std::ifstream in(std::string(INFERSCOPE_TEST_DATA) + "/telemetry/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  auto r = parse_prometheus(ss.str());
  EXPECT_TRUE(r) << name << ":" << (r ? 0 : r.error().line) << " " << (r ? "" : r.error().message);
  return r ? *r : Scrape{};
}

double p(const NormalizedScrape& n, const std::string& key, double q) {
  return histogram_quantile(q, n.histograms.at(key).buckets);
}

TEST(EngineMap, VllmCurrentNames) {
  const auto s = load("vllm_new.txt");
  EXPECT_EQ(detect_engine(s), Engine::vllm);
  const auto n = normalize(s);
  EXPECT_TRUE(n.detected);
  EXPECT_EQ(n.engine, Engine::vllm);
  // Two data-parallel engines: counts add up, KV usage is averaged.
  EXPECT_EQ(n.values.at("running"), 16);
  EXPECT_EQ(n.values.at("waiting"), 3);
  EXPECT_DOUBLE_EQ(n.values.at("kv_usage"), 0.5);
  EXPECT_EQ(n.values.at("prefix_queries"), 81920);
  EXPECT_EQ(n.values.at("prefix_hits"), 20480);
  EXPECT_EQ(n.values.at("preemptions"), 2);
  EXPECT_EQ(n.sources.at("preemptions"), "vllm:num_preemptions_total");
  EXPECT_EQ(n.values.at("prompt_tokens"), 81920);
  EXPECT_EQ(n.values.at("generation_tokens"), 25600);
  EXPECT_EQ(n.values.at("spec_drafts"), 900);
  EXPECT_EQ(n.values.at("spec_accepted"), 630);
  EXPECT_EQ(n.sources.at("kv_usage"), "vllm:kv_cache_usage_perc");
  EXPECT_EQ(n.sources.at("itl"), "vllm:inter_token_latency_seconds");
  for (const auto key : histogram_keys()) EXPECT_TRUE(n.histograms.contains(std::string(key))) << key;
  // TTFT: 100 requests, 40 by 0.06 s, 70 by 0.08 s, 90 by 0.1 s, 98 by 0.25 s, 100 by 0.5 s.
  EXPECT_EQ(n.histograms.at("ttft").count, 100);
  EXPECT_DOUBLE_EQ(n.histograms.at("ttft").sum, 6.5);
  EXPECT_NEAR(p(n, "ttft", 0.50), 0.06 + 0.02 * 10 / 30, 1e-12);
  EXPECT_NEAR(p(n, "ttft", 0.95), 0.1 + 0.15 * 5 / 8, 1e-12);
  EXPECT_NEAR(p(n, "ttft", 0.99), 0.375, 1e-12);
  // ITL: 1000 gaps, 200 by 10 ms, 900 by 25 ms: p50 = 10 ms + 15 ms · 300/700.
  EXPECT_NEAR(p(n, "itl", 0.50), 0.01 + 0.015 * 300 / 700, 1e-12);
  // Queue: 80 by 0.3 s, 90 by 0.5 s, 100 by 0.8 s: p95 = 0.5 + 0.3 · 5/10.
  EXPECT_NEAR(p(n, "queue", 0.95), 0.65, 1e-12);
  EXPECT_TRUE(n.notes.empty());
}

TEST(EngineMap, VllmOldNames) {
  const auto n = normalize(load("vllm_old.txt"));
  EXPECT_EQ(n.engine, Engine::vllm);
  EXPECT_EQ(n.values.at("running"), 7);
  EXPECT_EQ(n.values.at("waiting"), 11);
  EXPECT_DOUBLE_EQ(n.values.at("kv_usage"), 0.96875);
  EXPECT_EQ(n.sources.at("kv_usage"), "vllm:gpu_cache_usage_perc");
  EXPECT_EQ(n.values.at("prefix_queries"), 4096);
  EXPECT_EQ(n.values.at("prefix_hits"), 1024);
  EXPECT_EQ(n.values.at("preemptions"), 37);
  EXPECT_EQ(n.sources.at("itl"), "vllm:time_per_output_token_seconds");
  // 500 of 1000 by 25 ms, all by 50 ms: the median is the 25 ms bound exactly.
  EXPECT_NEAR(p(n, "itl", 0.5), 0.025, 1e-12);
  EXPECT_FALSE(n.values.contains("spec_drafts"));
  EXPECT_FALSE(n.histograms.contains("queue"));
}

TEST(EngineMap, SGLang) {
  const auto n = normalize(load("sglang.txt"));
  EXPECT_EQ(n.engine, Engine::sglang);
  EXPECT_EQ(n.values.at("running"), 24);
  EXPECT_EQ(n.values.at("waiting"), 5);
  EXPECT_DOUBLE_EQ(n.values.at("kv_usage"), 0.62);
  EXPECT_EQ(n.values.at("prefix_queries"), 8128902);
  EXPECT_EQ(n.values.at("prefix_hits"), 2032225);
  EXPECT_EQ(n.values.at("preemptions"), 3);
  EXPECT_EQ(n.values.at("generation_tokens"), 7557572);
  // TTFT: 10/30/60/80/90/95/100 of 100 by 0.1/0.2/0.4/0.6/0.8/1/2 s.
  EXPECT_NEAR(p(n, "ttft", 0.5), 0.2 + 0.2 * 20 / 30, 1e-12);
  // ITL: 100 by 10 ms, 400 by 15 ms, 800 by 20 ms of 1000.
  EXPECT_NEAR(p(n, "itl", 0.5), 0.015 + 0.005 * 100 / 400, 1e-12);
  // Queue time has a 0 bucket: 40 of 100 waited no time at all.
  EXPECT_DOUBLE_EQ(p(n, "queue", 0.3), 0.0);
  EXPECT_NEAR(p(n, "queue", 0.5), 0.1 * 10 / 30, 1e-12);
  EXPECT_FALSE(n.histograms.contains("prefill"));
}

TEST(EngineMap, Tgi) {
  const auto n = normalize(load("tgi.txt"));
  EXPECT_EQ(n.engine, Engine::tgi);
  EXPECT_EQ(n.values.at("running"), 32);
  EXPECT_EQ(n.values.at("waiting"), 6);
  EXPECT_EQ(n.values.at("prompt_tokens"), 120360);
  EXPECT_EQ(n.values.at("generation_tokens"), 30208);
  EXPECT_EQ(n.sources.at("prompt_tokens"), "tgi_request_input_length_sum");
  EXPECT_EQ(n.histograms.at("queue").count, 118);
  EXPECT_EQ(n.histograms.at("e2e").count, 118);
  EXPECT_FALSE(n.values.contains("kv_usage"));
}

TEST(EngineMap, TensorRtLlm) {
  const auto n = normalize(load("trtllm.txt"));
  EXPECT_EQ(n.engine, Engine::trtllm);
  EXPECT_EQ(n.values.at("running"), 16);
  EXPECT_EQ(n.values.at("waiting"), 2);
  EXPECT_DOUBLE_EQ(n.values.at("kv_usage"), 0.71);
  EXPECT_EQ(n.values.at("prefix_hits"), 300);
  EXPECT_EQ(n.sources.at("prefix_queries"), "trtllm_kv_cache_reused_blocks_total + trtllm_kv_cache_missed_blocks_total");
  EXPECT_EQ(n.values.at("prefix_queries"), 1500);  // reused + missed blocks
  EXPECT_EQ(n.values.at("spec_drafts"), 4000);
  EXPECT_EQ(n.values.at("spec_accepted"), 2600);
  for (const auto key : histogram_keys()) EXPECT_TRUE(n.histograms.contains(std::string(key))) << key;
  // Prefill: 16 by 25 ms, 48 by 50 ms, 64 by 100 ms: p50 = 25 ms + 25 ms · 16/32.
  EXPECT_NEAR(p(n, "prefill", 0.5), 0.0375, 1e-12);
}

TEST(EngineMap, LlamaCppRecordedPage) {
  const auto n = normalize(load("llamacpp_metrics.txt"));
  EXPECT_EQ(n.engine, Engine::llamacpp);
  EXPECT_EQ(n.values.at("running"), 0);
  EXPECT_EQ(n.values.at("waiting"), 0);
  EXPECT_EQ(n.values.at("prompt_tokens"), 99);
  EXPECT_EQ(n.values.at("generation_tokens"), 432);
  EXPECT_FALSE(n.values.contains("kv_usage"));  // this build does not export it
  EXPECT_TRUE(n.histograms.empty());
  ASSERT_EQ(n.notes.size(), 1u);
  EXPECT_EQ(n.notes[0], kLlamaCppScrapeNote);

  const auto after = normalize(load("llamacpp_metrics_after_bench_small.txt"));
  EXPECT_EQ(after.values.at("prompt_tokens"), 7668);
  EXPECT_EQ(after.values.at("generation_tokens"), 2176);
}

TEST(EngineMap, OverrideAndSimMarker) {
  const auto s = load("vllm_new.txt");
  // --engine sim on a vLLM-named page reads it with the same names.
  const auto as_sim = normalize(s, Engine::sim);
  EXPECT_FALSE(as_sim.detected);
  EXPECT_EQ(as_sim.engine, Engine::sim);
  EXPECT_EQ(as_sim.values.at("running"), 16);
  // Forcing the wrong engine finds nothing rather than guessing.
  const auto wrong = normalize(s, Engine::sglang);
  EXPECT_TRUE(wrong.values.empty());

  auto marked = parse_prometheus("# TYPE inferscope_sim_info gauge\ninferscope_sim_info 1\nvllm:num_requests_running 5\n");
  ASSERT_TRUE(marked);
  EXPECT_EQ(detect_engine(*marked), Engine::sim);
  EXPECT_EQ(normalize(*marked).values.at("running"), 5);

  auto unknown = parse_prometheus("process_cpu_seconds_total 3\n");
  ASSERT_TRUE(unknown);
  const auto u = normalize(*unknown);
  EXPECT_EQ(u.engine, Engine::unknown);
  EXPECT_EQ(u.notes.size(), 1u);
}

TEST(EngineMap, NamesUrlsAndFlags) {
  EXPECT_EQ(parse_engine("auto"), Engine::unknown);
  EXPECT_EQ(parse_engine("llama.cpp"), Engine::llamacpp);
  EXPECT_EQ(parse_engine("tensorrt-llm"), Engine::trtllm);
  EXPECT_EQ(engine_name(Engine::sglang), "sglang");
  EXPECT_THROW(parse_engine("ollama"), InputError);
  EXPECT_EQ(default_metrics_url("http://h:8000/", Engine::vllm), "http://h:8000/metrics");
  EXPECT_EQ(default_metrics_url("http://h:8000", Engine::trtllm), "http://h:8000/prometheus/metrics");
  EXPECT_TRUE(is_counter_key("prompt_tokens"));
  EXPECT_FALSE(is_counter_key("kv_usage"));
}

}  // namespace
}  // namespace inferscope::telemetry
