#pragma once
// Telemetry beside a run: flags, and the glue between the TelemetrySampler and the load
// loop (window marks, client health, summary.json and telemetry.jsonl).
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "inferscope/load/runner.h"
#include "inferscope/telemetry/client_stats.h"
#include "inferscope/telemetry/sampler.h"
#include "run_common.h"

namespace inferscope::app {

struct TelemetryFlags {
  std::string metrics_url;      // empty: the target's default metrics endpoint
  double interval_s = 1.0;
  std::string metrics_engine = "auto";
  std::string gpu = "auto";     // auto | nvml | nvidia-smi | off
  bool off = false;
};

void add_telemetry_flags(CLI::App* cmd, TelemetryFlags& f);

// Owns the sampler and the client stats for one run. Threading: construct, hooks() and
// the destructor on the command's thread; the LoopObserver methods run on the load thread.
class RunTelemetry final : public LoopObserver {
 public:
  // `target_base_url` gives the default metrics endpoint; empty and no --metrics-url
  // means no engine series. `clock` must be the run's clock and outlive this object.
  RunTelemetry(const TelemetryFlags& f, const std::string& target_base_url, const Clock& clock);
  ~RunTelemetry() override;

  // Starts sampling and returns the hooks execute_run() needs.
  RunHooks start();

  void loop_started() override { stats_.attach_loop_thread(); }
  void loop_stopped() override { stats_.detach_loop_thread(); }
  void loop_turn(Nanos lag_ns, std::size_t in_flight) override {
    if (lag_ns > 0) stats_.record_lag(lag_ns);
    stats_.set_in_flight(static_cast<std::int64_t>(in_flight));
  }

 private:
  telemetry::ClientStats stats_;
  std::unique_ptr<telemetry::TelemetrySampler> sampler_;
  Nanos origin_ = 0;
  const Clock& clock_;
};

}  // namespace inferscope::app
