#pragma once
// Prometheus text exposition format 0.0.4: parser, metric families, histogram helpers.
//
// The parser groups samples into families the way Prometheus does: a `# TYPE x histogram`
// family owns x_bucket, x_sum, x_count (and x_created); a summary owns x, x_sum, x_count;
// a counter declared as `x` owns x_total and x_created. Samples without a TYPE form an
// untyped family of their own name. Label values are unescaped (\\, \", \n); values accept
// NaN, +Inf, -Inf; an optional integer timestamp (ms) is kept.
//
// All functions are pure and thread-safe. Nothing here does I/O.
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace inferscope::telemetry {

enum class MetricType : std::uint8_t { counter, gauge, histogram, summary, untyped };
std::string_view metric_type_name(MetricType t);

// Label pairs in the order they appeared (names unique within a sample).
using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  std::string name;  // full sample name, e.g. "vllm:ttft_seconds_bucket"
  Labels labels;
  double value = 0;
  std::optional<std::int64_t> timestamp_ms;
  // The value of label `name`, or nullptr.
  const std::string* label(std::string_view name) const;
};

struct MetricFamily {
  std::string name;  // as declared by TYPE/HELP, else the sample name
  MetricType type = MetricType::untyped;
  std::string help;  // unescaped
  std::vector<Sample> samples;
};

struct Scrape {
  std::vector<MetricFamily> families;  // in order of first appearance
  // The family called `name`; a counter is also found under name + "_total" and, when
  // `name` ends in "_total", under the name without it (engines expose both spellings).
  const MetricFamily* find(std::string_view name) const;
};

struct ParseError {
  int line = 0;  // 1-based
  std::string message;
};

std::expected<Scrape, ParseError> parse_prometheus(std::string_view text);

// ---------------------------------------------------------------------------------------
// Histograms

struct Bucket {
  double le = 0;     // upper bound (inclusive); +Inf for the last bucket
  double count = 0;  // cumulative
};

// One series of a histogram family: the samples that share every label except `le`.
struct HistogramSeries {
  Labels labels;                // without `le`
  std::vector<Bucket> buckets;  // ascending by le
  double sum = 0;
  double count = 0;  // from _count, else the +Inf bucket
};

// Series of a histogram (or untyped family laid out like one) in order of appearance.
std::vector<HistogramSeries> histogram_series(const MetricFamily& family);

// Sum of series with identical bucket bounds (data-parallel engines, label variants).
// Series whose bounds differ from the first are skipped and counted in `skipped`.
std::optional<HistogramSeries> merge_histograms(std::span<const HistogramSeries> series,
                                                std::size_t* skipped = nullptr);

// Quantile q in [0, 1] estimated like PromQL histogram_quantile: find the bucket holding
// rank q·count and interpolate linearly inside it (lower bound 0 for the first bucket);
// a rank in the +Inf bucket answers the highest finite bound. NaN when there are no
// observations, fewer than two buckets, or no +Inf bucket.
double histogram_quantile(double q, std::span<const Bucket> buckets);

struct HistogramDelta {
  HistogramSeries series;
  bool reset = false;  // some count went down (engine restarted): `series` is `end` alone
};
// end − start, bucket by bucket. Fails when the bucket bounds differ.
std::expected<HistogramDelta, std::string> histogram_delta(const HistogramSeries& start,
                                                           const HistogramSeries& end);

}  // namespace inferscope::telemetry
