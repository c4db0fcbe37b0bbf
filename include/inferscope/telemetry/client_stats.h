#pragma once
// ClientStats: how the load generator tells the telemetry sampler about its own health
// (event-loop lag, in-flight requests, its loop thread's CPU) without sharing a lock.
//
// Ownership: the caller (bench/run) owns one ClientStats that outlives both the load loop
// and the TelemetrySampler; TelemetryConfig::client points at it.
// Threading: the load loop writes (record_lag, set_in_flight, attach/detach); the
// sampler thread reads (take_lag, read). Every member is an atomic; nothing blocks.
#include <atomic>
#include <cstdint>
#include <ctime>
#include <optional>

#include "inferscope/core/clock.h"

namespace inferscope::telemetry {

class ClientStats {
 public:
  // Load loop: how late the loop woke past the deadline it asked for (ns, ≥ 0).
  void record_lag(Nanos lag_ns) {
    if (lag_ns < 0) lag_ns = 0;
    last_lag_ns_.store(lag_ns, std::memory_order_relaxed);
    Nanos cur = max_lag_ns_.load(std::memory_order_relaxed);
    while (lag_ns > cur && !max_lag_ns_.compare_exchange_weak(cur, lag_ns, std::memory_order_relaxed)) {
    }
    lag_samples_.fetch_add(1, std::memory_order_relaxed);
  }
  void set_in_flight(std::int64_t n) { in_flight_.store(n, std::memory_order_relaxed); }
  // Load loop: call on the loop thread when it starts, and detach before it exits, so the
  // sampler can read that thread's CPU clock (evidence for a saturated client).
  void attach_loop_thread();
  void detach_loop_thread() { loop_clock_valid_.store(false, std::memory_order_release); }

  struct Reading {
    Nanos lag_max_ns = 0;   // largest lag since the previous take_lag()
    Nanos lag_last_ns = 0;  // most recent lag
    std::uint64_t lag_samples = 0;  // lags recorded since the previous take_lag()
    std::int64_t in_flight = 0;
    std::optional<Nanos> loop_thread_cpu_ns;  // CPU time of the attached loop thread
  };
  // Sampler: a snapshot; resets the interval maximum and the sample count.
  Reading take();

 private:
  std::atomic<Nanos> max_lag_ns_{0};
  std::atomic<Nanos> last_lag_ns_{0};
  std::atomic<std::uint64_t> lag_samples_{0};
  std::atomic<std::int64_t> in_flight_{0};
  std::atomic<clockid_t> loop_clock_{0};
  std::atomic<bool> loop_clock_valid_{false};
};

}  // namespace inferscope::telemetry
