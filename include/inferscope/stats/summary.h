#pragma once
// Descriptive statistics as DESIGN.md defines them: count, mean, std (population,
// ddof = 0, as numpy's default), min, p50, p90, p95, p99, p99.9, max; percentiles by
// linear interpolation between closest ranks (numpy's default "linear" method).
#include <cstddef>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

namespace inferscope {

struct Summary {
  std::size_t count = 0;
  double mean = 0, std = 0, min = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0, max = 0;
  // Value at percentile q in [0, 100] from the stored percentiles, for SLO checks.
  // Only 50, 90, 95, 99 and 99.9 are stored; other q throw std::invalid_argument.
  double at(double q) const;
};

// `sorted` ascending, non-empty; q in [0, 100]. numpy.percentile(..., method="linear").
double percentile_sorted(std::span<const double> sorted, double q);

// The same value as percentile_sorted() without sorting: O(n) selection, reorders
// `values` (pass a copy). For live views that cannot afford a sort per refresh.
double percentile_select(std::vector<double>& values, double q);

// Sorts a copy. Empty input gives count = 0 and zeros.
Summary summarize(std::vector<double> values);

// {"count":…, "mean":…, …}; an empty summary has count 0 and null statistics.
nlohmann::json to_json(const Summary& s);

}  // namespace inferscope
