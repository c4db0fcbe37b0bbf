#include "inferscope/core/clock.h"

#include <gtest/gtest.h>

#include "inferscope/core/errors.h"

namespace inferscope {

TEST(Clock, SteadyIsMonotonic) {
  Nanos a = SteadyClock::instance().now_ns();
  Nanos b = SteadyClock::instance().now_ns();
  EXPECT_LE(a, b);
  EXPECT_FALSE(SteadyClock::instance().is_virtual());
}

TEST(Clock, ManualMovesOnlyWhenTold) {
  ManualClock c(100);
  EXPECT_EQ(c.now_ns(), 100);
  c.advance(50);
  EXPECT_EQ(c.now_ns(), 150);
  c.set(7);
  EXPECT_EQ(c.now_ns(), 7);
  EXPECT_TRUE(c.is_virtual());
}

TEST(InputError, NamesFileLineAndField) {
  InputError e("plan.yaml", 12, "rate", "must be positive");
  EXPECT_STREQ(e.what(), "plan.yaml:12: field 'rate': must be positive");
  InputError f("--slo", "bad");
  EXPECT_STREQ(f.what(), "--slo: bad");
}

}  // namespace inferscope
