#include "inferscope/load/arrivals.h"

#include <gtest/gtest.h>

#include <cmath>

#include "inferscope/core/errors.h"

namespace inferscope {

TEST(Arrivals, ConstantIsEvenlySpaced) {
  ArrivalProcess a(ArrivalKind::constant, 4.0, 1.0, 1);
  EXPECT_EQ(a.next(), 0);
  EXPECT_EQ(a.next(), 250 * kNsPerMs);
  EXPECT_EQ(a.next(), 500 * kNsPerMs);
}

TEST(Arrivals, SameSeedSameSchedule) {
  ArrivalProcess a(ArrivalKind::poisson, 10, 1, 7), b(ArrivalKind::poisson, 10, 1, 7), c(ArrivalKind::poisson, 10, 1, 8);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    Nanos x = a.next();
    EXPECT_EQ(x, b.next());
    differs |= x != c.next();
  }
  EXPECT_TRUE(differs);
}

// Mean inter-arrival 1/rate; gamma with shape k has CV 1/sqrt(k): burstiness 0.25 gives
// CV 2, Poisson CV 1. 20k samples put the estimates within a few percent.
TEST(Arrivals, RateAndBurstinessHaveTheirMeaning) {
  for (auto [kind, burst, cv] : {std::tuple{ArrivalKind::poisson, 1.0, 1.0}, {ArrivalKind::gamma, 0.25, 2.0},
                                 {ArrivalKind::gamma, 4.0, 0.5}}) {
    ArrivalProcess a(kind, 50, burst, 3);
    std::vector<double> gaps;
    Nanos prev = a.next();
    for (int i = 0; i < 20000; ++i) {
      Nanos t = a.next();
      gaps.push_back(ns_to_s(t - prev));
      prev = t;
    }
    double mean = 0, var = 0;
    for (double g : gaps) mean += g;
    mean /= gaps.size();
    for (double g : gaps) var += (g - mean) * (g - mean);
    var /= gaps.size();
    EXPECT_NEAR(mean, 1.0 / 50, 0.05 / 50);
    EXPECT_NEAR(std::sqrt(var) / mean, cv, 0.1 * cv);
  }
}

TEST(Arrivals, BadInputIsAnInputError) {
  EXPECT_THROW(ArrivalProcess(ArrivalKind::poisson, 0, 1, 1), InputError);
  EXPECT_THROW(ArrivalProcess(ArrivalKind::gamma, 1, -1, 1), InputError);
  EXPECT_THROW(arrival_kind_from_string("bursty"), InputError);
}

}  // namespace inferscope
