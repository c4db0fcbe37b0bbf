#pragma once
// From per-request timelines to the run's metrics, exactly as DESIGN.md defines them
// (see docs/metrics.md). Pure functions over records: no I/O, no clock.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inferscope/core/timeline.h"
#include "inferscope/stats/summary.h"

namespace inferscope {

// One service-level objective, e.g. "ttft_p95=500ms": metric ttft, percentile 95,
// threshold 500 ms. Per request it means "this request's TTFT ≤ 500 ms" (goodput); for
// the run it means "the p95 of TTFT ≤ 500 ms" (attainment).
struct Slo {
  std::string metric;     // ttft | ttft_sched | tpot | itl | e2e | e2e_sched
  double percentile = 0;  // 50, 90, 95, 99 or 99.9
  double threshold_ms = 0;
  std::string text;       // as the user wrote it
};

// Parses "ttft_p95=500ms,tpot_p95=50ms" (units ms, s, us; a bare number is ms).
// Throws InputError naming `flag` on bad syntax, unknown metric or percentile.
std::vector<Slo> parse_slos(const std::string& spec, const std::string& flag = "--slo");

// Samples needed before percentile q (e.g. 99) is more than the sample maximum:
// ceil(1 / (1 − q/100)) — 20 for p95, 100 for p99, 1000 for p99.9.
std::size_t samples_needed(double percentile);

// The latency samples of one group of completed, non-warm-up requests (milliseconds).
struct LatencySet {
  Summary ttft, ttft_sched, tpot, itl, itl_token, e2e, e2e_sched, send_lag;
  Summary input_tokens, output_tokens;
};

struct SloResult {
  Slo slo;
  double observed_ms = 0;  // the run's percentile
  bool met = false;
  bool enough_samples = false;  // count ≥ 1 / (1 − q)
};

struct RunMetrics {
  std::size_t issued = 0;     // non-warm-up requests issued
  std::size_t completed = 0;  // non-warm-up, ok
  std::size_t failed = 0;     // non-warm-up, failed
  std::size_t warmup = 0;     // warm-up requests (any outcome)
  std::map<std::string, std::size_t> errors_by_class;
  LatencySet all;
  std::map<std::string, LatencySet> by_type;  // filled when more than one type ran

  double duration_s = 0;  // [first t_send, last t_done] of measured requests
  double output_tokens_per_s = 0, total_tokens_per_s = 0, requests_per_s = 0;
  // Steady-state window: from the first completion to the last send, so ramp-up (the
  // pipeline filling) and drain (no new work entering) are excluded.
  std::optional<double> steady_window_s, steady_output_tokens_per_s;

  std::vector<SloResult> slos;
  std::size_t good = 0;  // completed requests meeting every per-request SLO
  double goodput_rps = 0, good_fraction = 0;

  std::size_t output_token_mismatches = 0;  // server usage ≠ client tokenizer count
  std::vector<std::string> warnings;
};

// `records` may include warm-up and failed requests; they are counted, not measured.
RunMetrics compute_run_metrics(const std::vector<RequestRecord>& records,
                               const std::vector<Slo>& slos);

// The metric fields of summary.json (no manifest, validity or telemetry).
nlohmann::json to_json(const RunMetrics& m);
nlohmann::json to_json(const LatencySet& s);

// Per-request values, exposed for tests and the report. Milliseconds; nullopt where the
// metric is undefined for this request (e.g. TPOT with fewer than 2 output tokens).
std::optional<double> request_ttft_ms(const RequestRecord& r);
std::optional<double> request_tpot_ms(const RequestRecord& r);

}  // namespace inferscope
