#include "inferscope/sim/metrics.h"

#include <algorithm>

#include <fmt/format.h>

namespace inferscope::sim {
namespace {
// vLLM's bucket boundaries (vllm/v1/metrics/loggers.py).
std::vector<double> ttft_buckets() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,   0.75,
          1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
}
std::vector<double> itl_buckets() {
  return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
}
std::vector<double> request_buckets() {
  return {0.3,  0.5,  0.8,  1.0,  1.5,  2.0,   2.5,   5.0,   10.0,  15.0,  20.0,
          30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
}
// 1, 2, 5, 10, 20, 50, … up to max_model_len-ish (vLLM's build_1_2_5_buckets).
std::vector<double> token_buckets() {
  std::vector<double> b;
  for (double m = 1; m <= 1e6; m *= 10)
    for (double k : {1.0, 2.0, 5.0}) b.push_back(k * m);
  return b;
}

std::string num(double v) { return fmt::format("{}", v); }

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}
void sample(std::string& out, std::string_view name, std::string_view labels, double v) {
  fmt::format_to(std::back_inserter(out), "{}{{{}}} {}\n", name, labels, num(v));
}
void histogram(std::string& out, std::string_view name, std::string_view help, const Histogram& h,
               std::string_view labels) {
  header(out, name, "histogram", help);
  std::uint64_t cum = 0;
  for (std::size_t i = 0; i < h.bounds().size(); ++i) {
    cum += h.counts()[i];
    fmt::format_to(std::back_inserter(out), "{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, num(h.bounds()[i]), cum);
  }
  fmt::format_to(std::back_inserter(out), "{}_bucket{{{},le=\"+Inf\"}} {}\n", name, labels, h.count());
  fmt::format_to(std::back_inserter(out), "{}_sum{{{}}} {}\n", name, labels, num(h.sum()));
  fmt::format_to(std::back_inserter(out), "{}_count{{{}}} {}\n", name, labels, h.count());
}
}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double v) {
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), v);
  ++counts_[static_cast<std::size_t>(it - bounds_.begin())];
  ++count_;
  sum_ += v;
}

EngineMetrics::EngineMetrics()
    : queue_time(request_buckets()),
      prefill_time(request_buckets()),
      decode_time(request_buckets()),
      inference_time(request_buckets()),
      ttft(ttft_buckets()),
      itl(itl_buckets()),
      e2e(request_buckets()),
      prompt_len(token_buckets()),
      generation_len(token_buckets()) {}

std::string render_prometheus(const EngineMetrics& m, const EngineGauges& g, const std::string& model_name) {
  std::string out;
  out.reserve(16384);
  // Label values escape backslash, quote and newline (text format rules).
  std::string esc;
  for (char c : model_name) {
    if (c == '\\' || c == '"') esc += '\\';
    if (c == '\n') { esc += "\\n"; continue; }
    esc += c;
  }
  const std::string labels = fmt::format("model_name=\"{}\"", esc);

  // Marks the page as the simulated engine's (telemetry detects `sim` by it); every other
  // family carries vLLM's name so any vLLM dashboard or scraper reads it unchanged.
  header(out, "inferscope_sim_info", "gauge", "The inferscope simulated engine (always 1).");
  out += fmt::format("inferscope_sim_info{{{}}} 1\n", labels);

  header(out, "vllm:num_requests_running", "gauge", "Number of requests in model execution batches.");
  sample(out, "vllm:num_requests_running", labels, g.running);
  header(out, "vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.");
  sample(out, "vllm:num_requests_waiting", labels, g.waiting);
  header(out, "vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.");
  sample(out, "vllm:kv_cache_usage_perc", labels, g.kv_usage);

  const auto counter = [&](std::string_view name, std::string_view help, std::uint64_t v) {
    header(out, name, "counter", help);
    sample(out, name, labels, static_cast<double>(v));
  };
  counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.",
          m.prefix_cache_queries);
  counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.",
          m.prefix_cache_hits);
  counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", m.preemptions);
  counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", m.prompt_tokens);
  counter("vllm:generation_tokens_total", "Number of generation tokens processed.", m.generation_tokens);
  counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", m.spec_drafts);
  counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", m.spec_draft_tokens);
  counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", m.spec_accepted_tokens);

  header(out, "vllm:request_success_total", "counter", "Count of successfully processed requests.");
  sample(out, "vllm:request_success_total", labels + ",finished_reason=\"stop\"", static_cast<double>(m.success_stop));
  sample(out, "vllm:request_success_total", labels + ",finished_reason=\"length\"",
         static_cast<double>(m.success_length));
  sample(out, "vllm:request_success_total", labels + ",finished_reason=\"abort\"",
         static_cast<double>(m.success_abort));

  histogram(out, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", m.ttft, labels);
  histogram(out, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", m.itl, labels);
  histogram(out, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", m.e2e, labels);
  histogram(out, "vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
            m.queue_time, labels);
  histogram(out, "vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.",
            m.inference_time, labels);
  histogram(out, "vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
            m.prefill_time, labels);
  histogram(out, "vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
            m.decode_time, labels);
  histogram(out, "vllm:request_prompt_tokens", "Number of prefill tokens processed.", m.prompt_len, labels);
  histogram(out, "vllm:request_generation_tokens", "Number of generation tokens processed.", m.generation_len,
            labels);
  return out;
}

}  // namespace inferscope::sim
