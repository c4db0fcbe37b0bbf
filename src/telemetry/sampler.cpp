#include "inferscope/telemetry/sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>

#include "inferscope/core/errors.h"

namespace inferscope::telemetry {
namespace {

bool is_core_series(std::string_view name) {
  // cpu<N>_pct: per-core series go to telemetry.jsonl only; the summary keeps cpu_pct and
  // cpu_max_core_pct.
  if (!name.starts_with("cpu") || !name.ends_with("_pct") || name.size() <= 7) return false;
  const auto digits = name.substr(3, name.size() - 7);
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

Values engine_values(const NormalizedScrape& s) {
  Values v;
  for (const auto key : scalar_keys())
    if (auto it = s.values.find(std::string(key)); it != s.values.end()) v.emplace_back(std::string(key), it->second);
  for (const auto key : histogram_keys()) {
    if (auto it = s.histograms.find(std::string(key)); it != s.histograms.end()) {
      v.emplace_back(std::string(key) + "_count", it->second.count);
      v.emplace_back(std::string(key) + "_sum", it->second.sum);
    }
  }
  return v;
}

Values gpu_values(const GpuSample& g) {
  Values v;
  const auto put = [&](const char* k, const std::optional<double>& x) {
    if (x) v.emplace_back(k, *x);
  };
  put("util_pct", g.util_pct);
  put("mem_util_pct", g.mem_util_pct);
  put("mem_used_bytes", g.mem_used_bytes);
  put("mem_total_bytes", g.mem_total_bytes);
  put("sm_clock_mhz", g.sm_clock_mhz);
  put("mem_clock_mhz", g.mem_clock_mhz);
  put("power_w", g.power_w);
  put("power_limit_w", g.power_limit_w);
  put("temperature_c", g.temperature_c);
  return v;
}

nlohmann::json histogram_json(const HistogramSeries& h, bool reset) {
  nlohmann::json buckets = nlohmann::json::array();
  for (const auto& b : h.buckets)
    buckets.push_back({std::isinf(b.le) ? nlohmann::json("+Inf") : nlohmann::json(b.le), b.count});
  return {{"count", h.count},
          {"sum", h.sum},
          {"mean", h.count > 0 ? number_or_null(h.sum / h.count) : nlohmann::json(nullptr)},
          {"p50", number_or_null(histogram_quantile(0.50, h.buckets))},
          {"p95", number_or_null(histogram_quantile(0.95, h.buckets))},
          {"p99", number_or_null(histogram_quantile(0.99, h.buckets))},
          {"reset", reset},
          {"buckets", std::move(buckets)}};
}

void compare_info(const std::vector<GpuInfo>& a, const std::vector<GpuInfo>& b, std::vector<std::string>& out) {
  for (const auto& x : a) {
    const auto it = std::find_if(b.begin(), b.end(), [&](const GpuInfo& y) { return y.index == x.index; });
    if (it == b.end()) continue;
    const auto cmp = [&](const char* what, const std::optional<double>& p, const std::optional<double>& q) {
      if (p && q && *p != *q) out.push_back(fmt::format("gpu{} {} changed from {} to {}", x.index, what, *p, *q));
    };
    cmp("power_limit_w", x.power_limit_w, it->power_limit_w);
    cmp("sm_clock_max_mhz", x.sm_clock_max_mhz, it->sm_clock_max_mhz);
    cmp("mem_clock_max_mhz", x.mem_clock_max_mhz, it->mem_clock_max_mhz);
    cmp("app_sm_clock_mhz", x.app_sm_clock_mhz, it->app_sm_clock_mhz);
    cmp("app_mem_clock_mhz", x.app_mem_clock_mhz, it->app_mem_clock_mhz);
  }
}

}  // namespace

TelemetrySampler::TelemetrySampler(TelemetryConfig cfg, const Clock& clock) : cfg_(std::move(cfg)), clock_(clock) {
  if (cfg_.interval_ns <= 0) throw InputError("--telemetry-interval", "must be greater than 0");
  engine_ = cfg_.engine;
  engine_detected_ = cfg_.engine != Engine::unknown;
  if (!cfg_.fetch) {
    const double timeout = cfg_.fetch_timeout_s;
    cfg_.fetch = [timeout](const std::string& url) { return http_fetch(url, timeout); };
  }
}

TelemetrySampler::~TelemetrySampler() { stop(); }

void TelemetrySampler::note(const std::string& msg) {
  {
    std::lock_guard lk(mu_);
    if (std::find(notes_.begin(), notes_.end(), msg) != notes_.end()) return;
    notes_.push_back(msg);
  }
  if (cfg_.log) cfg_.log(msg);
  else fmt::print(stderr, "inferscope: telemetry: {}\n", msg);
}

void TelemetrySampler::add(Record r) {
  std::lock_guard lk(mu_);
  if (records_.size() >= cfg_.max_samples) {
    ++dropped_;
    return;
  }
  records_.push_back(std::move(r));
}

void TelemetrySampler::start() {
  {
    std::lock_guard lk(mu_);
    if (started_) return;
    started_ = true;
    stopping_ = false;
  }
  {
    std::lock_guard src(sources_mu_);
    std::string why;
    gpu_ = open_gpu_probe(cfg_.gpu, &why);
    if (gpu_) {
      auto info = gpu_->info();
      std::lock_guard lk(mu_);
      gpu_backend_ = std::string(gpu_->backend());
      driver_version_ = gpu_->driver_version();
      gpu_info_start_ = std::move(info);
    } else if (cfg_.gpu != GpuBackend::off) {
      note(why);
    }
    if (cfg_.host) host_.emplace(cfg_.proc_root);
  }
  if (!clock_.is_virtual()) {
    std::lock_guard lk(mu_);
    threaded_ = true;
    thread_ = std::thread([this] { run(); });
  }
}

void TelemetrySampler::stop() {
  {
    std::lock_guard lk(mu_);
    if (!started_ || stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard src(sources_mu_);
  if (gpu_) {
    auto end_info = gpu_->info();
    std::vector<std::string> changes;
    {
      std::lock_guard lk(mu_);
      compare_info(gpu_info_start_, end_info, changes);
      gpu_changes_ = changes;
    }
    for (const auto& c : changes) note(c + " during the run: results are not comparable");
  }
}

void TelemetrySampler::run() {
  Nanos next = clock_.now_ns();
  for (;;) {
    bool want_start = false, want_end = false, stopping = false;
    {
      std::unique_lock lk(mu_);
      const Nanos wait = next - clock_.now_ns();
      if (wait > 0)
        cv_.wait_for(lk, std::chrono::nanoseconds(wait),
                     [&] { return stopping_ || want_start_snapshot_ || want_end_snapshot_; });
      want_start = std::exchange(want_start_snapshot_, false);
      want_end = std::exchange(want_end_snapshot_, false);
      stopping = stopping_;
    }
    if (want_start) take_window_snapshot(true);
    if (want_end) take_window_snapshot(false);
    if (stopping) return;
    const Nanos now = clock_.now_ns();
    if (now >= next) {
      round(now);
      next += cfg_.interval_ns;
      // A slow round (engine timeout) skips the ticks it overran instead of bunching up.
      if (next <= clock_.now_ns()) next = clock_.now_ns() + cfg_.interval_ns;
    }
  }
}

void TelemetrySampler::sample_once() { round(clock_.now_ns()); }

void TelemetrySampler::mark_window(bool start) {
  bool async = false;
  {
    std::lock_guard lk(mu_);
    (start ? t_window_start_ : t_window_end_) = clock_.now_ns();
    // The sampler thread scrapes while it runs; after stop() (or on a virtual clock) the
    // caller does.
    async = threaded_ && !stopping_;
    if (async) (start ? want_start_snapshot_ : want_end_snapshot_) = true;
  }
  if (async) cv_.notify_all();
  else take_window_snapshot(start);
}

void TelemetrySampler::mark_window_start() { mark_window(true); }
void TelemetrySampler::mark_window_end() { mark_window(false); }

void TelemetrySampler::take_window_snapshot(bool start) {
  if (cfg_.metrics_url.empty()) return;
  std::lock_guard src(sources_mu_);
  auto snap = scrape_engine(clock_.now_ns());
  std::lock_guard lk(mu_);
  (start ? window_start_ : window_end_) = std::move(snap);
}

std::optional<TelemetrySampler::EngineSnapshot> TelemetrySampler::scrape_engine(Nanos t_request) {
  const FetchResult page = cfg_.fetch(cfg_.metrics_url);
  // Stamp the middle of the request: the page describes some instant inside it.
  const Nanos t = t_request + (clock_.now_ns() - t_request) / 2;
  if (!page.ok) {
    {
      std::lock_guard lk(mu_);
      ++engine_errors_;
    }
    note("engine metrics unavailable at " + cfg_.metrics_url + ": " + page.error + " (will keep trying)");
    return std::nullopt;
  }
  auto parsed = parse_prometheus(page.body);
  if (!parsed) {
    {
      std::lock_guard lk(mu_);
      ++engine_errors_;
    }
    note(fmt::format("engine metrics at {} are not Prometheus text: line {}: {}", cfg_.metrics_url,
                     parsed.error().line, parsed.error().message));
    return std::nullopt;
  }
  Engine engine;
  {
    std::lock_guard lk(mu_);
    engine = engine_;
  }
  EngineSnapshot snap{t, normalize(*parsed, engine)};
  if (engine == Engine::unknown) {
    if (snap.scrape.engine == Engine::unknown) {
      note("no known engine metrics at " + cfg_.metrics_url + " (use --engine to say which engine it is)");
    } else {
      std::lock_guard lk(mu_);
      engine_ = snap.scrape.engine;
      engine_detected_ = true;
    }
  }
  if (snap.scrape.engine != Engine::unknown)
    for (const auto& n : snap.scrape.notes) note(n);
  add(Record{t, "engine", -1, engine_values(snap.scrape)});
  std::lock_guard lk(mu_);
  ++engine_ok_;
  if (!first_snapshot_) first_snapshot_ = snap;
  last_snapshot_ = snap;
  return snap;
}

void TelemetrySampler::round(Nanos t) {
  std::lock_guard src(sources_mu_);
  if (!cfg_.metrics_url.empty()) scrape_engine(t);
  if (gpu_) {
    const Nanos tg = clock_.now_ns();
    for (const auto& g : gpu_->sample()) add(Record{tg, "gpu", static_cast<int>(g.index), gpu_values(g)});
  }
  if (host_) {
    const Nanos th = clock_.now_ns();
    if (auto v = host_->sample(th); !v.empty()) add(Record{th, "host", -1, std::move(v)});
  }
  // Client health: CPU shares are per run-clock second, meaningless on a virtual clock.
  const Nanos tc = clock_.now_ns();
  Values v;
  const Nanos proc = process_cpu_ns();
  std::optional<ClientStats::Reading> r;
  if (cfg_.client) r = cfg_.client->take();
  if (prev_client_t_ && tc > *prev_client_t_ && !clock_.is_virtual()) {
    const double dt = static_cast<double>(tc - *prev_client_t_);
    v.emplace_back("process_cpu_pct", 100.0 * static_cast<double>(proc - prev_proc_cpu_) / dt);
    if (r && r->loop_thread_cpu_ns && prev_loop_cpu_)
      v.emplace_back("loop_cpu_pct", 100.0 * static_cast<double>(*r->loop_thread_cpu_ns - *prev_loop_cpu_) / dt);
  }
  if (r) {
    v.emplace_back("loop_lag_max_ms", ns_to_ms(r->lag_max_ns));
    v.emplace_back("loop_lag_last_ms", ns_to_ms(r->lag_last_ns));
    v.emplace_back("in_flight", static_cast<double>(r->in_flight));
    prev_loop_cpu_ = r->loop_thread_cpu_ns;
  }
  prev_client_t_ = tc;
  prev_proc_cpu_ = proc;
  if (!v.empty()) add(Record{tc, "client", -1, std::move(v)});
}

std::vector<TelemetrySampler::Record> TelemetrySampler::records() const {
  std::lock_guard lk(mu_);
  return records_;
}

nlohmann::json TelemetrySampler::summary() const {
  std::lock_guard lk(mu_);
  nlohmann::json out;
  out["interval_s"] = ns_to_s(cfg_.interval_ns);
  const bool windowed = t_window_start_ && t_window_end_;
  std::map<std::string, std::size_t> per_source;
  struct Acc {
    std::size_t n = 0;
    double sum = 0, max = -std::numeric_limits<double>::infinity(), last = 0;
  };
  std::map<std::string, Acc> acc;
  for (const auto& r : records_) {
    ++per_source[r.source];
    if (windowed && (r.t < *t_window_start_ || r.t > *t_window_end_)) continue;
    const std::string prefix = r.source == "gpu" ? fmt::format("gpu{}.", r.device) : r.source + ".";
    for (const auto& [k, val] : r.values) {
      if (r.source == "host" && is_core_series(k)) continue;
      if (!std::isfinite(val)) continue;
      auto& a = acc[prefix + k];
      ++a.n;
      a.sum += val;
      a.max = std::max(a.max, val);
      a.last = val;
    }
  }
  out["samples"] = per_source;
  out["dropped_samples"] = dropped_;
  nlohmann::json window = {{"marked", windowed}};
  if (t_window_start_) window["start_ns"] = *t_window_start_;
  if (t_window_end_) window["end_ns"] = *t_window_end_;
  out["window"] = window;
  nlohmann::json series = nlohmann::json::object();
  for (const auto& [k, a] : acc)
    series[k] = {{"n", a.n}, {"mean", a.sum / static_cast<double>(a.n)}, {"max", a.max}, {"last", a.last}};
  out["series"] = series;

  nlohmann::json engine = {{"engine", std::string(engine_name(engine_))},
                           {"detected", engine_detected_ && cfg_.engine == Engine::unknown},
                           {"metrics_url", cfg_.metrics_url},
                           {"scrapes_ok", engine_ok_},
                           {"scrapes_failed", engine_errors_}};
  out["engine"] = engine;

  // Deltas between the window's snapshots; without marks, between the first and last page.
  const auto& a = window_start_ ? window_start_ : first_snapshot_;
  const auto& b = window_end_ ? window_end_ : last_snapshot_;
  nlohmann::json counters = nlohmann::json::object();
  nlohmann::json hists = nlohmann::json::object();
  if (a && b && a->t < b->t) {
    out["engine"]["delta_from_ns"] = a->t;
    out["engine"]["delta_to_ns"] = b->t;
    for (const auto key : scalar_keys()) {
      if (!is_counter_key(key)) continue;
      const auto p = a->scrape.values.find(std::string(key));
      const auto q = b->scrape.values.find(std::string(key));
      if (p == a->scrape.values.end() || q == b->scrape.values.end()) continue;
      const bool reset = q->second < p->second;
      counters[std::string(key)] = {{"start", p->second},
                                    {"end", q->second},
                                    {"delta", reset ? q->second : q->second - p->second},
                                    {"reset", reset}};
    }
    for (const auto key : histogram_keys()) {
      const auto p = a->scrape.histograms.find(std::string(key));
      const auto q = b->scrape.histograms.find(std::string(key));
      if (p == a->scrape.histograms.end() || q == b->scrape.histograms.end()) continue;
      const auto d = histogram_delta(p->second, q->second);
      if (!d) continue;
      auto j = histogram_json(d->series, d->reset);
      j["source"] = b->scrape.sources.count(std::string(key)) ? b->scrape.sources.at(std::string(key)) : "";
      hists[std::string(key)] = std::move(j);
    }
  }
  out["engine_counters"] = counters;
  out["engine_histograms"] = hists;
  out["notes"] = notes_;
  return out;
}

nlohmann::json TelemetrySampler::manifest() const {
  std::lock_guard lk(mu_);
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : gpu_info_start_) gpus.push_back(to_json(g));
  return {{"gpu_backend", gpu_backend_},
          {"driver_version", driver_version_},
          {"gpus", gpus},
          {"changed_during_run", gpu_changes_},
          {"engine", std::string(engine_name(engine_))},
          {"metrics_url", cfg_.metrics_url},
          {"interval_s", ns_to_s(cfg_.interval_ns)}};
}

void TelemetrySampler::write_jsonl(const std::filesystem::path& path, Nanos origin) const {
  const auto recs = records();
  // Write to a temporary name and rename, so a failure leaves nothing half-written.
  const auto tmp = std::filesystem::path(path.string() + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path.string(), "cannot write telemetry");
    for (const auto& r : recs) {
      nlohmann::ordered_json j;
      j["t"] = r.t - origin;
      j["source"] = r.source;
      if (r.device >= 0) j["gpu"] = r.device;
      for (const auto& [k, v] : r.values) j[k] = std::isfinite(v) ? nlohmann::ordered_json(v) : nullptr;
      out << j.dump() << '\n';
    }
    if (!out.flush()) throw InputError(path.string(), "cannot write telemetry");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw InputError(path.string(), "cannot write telemetry: " + ec.message());
}

}  // namespace inferscope::telemetry
