#include "inferscope/load/arrivals.h"

#include <cmath>

#include "inferscope/core/errors.h"

namespace inferscope {

std::string_view to_string(ArrivalKind k) {
  switch (k) {
    case ArrivalKind::constant: return "constant";
    case ArrivalKind::poisson: return "poisson";
    case ArrivalKind::gamma: return "gamma";
  }
  return "?";
}

ArrivalKind arrival_kind_from_string(std::string_view s) {
  if (s == "constant") return ArrivalKind::constant;
  if (s == "poisson") return ArrivalKind::poisson;
  if (s == "gamma") return ArrivalKind::gamma;
  throw InputError("--arrival", 0, std::string(s), "expected constant, poisson or gamma");
}

ArrivalProcess::ArrivalProcess(ArrivalKind kind, double rate_rps, double burstiness, std::uint64_t seed)
    : kind_(kind), rate_(rate_rps), burstiness_(burstiness), rng_(seed) {
  if (!(rate_rps > 0) || !std::isfinite(rate_rps)) throw InputError("--rate", "must be a positive number");
  if (!(burstiness > 0) || !std::isfinite(burstiness)) throw InputError("--burstiness", "must be a positive number");
}

Nanos ArrivalProcess::next() {
  // The first request goes at t = 0 so a run's start is not a random wait.
  if (n_++ == 0) return 0;
  switch (kind_) {
    case ArrivalKind::constant: t_s_ = static_cast<double>(n_ - 1) / rate_; break;
    case ArrivalKind::poisson: t_s_ += std::exponential_distribution<double>(rate_)(rng_); break;
    case ArrivalKind::gamma:
      t_s_ += std::gamma_distribution<double>(burstiness_, 1.0 / (rate_ * burstiness_))(rng_);
      break;
  }
  return s_to_ns(t_s_);
}

}  // namespace inferscope
