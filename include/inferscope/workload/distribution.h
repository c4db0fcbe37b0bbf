#pragma once
// Token-length distributions for inputs, outputs, tool results and wait times. Value
// types; sampling takes the caller's Rng, so a distribution is shareable across threads.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inferscope/workload/rng.h"

namespace YAML {
class Node;
}

namespace inferscope::workload {

enum class DistKind { fixed, uniform, normal, lognormal, empirical };

// Every sample is rounded to an integer and clamped to [min, max].
struct LengthDist {
  DistKind kind = DistKind::fixed;
  double value = 128;          // fixed
  double lo = 1, hi = 1;       // uniform, inclusive integer bounds
  double mean = 0, std = 0;    // normal
  double mu = 0, sigma = 0;    // lognormal: log-space parameters (median = e^mu)
  std::vector<std::int64_t> values;  // empirical: the observed lengths, drawn uniformly
  std::string source;          // empirical: where the values came from (for describe)
  std::int64_t min = 1;
  std::int64_t max = 1'000'000;

  static LengthDist fixed_of(std::int64_t v);
  static LengthDist empirical_of(std::vector<std::int64_t> v, std::string source);

  std::int64_t sample(Rng& rng) const;
  double expected_mean() const;  // of the unclamped distribution (empirical: sample mean)
};

// Parses a distribution from YAML: an integer (fixed), or a map
//   {dist: fixed, value: N} | {dist: uniform, min: A, max: B}
//   {dist: normal, mean: M, std: S} | {dist: lognormal, median: M, sigma: S}
//   {dist: lognormal, mu: m, sigma: s} | {dist: lognormal, mean: M, std: S}
//   {dist: empirical, values: [..]} | {dist: empirical, trace: FILE, field: input|output}
// plus optional `clamp: [lo, hi]` (or `max: N` for non-uniform kinds). `where` names the file
// for errors; `field` the key path. Throws InputError with the node's line.
LengthDist parse_dist(const YAML::Node& node, const std::string& where, const std::string& field,
                      std::int64_t default_max);

nlohmann::json to_json(const LengthDist& d);

// The matrix points an engineer asks for: 512, 2K, 8K, the traffic's p95 and the model's
// maximum context, each clamped to `model_max`, sorted, duplicates removed. `traffic_p95`
// <= 0 is left out.
std::vector<std::int64_t> matrix_points(std::int64_t traffic_p95, std::int64_t model_max);

}  // namespace inferscope::workload
