#pragma once
// What `bench`, `sim predict` and `run` share: the load flags, running the load against a
// target, computing the metrics, validity, the live progress line, the summary table,
// and writing DIR/summary.json and DIR/requests.jsonl without ever leaving a half-written
// file (write to a temporary name, then rename).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "inferscope/core/session.h"
#include "inferscope/core/target.h"
#include "inferscope/load/runner.h"
#include "inferscope/stats/run_metrics.h"
#include "inferscope/workload/workload.h"

namespace inferscope::app {

// Flags every load-driving command takes. Filled by CLI11, checked by to_load_options().
struct LoadFlags {
  int concurrency = 0;
  double rate = 0;
  std::string arrival = "poisson";
  double burstiness = 1.0;
  std::size_t max_in_flight = 0;
  std::size_t requests = 0;
  double duration_s = 0;
  std::size_t warmup = 0;
  std::uint64_t seed = 0;
  int input_len = 512;
  int output_len = 128;
  std::string workload;  // --workload SPEC|FILE
  std::string slo;
  double max_send_lag_ms = 10.0;
  std::string out_dir;
  bool quiet = false;
};

// Adds the flags to `cmd`. `out_required`: --out must be given.
void add_load_flags(CLI::App* cmd, LoadFlags& f, bool out_required = true);

// Checks the flags (exactly one of --concurrency/--rate unless the workload brings trace
// times; at least one of --requests/--duration) and returns the options. Throws InputError.
LoadOptions to_load_options(const LoadFlags& f, bool trace_times);

// The workload a run sends: --workload SPEC|FILE, else fixed --input-len/--output-len.
struct PreparedWorkload {
  workload::WorkloadConfig config;
  std::unique_ptr<SessionSource> source;
  bool trace_times = false;  // open loop follows the trace's timestamps
  nlohmann::json description;
};
// `tok` builds exact-length prompts; not owned, must outlive the source.
PreparedWorkload prepare_workload(const LoadFlags& f, const workload::Tokenizer& tok);

struct RunOutcome {
  RunMetrics metrics;
  bool valid = true;
  std::vector<std::string> invalid_reasons;
  nlohmann::json summary;  // what summary.json holds
  bool interrupted = false;
};

struct RunHooks {
  std::function<void()> on_measure_start, on_measure_end;
  // Extra objects merged into summary.json (e.g. "telemetry") once the run is over.
  std::function<void(nlohmann::json& summary)> finish_summary;
  // Extra files written into the output folder, after the run (e.g. telemetry.jsonl).
  std::function<void(const std::string& dir)> write_files;
  LoopObserver* observer = nullptr;  // the load loop's health (telemetry client series)
};

// Runs the load and writes DIR/summary.json + DIR/requests.jsonl (when out_dir is set).
// `label` prefixes the progress line. Installs a SIGINT handler for the run's duration:
// Ctrl-C cancels in-flight requests and writes what was measured, flagged interrupted.
RunOutcome execute_run(Target& target, SessionSource& source, const LoadFlags& flags,
                       bool trace_times, nlohmann::json manifest, const std::string& label,
                       const RunHooks& hooks = {});

// The human-readable summary, as printed after a run.
std::string format_summary_table(const RunOutcome& o, const std::string& title);

// Writes `content` to `path` atomically (temporary file + rename).
void write_file_atomically(const std::string& path, const std::string& content);

// Creates `dir` (and parents). Throws InputError(flag) when it cannot.
void ensure_output_dir(const std::string& dir, const std::string& flag = "--out");

// ISO-8601 UTC time of now, for manifests.
std::string iso_time_now();

}  // namespace inferscope::app
