#include "inferscope/telemetry/client_stats.h"

#include <pthread.h>

namespace inferscope::telemetry {

void ClientStats::attach_loop_thread() {
  clockid_t cid{};
  if (pthread_getcpuclockid(pthread_self(), &cid) != 0) return;
  loop_clock_.store(cid, std::memory_order_relaxed);
  loop_clock_valid_.store(true, std::memory_order_release);
}

ClientStats::Reading ClientStats::take() {
  Reading r;
  r.lag_max_ns = max_lag_ns_.exchange(0, std::memory_order_relaxed);
  r.lag_last_ns = last_lag_ns_.load(std::memory_order_relaxed);
  r.lag_samples = lag_samples_.exchange(0, std::memory_order_relaxed);
  r.in_flight = in_flight_.load(std::memory_order_relaxed);
  if (loop_clock_valid_.load(std::memory_order_acquire)) {
    timespec ts{};
    // Fails (EINVAL) if the thread has already gone; then there is simply no reading.
    if (clock_gettime(loop_clock_.load(std::memory_order_relaxed), &ts) == 0)
      r.loop_thread_cpu_ns = static_cast<Nanos>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
  }
  return r;
}

}  // namespace inferscope::telemetry
