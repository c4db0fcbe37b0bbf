#pragma once
// Engine metric maps: every supported engine's Prometheus names translated into one
// normalised vocabulary, so analysis never needs to know which engine it looked at.
//
// Scalars (gauges unless marked counter):
//   running, waiting            requests in the running batch / waiting queue
//   kv_usage                    KV-cache blocks in use, fraction 0..1
//   prefix_queries, prefix_hits counters: prefix-cache look-ups and hits (tokens for vLLM
//                               and SGLang, blocks for TensorRT-LLM; use the ratio)
//   preemptions                 counter: requests preempted / retracted
//   prompt_tokens, generation_tokens   counters
//   spec_drafts, spec_accepted  counters: speculative draft tokens proposed / accepted
// Histograms (seconds): queue, prefill, decode, ttft, itl, e2e.
//
// The table of names per engine, with the source each was checked against, is in
// docs/telemetry.md. Pure functions; thread-safe.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/telemetry/prometheus.h"

namespace inferscope::telemetry {

// `sim` is the simulated engine; it publishes vLLM's current names, so a page is detected
// as `sim` only when it also carries an `inferscope_sim*` family.
enum class Engine : std::uint8_t { unknown, vllm, sglang, tgi, llamacpp, trtllm, sim };

std::string_view engine_name(Engine e);  // "vllm", "sglang", "tgi", "llamacpp", "trtllm", "sim", "unknown"
// Accepts the names above plus "llama.cpp", "tensorrt-llm", "trt-llm"; "auto" and ""
// give Engine::unknown (detect). Throws InputError(flag, …) on anything else.
Engine parse_engine(std::string_view name, const std::string& flag = "--engine");

// The engine whose metric prefix covers the most families; unknown when none does.
Engine detect_engine(const Scrape& scrape);

// Where an engine serves Prometheus text: base + "/metrics", but TensorRT-LLM's
// trtllm-serve uses "/prometheus/metrics" (its /metrics is JSON). A trailing '/' on base
// is dropped.
std::string default_metrics_url(std::string_view base_url, Engine engine);

// The vocabulary, in display order.
std::span<const std::string_view> scalar_keys();
std::span<const std::string_view> histogram_keys();
bool is_counter_key(std::string_view key);

struct NormalizedScrape {
  Engine engine = Engine::unknown;
  bool detected = false;                         // engine came from detect_engine()
  std::map<std::string, double> values;          // scalar key -> value (present ones only)
  std::map<std::string, HistogramSeries> histograms;  // histogram key -> merged series
  std::map<std::string, std::string> sources;    // key -> engine metric name it came from
  std::vector<std::string> notes;                // caveats for a reader (e.g. llama.cpp)
};

// Normalises one parsed page. engine == unknown: detect it. Series of one metric are
// summed across label sets (data-parallel ranks), except kv_usage, which is averaged.
NormalizedScrape normalize(const Scrape& scrape, Engine engine = Engine::unknown);

// The note every llama.cpp result carries.
extern const std::string_view kLlamaCppScrapeNote;

}  // namespace inferscope::telemetry
