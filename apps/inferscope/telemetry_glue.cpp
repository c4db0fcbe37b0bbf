#include "telemetry_glue.h"

#include <fmt/format.h>

#include <mutex>
#include <set>

#include "inferscope/core/errors.h"
#include "inferscope/telemetry/engine_map.h"

namespace inferscope::app {

void add_telemetry_flags(CLI::App* cmd, TelemetryFlags& f) {
  cmd->add_option("--metrics-url", f.metrics_url, "Engine Prometheus endpoint (default: the target's /metrics)");
  cmd->add_option("--telemetry-interval", f.interval_s, "Seconds between telemetry samples")->capture_default_str();
  cmd->add_option("--metrics-engine", f.metrics_engine,
                  "Metric names to read: auto | vllm | sglang | tgi | llamacpp | trtllm | sim")
      ->capture_default_str();
  cmd->add_option("--gpu-telemetry", f.gpu, "auto | nvml | nvidia-smi | off")->capture_default_str();
  cmd->add_flag("--no-telemetry", f.off, "Do not sample engine, GPU, host or client telemetry");
}

RunTelemetry::RunTelemetry(const TelemetryFlags& f, const std::string& target_base_url, const Clock& clock)
    : clock_(clock) {
  if (f.off) return;
  if (!(f.interval_s > 0)) throw InputError("--telemetry-interval", "must be positive");
  telemetry::TelemetryConfig cfg;
  cfg.interval_ns = s_to_ns(f.interval_s);
  cfg.engine = telemetry::parse_engine(f.metrics_engine, "--metrics-engine");
  if (!f.metrics_url.empty()) cfg.metrics_url = f.metrics_url;
  else if (!target_base_url.empty()) cfg.metrics_url = telemetry::default_metrics_url(target_base_url, cfg.engine);
  if (f.gpu == "auto") cfg.gpu = telemetry::GpuBackend::automatic;
  else if (f.gpu == "nvml") cfg.gpu = telemetry::GpuBackend::nvml;
  else if (f.gpu == "nvidia-smi") cfg.gpu = telemetry::GpuBackend::nvidia_smi;
  else if (f.gpu == "off") cfg.gpu = telemetry::GpuBackend::off;
  else throw InputError("--gpu-telemetry", 0, f.gpu, "expected auto, nvml, nvidia-smi or off");
  cfg.client = &stats_;
  // A sweep runs one sampler per point: say each notice (no GPU, …) once per process.
  cfg.log = [](const std::string& msg) {
    static std::mutex mu;
    static std::set<std::string> said;
    std::lock_guard lock(mu);
    if (said.insert(msg).second) fmt::print(stderr, "inferscope: telemetry: {}\n", msg);
  };
  sampler_ = std::make_unique<telemetry::TelemetrySampler>(std::move(cfg), clock);
}

RunTelemetry::RunTelemetry(const TelemetryFlags& f, std::function<std::string()> engine_page, const Clock& clock)
    : clock_(clock) {
  if (f.off) return;
  if (!(f.interval_s > 0)) throw InputError("--telemetry-interval", "must be positive");
  telemetry::TelemetryConfig cfg;
  cfg.interval_ns = interval_ns_ = s_to_ns(f.interval_s);
  cfg.metrics_url = "in-process://sim/metrics";
  cfg.engine = telemetry::parse_engine(f.metrics_engine, "--metrics-engine");
  cfg.fetch = [page = std::move(engine_page)](const std::string&) {
    return telemetry::FetchResult{true, page(), ""};
  };
  cfg.gpu = telemetry::GpuBackend::off;
  cfg.host = false;
  sampler_ = std::make_unique<telemetry::TelemetrySampler>(std::move(cfg), clock);
}

void RunTelemetry::loop_turn(Nanos lag_ns, std::size_t in_flight) {
  if (lag_ns > 0) stats_.record_lag(lag_ns);
  stats_.set_in_flight(static_cast<std::int64_t>(in_flight));
  if (sampler_ && clock_.is_virtual()) {
    const Nanos now = clock_.now_ns();
    if (now >= next_virtual_sample_) {
      sampler_->sample_once();
      next_virtual_sample_ = now + interval_ns_;
    }
  }
}

RunTelemetry::~RunTelemetry() {
  if (sampler_) sampler_->stop();
}

RunHooks RunTelemetry::start() {
  RunHooks h;
  if (!sampler_) return h;
  sampler_->start();
  h.observer = this;
  h.on_measure_start = [this] {
    origin_ = clock_.now_ns();
    sampler_->mark_window_start();
  };
  h.on_measure_end = [this] { sampler_->mark_window_end(); };
  h.finish_summary = [this](nlohmann::json& summary) {
    sampler_->stop();
    summary["telemetry"] = sampler_->summary();
    summary["manifest"]["telemetry"] = sampler_->manifest();
  };
  h.write_files = [this](const std::string& dir) { sampler_->write_jsonl(dir + "/telemetry.jsonl", origin_); };
  return h;
}

}  // namespace inferscope::app
