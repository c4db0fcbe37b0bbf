#include "inferscope/stats/summary.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace inferscope {

double percentile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("percentile of empty sample");
  const double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double percentile_select(std::vector<double>& values, double q) {
  if (values.empty()) throw std::invalid_argument("percentile of empty sample");
  const double rank = q / 100.0 * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
  const double a = values[lo];
  if (lo + 1 >= values.size()) return a;
  // After nth_element everything past `lo` is ≥ it: the next order statistic is their min.
  const double b = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end());
  return a + (b - a) * (rank - static_cast<double>(lo));
}

Summary summarize(std::vector<double> values) {
  Summary s;
  s.count = values.size();
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  // Kahan-free two-pass mean/variance: fine for the sample sizes here (≤ 10^7).
  const double sum = std::accumulate(values.begin(), values.end(), 0.0);
  s.mean = sum / static_cast<double>(values.size());
  double sq = 0;
  for (double v : values) sq += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(sq / static_cast<double>(values.size()));
  s.min = values.front();
  s.max = values.back();
  s.p50 = percentile_sorted(values, 50);
  s.p90 = percentile_sorted(values, 90);
  s.p95 = percentile_sorted(values, 95);
  s.p99 = percentile_sorted(values, 99);
  s.p999 = percentile_sorted(values, 99.9);
  return s;
}

double Summary::at(double q) const {
  if (q == 50) return p50;
  if (q == 90) return p90;
  if (q == 95) return p95;
  if (q == 99) return p99;
  if (q == 99.9) return p999;
  if (q == 100) return max;
  if (q == 0) return min;
  throw std::invalid_argument("percentile not stored");
}

nlohmann::json to_json(const Summary& s) {
  nlohmann::json j;
  j["count"] = s.count;
  const bool empty = s.count == 0;
  auto put = [&](const char* k, double v) { j[k] = empty ? nlohmann::json(nullptr) : nlohmann::json(v); };
  put("mean", s.mean);
  put("std", s.std);
  put("min", s.min);
  put("p50", s.p50);
  put("p90", s.p90);
  put("p95", s.p95);
  put("p99", s.p99);
  put("p999", s.p999);
  put("max", s.max);
  return j;
}

}  // namespace inferscope
