#include "inferscope/stats/summary.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace inferscope {

// Expected values computed by hand with numpy's "linear" method:
// rank = q/100 * (n-1), interpolate between floor and ceil.
TEST(Summary, LinearInterpolationLikeNumpy) {
  auto s = summarize({4, 1, 3, 2});
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.std, 1.118033988749895, 1e-12);  // population std
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.p50, 2.5);
  EXPECT_NEAR(s.p90, 3.7, 1e-12);
  EXPECT_NEAR(s.p95, 3.85, 1e-12);
  EXPECT_NEAR(s.p99, 3.97, 1e-12);
  EXPECT_NEAR(s.p999, 3.997, 1e-12);
}

TEST(Summary, SelectionAgreesWithSortedPercentiles) {
  std::vector<double> v = {9, 1, 7, 3, 5, 2, 8};
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (double q : {0.0, 10.0, 50.0, 95.0, 99.9, 100.0}) {
    std::vector<double> copy = v;
    EXPECT_DOUBLE_EQ(percentile_select(copy, q), percentile_sorted(sorted, q)) << q;
  }
  std::vector<double> one = {4};
  EXPECT_DOUBLE_EQ(percentile_select(one, 50), 4);
}

TEST(Summary, SingleAndEmpty) {
  auto one = summarize({7});
  EXPECT_DOUBLE_EQ(one.p99, 7);
  EXPECT_DOUBLE_EQ(one.std, 0);
  auto none = summarize({});
  EXPECT_EQ(none.count, 0u);
  auto j = to_json(none);
  EXPECT_TRUE(j["p50"].is_null());
  EXPECT_EQ(j["count"], 0);
}

TEST(Summary, PercentileOfHundred) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  auto s = summarize(v);
  EXPECT_NEAR(s.p50, 50.5, 1e-12);
  EXPECT_NEAR(s.p99, 99.01, 1e-12);
  EXPECT_NEAR(s.p90, 90.1, 1e-12);
}

}  // namespace inferscope
