#pragma once
// The load generator: drives a Target with sessions from a SessionSource in closed loop
// (N users) or open loop (arrival process or trace timestamps), and returns every
// request's timeline. It neither knows nor cares whether the target is a real engine,
// the sim server over loopback, or the in-process simulator in virtual time.
//
// Threading: run_load() runs on the calling thread and drives the target from it.
// `stop` may be set from a signal handler or another thread.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "inferscope/core/session.h"
#include "inferscope/core/target.h"
#include "inferscope/core/timeline.h"
#include "inferscope/load/arrivals.h"

namespace inferscope {

enum class LoadMode : std::uint8_t { closed, open };

// A live view for the progress line. Counts exclude warm-up.
struct LoadProgress {
  std::size_t issued = 0, done = 0, failed = 0, in_flight = 0;
  std::size_t total = 0;      // the --requests target, 0 when bounded by duration
  double elapsed_s = 0;       // since the measured phase began
  double duration_s = 0;      // the --duration target, 0 when bounded by count
  double output_tokens_per_s = 0;
  double ttft_p50_ms = 0;     // over requests finished so far
  bool warming_up = false;
};

// Receives the load loop's own health as it runs (telemetry's client series). Called on
// the load thread, once per loop turn: implementations must be cheap and non-blocking.
class LoopObserver {
 public:
  virtual ~LoopObserver() = default;
  virtual void loop_started() = 0;   // on the load thread, before the first request
  virtual void loop_stopped() = 0;   // on the load thread, after the last
  // How late poll() returned past the deadline it was given (real clocks only), and the
  // requests now in flight.
  virtual void loop_turn(Nanos lag_ns, std::size_t in_flight) = 0;
};

struct LoadOptions {
  LoadMode mode = LoadMode::closed;
  int concurrency = 1;                   // closed loop: users
  double rate_rps = 0;                   // open loop without trace timestamps
  ArrivalKind arrival = ArrivalKind::poisson;
  double burstiness = 1.0;
  std::size_t max_in_flight = 0;         // open loop cap; 0 = none. Requests over the cap
                                         // wait; their send lag shows it.
  bool use_trace_times = true;           // open loop: honour SessionPlan::arrival_ns
  std::size_t requests = 0;              // measured requests to issue (turns); 0 = no cap
  Nanos duration_ns = 0;                 // stop issuing after this long; 0 = no cap
  std::size_t warmup = 0;                // warm-up requests, run to completion first
  std::uint64_t seed = 0;                // arrival process seed
  Nanos drain_timeout_ns = 0;            // after issuing stops, cancel what is still in
                                         // flight after this long; 0 = wait for all
  Nanos progress_interval_ns = kNsPerSec;
  std::function<void(const LoadProgress&)> on_progress;  // called on the load thread
  std::function<void()> on_measure_start;  // warm-up is over (telemetry window opens)
  std::function<void()> on_measure_end;    // the last measured request finished
  const std::atomic<bool>* stop = nullptr; // Ctrl-C: cancel in-flight, return partial
  LoopObserver* observer = nullptr;        // not owned; outlives run_load()
  // Checks the output of a completed request that asked for structured output or tools
  // (the request's response_format_json / tools_json are non-empty; its text is kept) and
  // sets rec.output_check. Called on the load thread.
  std::function<void(const GenRequest& req, RequestRecord& rec)> check_output;
};

struct LoadResult {
  std::deque<RequestRecord> records;  // every request issued, warm-up first; stable order
  Nanos origin = 0;          // clock time the measured phase began (record times are absolute)
  Nanos end = 0;             // clock time the run ended
  bool interrupted = false;  // stopped by `stop`
  bool source_exhausted = false;
  // Client health, for validity: CPU of the load thread over wall time (real clocks
  // only), and how late poll() returned past the deadline it was given.
  double client_cpu_utilization = -1;  // -1 when not measured (virtual clock)
  double loop_lag_p99_ms = 0;
  double loop_lag_max_ms = 0;
};

// Runs the load. Throws InputError for inconsistent options (no stop condition, rate ≤ 0
// in open loop, concurrency < 1). Failures of requests are values in the records.
LoadResult run_load(Target& target, SessionSource& source, const LoadOptions& opt);

// Validity checks on a finished run (DESIGN.md "A run is invalid"): the generator fell
// behind (send-lag p99 over `max_send_lag_p99_ms`), or its CPU was saturated (over
// `max_client_cpu`). Returns the reasons; empty means valid.
std::vector<std::string> check_load_validity(const LoadResult& r, double max_send_lag_p99_ms = 10.0,
                                             double max_client_cpu = 0.9);

}  // namespace inferscope
