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

#include "inferscope/core/sim_tokenizer.h"

namespace inferscope {
TEST(SimTokenizer, FillerOfNTokensCountsN) {
  SimTokenizer tok;
  for (int n : {0, 1, 7, 500}) EXPECT_EQ(tok.count(SimTokenizer::filler(42, n)), n);
  EXPECT_EQ(tok.count("  a  b\nc"), 3);
  EXPECT_EQ(SimTokenizer::filler(1, 20), SimTokenizer::filler(1, 20));
  EXPECT_NE(SimTokenizer::filler(1, 20), SimTokenizer::filler(2, 20));
  // Chunks that each start with a space re-tokenize to the sum of their counts.
  EXPECT_EQ(tok.count(SimTokenizer::filler(3, 5) + SimTokenizer::filler(4, 6)), 11);
}
}  // namespace inferscope
