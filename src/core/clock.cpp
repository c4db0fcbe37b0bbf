#include "inferscope/core/clock.h"

#include <ctime>

namespace inferscope {

Nanos monotonic_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

Nanos realtime_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

SteadyClock& SteadyClock::instance() {
  static SteadyClock clock;
  return clock;
}

}  // namespace inferscope
