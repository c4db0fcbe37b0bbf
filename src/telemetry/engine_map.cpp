#include "inferscope/telemetry/engine_map.h"

#include <array>
#include <cmath>

#include "inferscope/core/errors.h"

namespace inferscope::telemetry {

const std::string_view kLlamaCppScrapeNote =
    "llama.cpp resets its throughput window (prompt_tokens_seconds, predicted_tokens_seconds) at "
    "every /metrics scrape: scrape it from one place only while a run is measured";

namespace {

constexpr std::array<std::string_view, 10> kScalarKeys = {
    "running",     "waiting",       "kv_usage",          "prefix_queries", "prefix_hits",
    "preemptions", "prompt_tokens", "generation_tokens", "spec_drafts",    "spec_accepted"};
constexpr std::array<std::string_view, 6> kHistogramKeys = {"queue", "prefill", "decode", "ttft", "itl", "e2e"};

enum class From : std::uint8_t { value, histogram_sum };

// One way to read a normalised metric: a family (plus an optional second family added to
// it), read as its value or as the _sum of a histogram.
struct Candidate {
  std::string_view name;
  std::string_view plus = {};
  From from = From::value;
};

struct Rule {
  std::string_view key;
  std::vector<Candidate> candidates;  // first present wins
};

struct EngineMap {
  Engine engine;
  std::vector<std::string_view> prefixes;
  std::vector<Rule> rules;
};

// Names checked against each engine's source; see docs/telemetry.md for versions.
const std::vector<EngineMap>& engine_maps() {
  static const std::vector<EngineMap> maps = [] {
    std::vector<EngineMap> m;
    // vLLM (v1 engine, vllm/v1/metrics/loggers.py). Counters are declared without
    // _total and exposed with it; Scrape::find accepts both. The renamed metrics are
    // listed new name first.
    const std::vector<Rule> vllm = {
        {"running", {{"vllm:num_requests_running"}}},
        {"waiting", {{"vllm:num_requests_waiting"}}},
        {"kv_usage", {{"vllm:kv_cache_usage_perc"}, {"vllm:gpu_cache_usage_perc"}}},
        {"prefix_queries", {{"vllm:prefix_cache_queries"}, {"vllm:gpu_prefix_cache_queries"}}},
        {"prefix_hits", {{"vllm:prefix_cache_hits"}, {"vllm:gpu_prefix_cache_hits"}}},
        {"preemptions", {{"vllm:num_preemptions"}}},
        {"prompt_tokens", {{"vllm:prompt_tokens"}}},
        {"generation_tokens", {{"vllm:generation_tokens"}}},
        {"spec_drafts", {{"vllm:spec_decode_num_draft_tokens"}}},
        {"spec_accepted", {{"vllm:spec_decode_num_accepted_tokens"}}},
        {"queue", {{"vllm:request_queue_time_seconds"}}},
        {"prefill", {{"vllm:request_prefill_time_seconds"}}},
        {"decode", {{"vllm:request_decode_time_seconds"}}},
        {"ttft", {{"vllm:time_to_first_token_seconds"}}},
        {"itl", {{"vllm:inter_token_latency_seconds"}, {"vllm:time_per_output_token_seconds"}}},
        {"e2e", {{"vllm:e2e_request_latency_seconds"}}},
    };
    m.push_back({Engine::vllm, {"vllm:"}, vllm});
    m.push_back({Engine::sim, {"inferscope_sim"}, vllm});
    // SGLang (python/sglang/srt/metrics/collector.py). Prefix-cache look-ups are the
    // prompt tokens, hits the cached prompt tokens.
    m.push_back({Engine::sglang,
                 {"sglang:"},
                 {
                     {"running", {{"sglang:num_running_reqs"}}},
                     {"waiting", {{"sglang:num_queue_reqs"}}},
                     {"kv_usage", {{"sglang:token_usage"}}},
                     {"prefix_queries", {{"sglang:prompt_tokens"}}},
                     {"prefix_hits", {{"sglang:cached_tokens"}}},
                     {"preemptions", {{"sglang:num_retracted_requests"}}},
                     {"prompt_tokens", {{"sglang:prompt_tokens"}}},
                     {"generation_tokens", {{"sglang:generation_tokens"}}},
                     {"queue", {{"sglang:queue_time_seconds"}}},
                     {"ttft", {{"sglang:time_to_first_token_seconds"}}},
                     {"itl", {{"sglang:inter_token_latency_seconds"}, {"sglang:time_per_output_token_seconds"}}},
                     {"e2e", {{"sglang:e2e_request_latency_seconds"}}},
                 }});
    // TGI (router/src/server.rs, backends/v3): metrics-rs names, counters without
    // _total. Token counts only exist as per-request histograms: their _sum is the total.
    m.push_back({Engine::tgi,
                 {"tgi_"},
                 {
                     {"running", {{"tgi_batch_current_size"}}},
                     {"waiting", {{"tgi_queue_size"}}},
                     {"prompt_tokens", {{"tgi_request_input_length", {}, From::histogram_sum}}},
                     {"generation_tokens", {{"tgi_request_generated_tokens", {}, From::histogram_sum}}},
                     {"queue", {{"tgi_request_queue_duration"}}},
                     {"itl", {{"tgi_request_mean_time_per_token_duration"}}},
                     {"e2e", {{"tgi_request_duration"}}},
                 }});
    // llama.cpp server (tools/server/server.cpp, --metrics). prompt_tokens counts only
    // prompt tokens that were not served from the cache.
    m.push_back({Engine::llamacpp,
                 {"llamacpp:"},
                 {
                     {"running", {{"llamacpp:requests_processing"}}},
                     {"waiting", {{"llamacpp:requests_deferred"}}},
                     {"kv_usage", {{"llamacpp:kv_cache_usage_ratio"}}},
                     {"prompt_tokens", {{"llamacpp:prompt_tokens_total"}}},
                     {"generation_tokens", {{"llamacpp:tokens_predicted_total"}}},
                 }});
    // TensorRT-LLM trtllm-serve (tensorrt_llm/metrics/collector.py), served at
    // /prometheus/metrics. Prefix reuse is counted in blocks.
    m.push_back({Engine::trtllm,
                 {"trtllm_", "trtllm:"},
                 {
                     {"running", {{"trtllm_num_requests_running"}}},
                     {"waiting", {{"trtllm_num_requests_waiting"}}},
                     {"kv_usage", {{"trtllm_kv_cache_utilization"}}},
                     {"prefix_queries", {{"trtllm_kv_cache_reused_blocks", "trtllm_kv_cache_missed_blocks"}}},
                     {"prefix_hits", {{"trtllm_kv_cache_reused_blocks"}}},
                     {"prompt_tokens", {{"trtllm_prompt_tokens"}}},
                     {"generation_tokens", {{"trtllm_generation_tokens"}}},
                     {"spec_drafts", {{"trtllm_spec_decode_num_draft_tokens"}, {"trtllm_spec_decode_drafted_tokens"}}},
                     {"spec_accepted",
                      {{"trtllm_spec_decode_num_accepted_tokens"}, {"trtllm_spec_decode_accepted_tokens"}}},
                     {"queue", {{"trtllm_request_queue_time_seconds"}}},
                     {"prefill", {{"trtllm_request_prefill_time_seconds"}}},
                     {"decode", {{"trtllm_request_decode_time_seconds"}}},
                     {"ttft", {{"trtllm_time_to_first_token_seconds"}}},
                     {"itl", {{"trtllm_time_per_output_token_seconds"}}},
                     {"e2e", {{"trtllm_e2e_request_latency_seconds"}}},
                 }});
    return m;
  }();
  return maps;
}

const EngineMap* map_for(Engine e) {
  for (const auto& m : engine_maps())
    if (m.engine == e) return &m;
  return nullptr;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Dynamo re-exports TensorRT-LLM's metrics as "trtllm:x" instead of "trtllm_x".
const MetricFamily* find_family(const Scrape& scrape, std::string_view name) {
  if (const auto* f = scrape.find(name)) return f;
  if (starts_with(name, "trtllm_")) return scrape.find("trtllm:" + std::string(name.substr(7)));
  return nullptr;
}

// Sum (or mean) over the value samples of a family; nullopt if it has none.
std::optional<double> family_value(const MetricFamily& f, bool average) {
  double total = 0;
  std::size_t n = 0;
  for (const auto& s : f.samples) {
    if (f.type == MetricType::counter && s.name.ends_with("_created")) continue;
    if (f.type == MetricType::histogram || f.type == MetricType::summary) continue;
    total += s.value;
    ++n;
  }
  if (n == 0) return std::nullopt;
  return average ? total / static_cast<double>(n) : total;
}

// The value of one candidate; `source` gets the family names actually read.
std::optional<double> read_candidate(const Scrape& scrape, const Candidate& c, bool average, std::string* source) {
  const auto* f = find_family(scrape, c.name);
  if (!f) return std::nullopt;
  *source = f->name + (c.from == From::histogram_sum ? "_sum" : "");
  std::optional<double> v;
  if (c.from == From::histogram_sum) {
    const auto series = histogram_series(*f);
    if (const auto merged = merge_histograms(series)) v = merged->sum;
  } else {
    v = family_value(*f, average);
  }
  if (!v || c.plus.empty()) return v;
  const auto* g = find_family(scrape, c.plus);
  if (!g) return std::nullopt;
  const auto w = family_value(*g, average);
  if (!w) return std::nullopt;
  *source += " + " + g->name;
  return *v + *w;
}

}  // namespace

std::string_view engine_name(Engine e) {
  switch (e) {
    case Engine::vllm: return "vllm";
    case Engine::sglang: return "sglang";
    case Engine::tgi: return "tgi";
    case Engine::llamacpp: return "llamacpp";
    case Engine::trtllm: return "trtllm";
    case Engine::sim: return "sim";
    case Engine::unknown: return "unknown";
  }
  return "unknown";
}

Engine parse_engine(std::string_view name, const std::string& flag) {
  if (name.empty() || name == "auto") return Engine::unknown;
  if (name == "vllm") return Engine::vllm;
  if (name == "sglang") return Engine::sglang;
  if (name == "tgi") return Engine::tgi;
  if (name == "llamacpp" || name == "llama.cpp") return Engine::llamacpp;
  if (name == "trtllm" || name == "tensorrt-llm" || name == "trt-llm") return Engine::trtllm;
  if (name == "sim") return Engine::sim;
  throw InputError(flag, 0, "", "unknown engine '" + std::string(name) +
                                    "' (expected auto, vllm, sglang, tgi, llamacpp, trtllm or sim)");
}

Engine detect_engine(const Scrape& scrape) {
  // The sim marker wins outright: its other families are vLLM's.
  for (const auto& f : scrape.families)
    if (starts_with(f.name, "inferscope_sim")) return Engine::sim;
  Engine best = Engine::unknown;
  std::size_t best_count = 0;
  for (const auto& m : engine_maps()) {
    if (m.engine == Engine::sim) continue;
    std::size_t count = 0;
    for (const auto& f : scrape.families)
      for (const auto p : m.prefixes)
        if (starts_with(f.name, p)) {
          ++count;
          break;
        }
    if (count > best_count) {
      best = m.engine;
      best_count = count;
    }
  }
  return best;
}

std::string default_metrics_url(std::string_view base_url, Engine engine) {
  while (!base_url.empty() && base_url.back() == '/') base_url.remove_suffix(1);
  return std::string(base_url) + (engine == Engine::trtllm ? "/prometheus/metrics" : "/metrics");
}

std::span<const std::string_view> scalar_keys() { return kScalarKeys; }
std::span<const std::string_view> histogram_keys() { return kHistogramKeys; }

bool is_counter_key(std::string_view key) {
  return key == "prefix_queries" || key == "prefix_hits" || key == "preemptions" || key == "prompt_tokens" ||
         key == "generation_tokens" || key == "spec_drafts" || key == "spec_accepted";
}

NormalizedScrape normalize(const Scrape& scrape, Engine engine) {
  NormalizedScrape out;
  if (engine == Engine::unknown) {
    engine = detect_engine(scrape);
    out.detected = true;
  }
  out.engine = engine;
  const EngineMap* m = map_for(engine);
  if (!m) {
    out.notes.emplace_back("no known engine metrics on this page");
    return out;
  }
  const auto is_hist = [](std::string_view key) {
    for (auto k : kHistogramKeys)
      if (k == key) return true;
    return false;
  };
  for (const auto& rule : m->rules) {
    for (const auto& c : rule.candidates) {
      if (is_hist(rule.key)) {
        const auto* f = find_family(scrape, c.name);
        if (!f) continue;
        std::size_t skipped = 0;
        const auto series = histogram_series(*f);
        auto merged = merge_histograms(series, &skipped);
        if (!merged || merged->buckets.empty()) continue;
        if (skipped > 0)
          out.notes.push_back(f->name + ": " + std::to_string(skipped) + " series with other buckets left out");
        out.histograms.emplace(std::string(rule.key), std::move(*merged));
        out.sources.emplace(std::string(rule.key), f->name);
        break;
      }
      std::string src;
      const auto v = read_candidate(scrape, c, rule.key == "kv_usage", &src);
      if (!v) continue;
      out.values.emplace(std::string(rule.key), *v);
      out.sources.emplace(std::string(rule.key), std::move(src));
      break;
    }
  }
  if (engine == Engine::llamacpp) out.notes.emplace_back(kLlamaCppScrapeNote);
  return out;
}

}  // namespace inferscope::telemetry
