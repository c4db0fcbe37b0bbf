#pragma once
// Telemetry beside a run: flags, and the glue between the TelemetrySampler and the load
// loop (window marks, client health, summary.json and telemetry.jsonl).
#include <CLI/CLI.hpp>

#include <functional>
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
  // In-process (virtual-time) engine: its metrics page comes from `engine_page` (called on
  // the load thread), sampled every --telemetry-interval of virtual time as the load loop
  // turns; no GPU, host or client series (they would describe this machine, not the
  // simulated one).
  RunTelemetry(const TelemetryFlags& f, std::function<std::string()> engine_page, const Clock& clock);
  ~RunTelemetry() override;

  // Starts sampling and returns the hooks execute_run() needs.
  RunHooks start();

  void loop_started() override { stats_.attach_loop_thread(); }
  void loop_stopped() override { stats_.detach_loop_thread(); }
  void loop_turn(Nanos lag_ns, std::size_t in_flight) override;

 private:
  telemetry::ClientStats stats_;
  std::unique_ptr<telemetry::TelemetrySampler> sampler_;
  Nanos origin_ = 0;
  const Clock& clock_;
  Nanos interval_ns_ = 0;
  Nanos next_virtual_sample_ = 0;  // virtual clocks: when loop_turn samples next
};

}  // namespace inferscope::app
