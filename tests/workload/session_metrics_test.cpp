#include <gtest/gtest.h>

#include "inferscope/workload/session_metrics.h"

namespace inferscope::workload {
namespace {

RequestRecord rec(std::uint64_t sid, int turn, Nanos send, Nanos last, bool tool = false) {
  RequestRecord r;
  r.session_id = sid;
  r.turn = turn;
  r.t_send = send;
  r.t_last = last;
  r.wait_is_tool = tool;
  return r;
}

TEST(SessionMetrics, SplitsE2EIntoModelToolAndThink) {
  // Session 7: turn 0 100..400 ms, tool 400..1400, turn 1 1400..1600, think 1600..1700,
  // turn 2 1700..2000. e2e 1900 = model 300+200+300 + tool 1000 + think 100.
  std::vector<RequestRecord> recs = {rec(7, 1, 1400, 1600, true), rec(7, 0, 100, 400), rec(7, 2, 1700, 2000, false),
                                     rec(0, 0, 0, 50)};
  for (auto& r : recs) {
    r.t_send *= kNsPerMs;
    r.t_last *= kNsPerMs;
  }
  const auto t = session_timings(recs);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_TRUE(t[0].ok);
  EXPECT_EQ(t[0].turns, 3);
  EXPECT_EQ(t[0].e2e_ns, 1900 * kNsPerMs);
  EXPECT_EQ(t[0].model_ns, 800 * kNsPerMs);
  EXPECT_EQ(t[0].tool_ns, 1000 * kNsPerMs);
  EXPECT_EQ(t[0].think_ns, 100 * kNsPerMs);
  const auto j = session_summary_json(t);
  EXPECT_EQ(j["ok"], 1);
  EXPECT_DOUBLE_EQ(j["e2e_ms"]["p50"].get<double>(), 1900.0);
  EXPECT_DOUBLE_EQ(j["tool_share"].get<double>(), 1000.0 / 1900.0);
}

TEST(SessionMetrics, FailedOrMissingTurnMarksSessionNotOk) {
  std::vector<RequestRecord> recs = {rec(1, 0, 0, 10), rec(1, 1, 20, 30), rec(2, 0, 0, 10), rec(2, 2, 20, 30)};
  recs[1].error = ErrorClass::http_5xx;
  const auto t = session_timings(recs);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_FALSE(t[0].ok);
  EXPECT_EQ(t[0].model_ns, 10);  // the turn that completed in order
  EXPECT_FALSE(t[1].ok);         // turn 1 missing
  EXPECT_EQ(session_summary_json(t)["ok"], 0);
}

}  // namespace
}  // namespace inferscope::workload
