#include "inferscope/stats/run_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "inferscope/core/errors.h"

namespace inferscope {
namespace {

const std::set<std::string>& known_slo_metrics() {
  static const std::set<std::string> k = {"ttft", "ttft_sched", "tpot", "itl", "e2e", "e2e_sched"};
  return k;
}

std::string trim(std::string s) {
  auto b = s.find_first_not_of(" \t");
  auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

double ms(Nanos d) { return ns_to_ms(d); }

struct Samples {
  std::vector<double> ttft, ttft_sched, tpot, itl, itl_token, e2e, e2e_sched, send_lag, in, out;
  LatencySet summarize_all() {
    LatencySet s;
    s.ttft = summarize(std::move(ttft));
    s.ttft_sched = summarize(std::move(ttft_sched));
    s.tpot = summarize(std::move(tpot));
    s.itl = summarize(std::move(itl));
    s.itl_token = summarize(std::move(itl_token));
    s.e2e = summarize(std::move(e2e));
    s.e2e_sched = summarize(std::move(e2e_sched));
    s.send_lag = summarize(std::move(send_lag));
    s.input_tokens = summarize(std::move(in));
    s.output_tokens = summarize(std::move(out));
    return s;
  }
};

void add_request(Samples& s, const RequestRecord& r) {
  if (r.t_send >= 0 && r.t_sched >= 0) s.send_lag.push_back(ms(r.t_send - r.t_sched));
  if (r.t_first >= 0) {
    s.ttft.push_back(ms(r.t_first - r.t_send));
    s.ttft_sched.push_back(ms(r.t_first - r.t_sched));
  }
  if (r.t_last >= 0) {
    s.e2e.push_back(ms(r.t_last - r.t_send));
    s.e2e_sched.push_back(ms(r.t_last - r.t_sched));
  }
  if (auto t = request_tpot_ms(r)) s.tpot.push_back(*t);
  for (std::size_t i = 1; i < r.chunks.size(); ++i) {
    const double gap = ms(r.chunks[i].t_ns - r.chunks[i - 1].t_ns);
    s.itl.push_back(gap);
    const int n = std::max(1, r.chunks[i].tokens);
    for (int k = 0; k < n; ++k) s.itl_token.push_back(gap / n);
  }
  const int in = r.prompt_tokens >= 0 ? r.prompt_tokens : r.input_tokens_requested;
  if (in >= 0) s.in.push_back(in);
  s.out.push_back(r.output_tokens());
}

// The request's own value of an SLO metric; nullopt if undefined (not held against it).
std::optional<double> request_value(const RequestRecord& r, const std::string& metric) {
  if (metric == "ttft") return request_ttft_ms(r);
  if (metric == "ttft_sched") return r.t_first >= 0 ? std::optional(ms(r.t_first - r.t_sched)) : std::nullopt;
  if (metric == "tpot") return request_tpot_ms(r);
  if (metric == "e2e") return r.t_last >= 0 ? std::optional(ms(r.t_last - r.t_send)) : std::nullopt;
  if (metric == "e2e_sched") return r.t_last >= 0 ? std::optional(ms(r.t_last - r.t_sched)) : std::nullopt;
  return std::nullopt;  // itl: a run-level objective only
}

const Summary& summary_for(const LatencySet& s, const std::string& metric) {
  if (metric == "ttft") return s.ttft;
  if (metric == "ttft_sched") return s.ttft_sched;
  if (metric == "tpot") return s.tpot;
  if (metric == "itl") return s.itl;
  if (metric == "e2e") return s.e2e;
  return s.e2e_sched;
}

}  // namespace

std::vector<Slo> parse_slos(const std::string& spec, const std::string& flag) {
  std::vector<Slo> out;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    const auto comma = spec.find(',', pos);
    const std::string item = trim(spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    pos = comma == std::string::npos ? spec.size() + 1 : comma + 1;
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const auto us = item.rfind("_p", eq);
    if (eq == std::string::npos || us == std::string::npos)
      throw InputError(flag, 0, item, "expected METRIC_pQ=VALUE[ms|s|us], e.g. ttft_p95=500ms");
    Slo slo;
    slo.text = item;
    slo.metric = item.substr(0, us);
    if (!known_slo_metrics().contains(slo.metric))
      throw InputError(flag, 0, item, fmt::format("unknown metric '{}' (ttft, ttft_sched, tpot, itl, e2e, e2e_sched)", slo.metric));
    const std::string q = item.substr(us + 2, eq - us - 2);
    if (q == "50") slo.percentile = 50;
    else if (q == "90") slo.percentile = 90;
    else if (q == "95") slo.percentile = 95;
    else if (q == "99") slo.percentile = 99;
    else if (q == "999" || q == "99.9") slo.percentile = 99.9;
    else throw InputError(flag, 0, item, fmt::format("unsupported percentile 'p{}' (p50, p90, p95, p99, p999)", q));
    std::string v = trim(item.substr(eq + 1));
    double scale = 1.0;
    if (v.ends_with("ms")) v.resize(v.size() - 2);
    else if (v.ends_with("us")) { v.resize(v.size() - 2); scale = 1e-3; }
    else if (v.ends_with("s")) { v.resize(v.size() - 1); scale = 1e3; }
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || !(x > 0) || !std::isfinite(x))
      throw InputError(flag, 0, item, "threshold must be a positive number with unit ms, s or us");
    slo.threshold_ms = x * scale;
    out.push_back(slo);
  }
  return out;
}

std::size_t samples_needed(double percentile) {
  // The epsilon keeps 1 / (1 − 0.95) = 20.000000000000004 from rounding up to 21.
  return static_cast<std::size_t>(std::ceil(1.0 / (1.0 - percentile / 100.0) - 1e-9));
}

std::optional<double> request_ttft_ms(const RequestRecord& r) {
  if (r.t_first < 0 || r.t_send < 0) return std::nullopt;
  return ms(r.t_first - r.t_send);
}

std::optional<double> request_tpot_ms(const RequestRecord& r) {
  const int n = r.output_tokens();
  if (n < 2 || r.t_first < 0 || r.t_last < 0) return std::nullopt;
  return ms(r.t_last - r.t_first) / (n - 1);
}

RunMetrics compute_run_metrics(const std::vector<RequestRecord>& records, const std::vector<Slo>& slos) {
  RunMetrics m;
  Samples all;
  std::map<std::string, Samples> by_type;
  Nanos first_send = std::numeric_limits<Nanos>::max(), last_done = std::numeric_limits<Nanos>::min();
  Nanos first_completion = std::numeric_limits<Nanos>::max(), last_send = std::numeric_limits<Nanos>::min();
  double out_tokens = 0, in_tokens = 0;
  std::vector<const RequestRecord*> measured;
  for (const auto& r : records) {
    if (r.warmup) { ++m.warmup; continue; }
    ++m.issued;
    if (r.t_send >= 0) {
      first_send = std::min(first_send, r.t_send);
      last_send = std::max(last_send, r.t_send);
    }
    if (r.t_done >= 0) last_done = std::max(last_done, r.t_done);
    if (!r.ok()) {
      ++m.failed;
      ++m.errors_by_class[std::string(to_string(r.error))];
      continue;
    }
    ++m.completed;
    measured.push_back(&r);
    add_request(all, r);
    add_request(by_type[r.type], r);
    if (r.t_done >= 0) first_completion = std::min(first_completion, r.t_done);
    out_tokens += r.output_tokens();
    in_tokens += std::max(0, r.prompt_tokens >= 0 ? r.prompt_tokens : r.input_tokens_requested);
    if (r.completion_tokens >= 0 && r.completion_tokens != r.tokenizer_output_tokens && r.tokenizer_output_tokens > 0)
      ++m.output_token_mismatches;
  }
  m.all = all.summarize_all();
  if (by_type.size() > 1)
    for (auto& [type, s] : by_type) m.by_type[type] = s.summarize_all();

  if (first_send != std::numeric_limits<Nanos>::max() && last_done > first_send) {
    m.duration_s = ns_to_s(last_done - first_send);
    m.output_tokens_per_s = out_tokens / m.duration_s;
    m.total_tokens_per_s = (out_tokens + in_tokens) / m.duration_s;
    m.requests_per_s = static_cast<double>(m.completed) / m.duration_s;
  }
  if (first_completion != std::numeric_limits<Nanos>::max() && last_send > first_completion) {
    double tokens = 0;
    for (const auto* r : measured)
      for (const auto& c : r->chunks)
        if (c.t_ns >= first_completion && c.t_ns <= last_send) tokens += c.tokens;
    m.steady_window_s = ns_to_s(last_send - first_completion);
    m.steady_output_tokens_per_s = tokens / *m.steady_window_s;
  }

  for (const auto& slo : slos) {
    SloResult res;
    res.slo = slo;
    const Summary& s = summary_for(m.all, slo.metric);
    res.enough_samples = s.count > 0 && s.count >= samples_needed(slo.percentile);
    res.observed_ms = s.count ? s.at(slo.percentile) : 0;
    res.met = s.count > 0 && res.observed_ms <= slo.threshold_ms;
    if (!res.enough_samples)
      m.warnings.push_back(fmt::format("{}: {} samples are too few to estimate p{}", slo.text, s.count, slo.percentile));
    m.slos.push_back(res);
  }
  for (const auto* r : measured) {
    bool good = true;
    for (const auto& slo : slos) {
      auto v = request_value(*r, slo.metric);
      if (v && *v > slo.threshold_ms) good = false;
    }
    if (good) ++m.good;
  }
  if (m.duration_s > 0) m.goodput_rps = static_cast<double>(m.good) / m.duration_s;
  m.good_fraction = m.issued ? static_cast<double>(m.good) / static_cast<double>(m.issued) : 0;
  if (m.output_token_mismatches)
    m.warnings.push_back(fmt::format("{} requests: server usage.completion_tokens differs from the client tokenizer count", m.output_token_mismatches));
  return m;
}

nlohmann::json to_json(const LatencySet& s) {
  return {{"ttft_ms", to_json(s.ttft)},         {"ttft_sched_ms", to_json(s.ttft_sched)},
          {"tpot_ms", to_json(s.tpot)},         {"itl_ms", to_json(s.itl)},
          {"itl_token_ms", to_json(s.itl_token)}, {"e2e_ms", to_json(s.e2e)},
          {"e2e_sched_ms", to_json(s.e2e_sched)}, {"send_lag_ms", to_json(s.send_lag)},
          {"input_tokens", to_json(s.input_tokens)}, {"output_tokens", to_json(s.output_tokens)}};
}

nlohmann::json to_json(const RunMetrics& m) {
  nlohmann::json j = to_json(m.all);
  j["issued"] = m.issued;
  j["completed"] = m.completed;
  j["failed"] = m.failed;
  j["warmup"] = m.warmup;
  j["errors_by_class"] = m.errors_by_class;
  j["duration_s"] = m.duration_s;
  j["output_tokens_per_s"] = m.output_tokens_per_s;
  j["total_tokens_per_s"] = m.total_tokens_per_s;
  j["requests_per_s"] = m.requests_per_s;
  j["steady_state"] = {
      {"window_s", m.steady_window_s ? nlohmann::json(*m.steady_window_s) : nlohmann::json(nullptr)},
      {"output_tokens_per_s", m.steady_output_tokens_per_s ? nlohmann::json(*m.steady_output_tokens_per_s) : nlohmann::json(nullptr)}};
  j["goodput_rps"] = m.goodput_rps;
  j["good_fraction"] = m.good_fraction;
  nlohmann::json slos = nlohmann::json::array();
  for (const auto& s : m.slos)
    slos.push_back({{"slo", s.slo.text}, {"metric", s.slo.metric}, {"percentile", s.slo.percentile},
                    {"threshold_ms", s.slo.threshold_ms}, {"observed_ms", s.observed_ms},
                    {"met", s.met}, {"enough_samples", s.enough_samples}});
  j["slos"] = std::move(slos);
  j["output_token_mismatches"] = m.output_token_mismatches;
  if (!m.by_type.empty()) {
    nlohmann::json bt;
    for (const auto& [type, s] : m.by_type) bt[type] = to_json(s);
    j["by_type"] = std::move(bt);
  }
  j["warnings"] = m.warnings;
  return j;
}

}  // namespace inferscope
