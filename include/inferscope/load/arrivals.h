#pragma once
// Open-loop arrival processes. The whole schedule is drawn from a seeded generator before
// (or independently of) the run, so the same seed gives the same arrival times on every
// run and on every rank of a distributed run (MLPerf LoadGen's rule).
#include <cstdint>
#include <random>
#include <string_view>

#include "inferscope/core/clock.h"

namespace inferscope {

enum class ArrivalKind : std::uint8_t {
  constant,  // exactly 1/rate apart
  poisson,   // exponential inter-arrival times
  gamma,     // gamma inter-arrival times, shape = burstiness (vLLM's convention:
             // burstiness 1 = Poisson, < 1 burstier, > 1 more regular)
};
std::string_view to_string(ArrivalKind k);
ArrivalKind arrival_kind_from_string(std::string_view s);  // throws InputError("--arrival")

// Produces arrival offsets (ns from the start of the measured phase), strictly
// non-decreasing. Deterministic for (kind, rate, burstiness, seed). Not thread-safe.
class ArrivalProcess {
 public:
  // rate_rps > 0; burstiness > 0 (used by gamma; poisson ignores it).
  ArrivalProcess(ArrivalKind kind, double rate_rps, double burstiness, std::uint64_t seed);
  Nanos next();

 private:
  ArrivalKind kind_;
  double rate_;
  double burstiness_;
  std::mt19937_64 rng_;
  double t_s_ = 0;  // running sum in seconds (double keeps sub-ns accumulation error off)
  std::uint64_t n_ = 0;
};

}  // namespace inferscope
