#pragma once
// Time source for everything that timestamps or schedules.
//
// All timestamps in inferscope are int64 nanoseconds on one clock. In a real run that is
// CLOCK_MONOTONIC (SteadyClock); tests use ManualClock; the simulator advances a
// VirtualClock. Nothing calls std::chrono::steady_clock directly: inject a Clock.
#include <atomic>
#include <cstdint>

namespace inferscope {

using Nanos = std::int64_t;  // nanoseconds; a point on a Clock or a duration
inline constexpr Nanos kNsPerUs = 1'000;
inline constexpr Nanos kNsPerMs = 1'000'000;
inline constexpr Nanos kNsPerSec = 1'000'000'000;

inline double ns_to_ms(Nanos ns) { return static_cast<double>(ns) / 1e6; }
inline double ns_to_s(Nanos ns) { return static_cast<double>(ns) / 1e9; }
inline Nanos ms_to_ns(double ms) { return static_cast<Nanos>(ms * 1e6); }
inline Nanos s_to_ns(double s) { return static_cast<Nanos>(s * 1e9); }

// Reads CLOCK_MONOTONIC. Thread-safe, no allocation (vDSO, ~20 ns).
Nanos monotonic_now_ns();
// Reads CLOCK_REALTIME, for wall-clock stamps in manifests only (never for intervals).
Nanos realtime_now_ns();

// Interface. Implementations are thread-safe for now_ns().
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Nanos now_ns() const = 0;
  // True when time only moves when someone advances it (tests, simulation): callers
  // must not block waiting for it to pass.
  virtual bool is_virtual() const { return false; }
};

// CLOCK_MONOTONIC.
class SteadyClock final : public Clock {
 public:
  Nanos now_ns() const override { return monotonic_now_ns(); }
  static SteadyClock& instance();
};

// Time moves only when the owner calls set()/advance(). Safe to read from any thread;
// advance from one thread at a time.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Nanos start = 0) : now_(start) {}
  Nanos now_ns() const override { return now_.load(std::memory_order_acquire); }
  bool is_virtual() const override { return true; }
  void set(Nanos t) { now_.store(t, std::memory_order_release); }
  void advance(Nanos d) { now_.fetch_add(d, std::memory_order_acq_rel); }

 private:
  std::atomic<Nanos> now_;
};

}  // namespace inferscope
