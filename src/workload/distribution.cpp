#include "inferscope/workload/distribution.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "inferscope/workload/trace.h"
#include "yaml_util.h"

namespace inferscope::workload {

LengthDist LengthDist::fixed_of(std::int64_t v) {
  LengthDist d;
  d.kind = DistKind::fixed;
  d.value = static_cast<double>(v);
  d.min = 1;
  d.max = std::max<std::int64_t>(d.max, v);
  return d;
}

LengthDist LengthDist::empirical_of(std::vector<std::int64_t> v, std::string src) {
  LengthDist d;
  d.kind = DistKind::empirical;
  d.values = std::move(v);
  d.source = std::move(src);
  return d;
}

std::int64_t LengthDist::sample(Rng& rng) const {
  double x = 0;
  switch (kind) {
    case DistKind::fixed: x = value; break;
    case DistKind::uniform:
      x = lo + static_cast<double>(rng.below(static_cast<std::uint64_t>(hi - lo) + 1));
      break;
    case DistKind::normal: x = mean + std * rng.normal(); break;
    case DistKind::lognormal: x = std::exp(mu + sigma * rng.normal()); break;
    case DistKind::empirical:
      x = values.empty() ? value : static_cast<double>(values[rng.below(values.size())]);
      break;
  }
  const auto r = static_cast<std::int64_t>(std::llround(std::clamp(x, -1e15, 1e15)));
  return std::clamp(r, min, max);
}

double LengthDist::expected_mean() const {
  switch (kind) {
    case DistKind::fixed: return value;
    case DistKind::uniform: return (lo + hi) / 2;
    case DistKind::normal: return mean;
    case DistKind::lognormal: return std::exp(mu + sigma * sigma / 2);
    case DistKind::empirical:
      if (values.empty()) return 0;
      return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  }
  return 0;
}

namespace {
using detail::as_double;
using detail::as_int;
using detail::as_string;
using detail::fail;

std::vector<std::int64_t> lengths_from_trace(const std::string& file, const std::string& fmt_name,
                                             bool output, const std::string& where,
                                             const YAML::Node& n, const std::string& field) {
  std::optional<TraceFormat> fmt;
  if (!fmt_name.empty()) {
    fmt = trace_format_from_string(fmt_name);
    if (!fmt) fail(where, n, field + ".format", "unknown trace format '" + fmt_name + "'");
  }
  const Trace t = read_trace(file, fmt);
  std::vector<std::int64_t> v;
  for (const auto& r : t.requests) {
    const std::int64_t x = output ? r.output_tokens : r.input_tokens;
    if (x > 0) v.push_back(x);
  }
  if (v.empty()) fail(where, n, field + ".trace", "trace " + file + " has no lengths to draw from");
  return v;
}
}  // namespace

LengthDist parse_dist(const YAML::Node& node, const std::string& where, const std::string& field,
                      std::int64_t default_max) {
  LengthDist d;
  if (node.IsScalar()) {
    d = LengthDist::fixed_of(as_int(node, where, field));
    if (d.value < 1) fail(where, node, field, "length must be >= 1");
    d.max = std::max<std::int64_t>(default_max, static_cast<std::int64_t>(d.value));
    return d;
  }
  if (!node.IsMap()) fail(where, node, field, "expected a number or a map with 'dist'");
  static const char* const kKeys[] = {"dist", "value", "min", "max", "mean", "std", "median",
                                      "mu", "sigma", "values", "trace", "format", "field", "clamp"};
  detail::check_keys(node, where, field, kKeys);
  if (!node["dist"]) fail(where, node, field + ".dist", "missing (fixed|uniform|normal|lognormal|empirical)");
  const std::string kind = as_string(node["dist"], where, field + ".dist");
  auto num = [&](const char* k) -> double {
    if (!node[k]) fail(where, node, field + "." + k, "missing for dist " + kind);
    return as_double(node[k], where, field + "." + k);
  };
  d.max = default_max;
  if (kind == "fixed") {
    d.kind = DistKind::fixed;
    d.value = num("value");
    if (d.value < 1) fail(where, node["value"], field + ".value", "must be >= 1");
  } else if (kind == "uniform") {
    d.kind = DistKind::uniform;
    d.lo = std::round(num("min"));
    d.hi = std::round(num("max"));
    if (d.lo < 1 || d.hi < d.lo) fail(where, node, field, "uniform needs 1 <= min <= max");
    d.min = static_cast<std::int64_t>(d.lo);
    d.max = static_cast<std::int64_t>(d.hi);
  } else if (kind == "normal") {
    d.kind = DistKind::normal;
    d.mean = num("mean");
    d.std = num("std");
    if (d.std < 0) fail(where, node["std"], field + ".std", "must be >= 0");
  } else if (kind == "lognormal") {
    d.kind = DistKind::lognormal;
    d.sigma = node["sigma"] ? num("sigma") : 0;
    if (node["mu"]) {
      d.mu = num("mu");
    } else if (node["median"]) {
      const double m = num("median");
      if (m <= 0) fail(where, node["median"], field + ".median", "must be > 0");
      d.mu = std::log(m);
    } else if (node["mean"] && node["std"]) {
      // Moment matching: sigma^2 = ln(1 + s^2/m^2), mu = ln m - sigma^2/2.
      const double m = num("mean"), s = num("std");
      if (m <= 0 || s < 0) fail(where, node, field, "lognormal needs mean > 0 and std >= 0");
      d.sigma = std::sqrt(std::log1p((s * s) / (m * m)));
      d.mu = std::log(m) - d.sigma * d.sigma / 2;
    } else {
      fail(where, node, field, "lognormal needs median+sigma, mu+sigma or mean+std");
    }
    if (d.sigma < 0) fail(where, node["sigma"], field + ".sigma", "must be >= 0");
  } else if (kind == "empirical") {
    d.kind = DistKind::empirical;
    if (node["values"]) {
      const auto& v = node["values"];
      if (!v.IsSequence() || v.size() == 0) fail(where, v, field + ".values", "expected a non-empty list");
      for (std::size_t i = 0; i < v.size(); ++i) {
        const auto x = as_int(v[i], where, field + ".values");
        if (x < 1) fail(where, v[i], field + ".values", "lengths must be >= 1");
        d.values.push_back(x);
      }
      d.source = "values";
    } else if (node["trace"]) {
      const std::string file = as_string(node["trace"], where, field + ".trace");
      const std::string which = node["field"] ? as_string(node["field"], where, field + ".field") : "input";
      if (which != "input" && which != "output") fail(where, node["field"], field + ".field", "expected input or output");
      const std::string fmt = node["format"] ? as_string(node["format"], where, field + ".format") : "";
      d.values = lengths_from_trace(file, fmt, which == "output", where, node, field);
      d.source = file + ":" + which;
    } else {
      fail(where, node, field, "empirical needs 'values' or 'trace'");
    }
  } else {
    fail(where, node["dist"], field + ".dist", "unknown distribution '" + kind + "'");
  }
  if (kind != "uniform" && node["max"]) d.max = as_int(node["max"], where, field + ".max");
  if (kind != "uniform" && node["min"]) d.min = as_int(node["min"], where, field + ".min");
  if (node["clamp"]) {
    const auto& c = node["clamp"];
    if (!c.IsSequence() || c.size() != 2) fail(where, c, field + ".clamp", "expected [min, max]");
    d.min = as_int(c[0], where, field + ".clamp");
    d.max = as_int(c[1], where, field + ".clamp");
  }
  if (d.min < 1 || d.max < d.min) fail(where, node, field, "clamp needs 1 <= min <= max");
  return d;
}

nlohmann::json to_json(const LengthDist& d) {
  nlohmann::json j;
  switch (d.kind) {
    case DistKind::fixed: j = {{"dist", "fixed"}, {"value", d.value}}; break;
    case DistKind::uniform: j = {{"dist", "uniform"}, {"min", d.lo}, {"max", d.hi}}; break;
    case DistKind::normal: j = {{"dist", "normal"}, {"mean", d.mean}, {"std", d.std}}; break;
    case DistKind::lognormal:
      j = {{"dist", "lognormal"}, {"mu", d.mu}, {"sigma", d.sigma}, {"median", std::exp(d.mu)}};
      break;
    case DistKind::empirical:
      j = {{"dist", "empirical"}, {"source", d.source}, {"n", d.values.size()}};
      break;
  }
  j["clamp"] = {d.min, d.max};
  j["mean"] = d.expected_mean();
  return j;
}

std::vector<std::int64_t> matrix_points(std::int64_t traffic_p95, std::int64_t model_max) {
  std::vector<std::int64_t> v = {512, 2048, 8192, model_max};
  if (traffic_p95 > 0) v.push_back(traffic_p95);
  for (auto& x : v) x = std::clamp<std::int64_t>(x, 1, std::max<std::int64_t>(1, model_max));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace inferscope::workload
