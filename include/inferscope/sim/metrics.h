#pragma once
// The simulated engine's Prometheus metrics, named and bucketed as vLLM (V1, ≥ 0.11)
// exposes them, so telemetry scrapes the sim exactly like a real server.
// Not thread-safe: owned and updated by the engine; render from the engine's thread.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace inferscope::sim {

// Cumulative-bucket histogram (Prometheus semantics). Values in seconds or tokens.
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double v);
  const std::vector<double>& bounds() const { return bounds_; }
  // counts()[i]: observations ≤ bounds()[i] (not cumulative); last entry: above all.
  const std::vector<std::uint64_t>& counts() const { return counts_; }
  std::uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  double sum_ = 0;
};

struct EngineMetrics {
  EngineMetrics();
  // Counters.
  std::uint64_t prompt_tokens = 0;       // vllm:prompt_tokens_total
  std::uint64_t generation_tokens = 0;   // vllm:generation_tokens_total
  std::uint64_t prefix_cache_queries = 0;  // tokens looked up (vllm:prefix_cache_queries_total)
  std::uint64_t prefix_cache_hits = 0;     // tokens found
  std::uint64_t preemptions = 0;
  std::uint64_t spec_drafts = 0;           // vllm:spec_decode_num_drafts_total (verify steps)
  std::uint64_t spec_draft_tokens = 0;     // vllm:spec_decode_num_draft_tokens_total
  std::uint64_t spec_accepted_tokens = 0;  // vllm:spec_decode_num_accepted_tokens_total
  std::uint64_t success_stop = 0, success_length = 0, success_abort = 0;  // vllm:request_success_total
  // Histograms (seconds).
  Histogram queue_time, prefill_time, decode_time, inference_time, ttft, itl, e2e;
  Histogram prompt_len, generation_len;  // tokens per request
};

// Gauges are read from the engine at render time.
struct EngineGauges {
  int running = 0;
  int waiting = 0;
  double kv_usage = 0;  // fraction in [0, 1]
};

// The text exposition format (version 0.0.4) of every metric, label model_name="…".
std::string render_prometheus(const EngineMetrics& m, const EngineGauges& g, const std::string& model_name);

}  // namespace inferscope::sim
