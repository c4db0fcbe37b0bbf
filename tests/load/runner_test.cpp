#include "inferscope/load/runner.h"

#include <gtest/gtest.h>

#include "fake_target.h"
#include "inferscope/core/errors.h"

namespace inferscope {
namespace {
using testing::FakeTarget;
constexpr Nanos MS = kNsPerMs;

// Single-turn sessions of fixed shape, numbered from 1; optionally with trace times.
class FixedSource final : public SessionSource {
 public:
  explicit FixedSource(int max_tokens, std::size_t limit = 0, Nanos spacing = -1)
      : max_tokens_(max_tokens), limit_(limit), spacing_(spacing) {}
  std::optional<SessionPlan> next() override {
    if (limit_ && n_ >= limit_) return std::nullopt;
    SessionPlan p;
    p.session_id = ++n_;
    Turn t;
    t.req.prompt = "p" + std::to_string(n_);
    t.req.max_tokens = max_tokens_;
    t.req.input_tokens = 10;
    p.turns.push_back(t);
    if (spacing_ >= 0) p.arrival_ns = static_cast<Nanos>(n_ - 1) * spacing_;
    return p;
  }
  bool has_arrival_times() const override { return spacing_ >= 0; }

 private:
  int max_tokens_;
  std::size_t limit_, n_ = 0;
  Nanos spacing_;
};

std::size_t measured(const LoadResult& r) {
  std::size_t n = 0;
  for (const auto& rec : r.records) n += !rec.warmup;
  return n;
}
}  // namespace

// Closed loop, 4 users, each request 10 ms TTFT + 4 tokens 5 ms apart = 25 ms. 12
// requests = 3 waves; every request is sent the instant its user is free.
TEST(Runner, ClosedLoopKeepsConcurrencyUsersBusy) {
  FakeTarget target(10 * MS, 5 * MS);
  FixedSource source(4);
  LoadOptions opt;
  opt.concurrency = 4;
  opt.requests = 12;
  auto r = run_load(target, source, opt);
  ASSERT_EQ(r.records.size(), 12u);
  EXPECT_EQ(target.max_in_flight_seen, 4u);
  for (const auto& rec : r.records) {
    EXPECT_EQ(rec.t_send, rec.t_sched);  // virtual time: no send lag
    EXPECT_TRUE(rec.ok());
  }
  EXPECT_EQ(r.end - r.origin, 3 * 25 * MS);
  EXPECT_TRUE(check_load_validity(r).empty());
  EXPECT_EQ(r.client_cpu_utilization, -1);  // not measured on a virtual clock
}

TEST(Runner, WarmupRunsFirstAndIsFlagged) {
  FakeTarget target(10 * MS, 5 * MS);
  FixedSource source(4);
  LoadOptions opt;
  opt.concurrency = 2;
  opt.requests = 4;
  opt.warmup = 2;
  int starts = 0;
  opt.on_measure_start = [&] { ++starts; };
  auto r = run_load(target, source, opt);
  ASSERT_EQ(r.records.size(), 6u);
  EXPECT_TRUE(r.records[0].warmup && r.records[1].warmup);
  EXPECT_EQ(measured(r), 4u);
  EXPECT_EQ(starts, 1);
  // Measured phase begins after the warm-up drained.
  EXPECT_GE(r.records[2].t_sched, r.records[0].t_done);
  EXPECT_EQ(r.origin, r.records[2].t_sched);
}

// Open loop at a constant 100 req/s: sends 10 ms apart regardless of completions.
TEST(Runner, OpenLoopFollowsTheSchedule) {
  FakeTarget target(30 * MS, 5 * MS);
  FixedSource source(2);
  LoadOptions opt;
  opt.mode = LoadMode::open;
  opt.rate_rps = 100;
  opt.arrival = ArrivalKind::constant;
  opt.requests = 5;
  auto r = run_load(target, source, opt);
  ASSERT_EQ(r.records.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(r.records[i].t_sched - r.origin, static_cast<Nanos>(i) * 10 * MS);
  EXPECT_EQ(target.max_in_flight_seen, 4u);  // 35 ms requests every 10 ms
}

// With a cap of 1 in flight, later requests wait: t_send − t_sched (send lag) records
// exactly how far behind the generator fell, and the run is flagged invalid.
TEST(Runner, InFlightCapShowsAsSendLag) {
  FakeTarget target(30 * MS, 5 * MS);
  FixedSource source(2);
  LoadOptions opt;
  opt.mode = LoadMode::open;
  opt.rate_rps = 100;
  opt.arrival = ArrivalKind::constant;
  opt.max_in_flight = 1;
  opt.requests = 3;
  auto r = run_load(target, source, opt);
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(target.max_in_flight_seen, 1u);
  // Request i scheduled at 10·i ms, sent when the previous finished at 35·i ms.
  EXPECT_EQ(r.records[1].t_send - r.records[1].t_sched, 25 * MS);
  EXPECT_EQ(r.records[2].t_send - r.records[2].t_sched, 50 * MS);
  auto reasons = check_load_validity(r, 10.0);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_NE(reasons[0].find("fell behind"), std::string::npos);
}

TEST(Runner, DurationStopsIssuingAndDrains) {
  FakeTarget target(10 * MS, 5 * MS);
  FixedSource source(4);
  LoadOptions opt;
  opt.mode = LoadMode::open;
  opt.rate_rps = 100;
  opt.arrival = ArrivalKind::constant;
  opt.duration_ns = 95 * MS;
  auto r = run_load(target, source, opt);
  EXPECT_EQ(r.records.size(), 10u);  // sends at 0, 10, …, 90 ms
  for (const auto& rec : r.records) EXPECT_TRUE(rec.ok());
}

TEST(Runner, TraceTimesAreHonouredAndSourceEndStopsTheRun) {
  FakeTarget target(10 * MS, 5 * MS);
  FixedSource source(1, /*limit=*/3, /*spacing=*/7 * MS);
  LoadOptions opt;
  opt.mode = LoadMode::open;
  auto r = run_load(target, source, opt);
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[2].t_sched - r.origin, 14 * MS);
  EXPECT_TRUE(r.source_exhausted);
}

// A 3-turn session: each turn after the first waits for the tool, then carries the
// whole conversation, including the model's actual reply to the previous turn.
TEST(Runner, SessionsCarryHistoryAndToolWaits) {
  class AgentSource final : public SessionSource {
   public:
    std::optional<SessionPlan> next() override {
      SessionPlan p;
      p.session_id = ++n;
      for (int k = 0; k < 3; ++k) {
        Turn t;
        t.req.prompt = " q" + std::to_string(k);
        t.req.max_tokens = 2;
        t.req.type = "agent";
        if (k > 0) {
          t.wait_before_ns = 100 * MS;
          t.wait_is_tool = true;
          t.tool_result = " tool" + std::to_string(k);
        }
        p.turns.push_back(t);
      }
      return p;
    }
    std::uint64_t n = 0;
  } source;
  FakeTarget target(10 * MS, 5 * MS);
  LoadOptions opt;
  opt.concurrency = 1;
  opt.requests = 3;
  auto r = run_load(target, source, opt);
  ASSERT_EQ(target.sent.size(), 3u);
  EXPECT_EQ(target.sent[0].prompt, " q0");
  EXPECT_EQ(target.sent[1].prompt, " q0 reply1 tool1 q1");
  EXPECT_EQ(target.sent[2].prompt, " q0 reply1 tool1 q1 reply2 tool2 q2");
  ASSERT_EQ(target.sent[2].messages.size(), 7u);
  EXPECT_EQ(target.sent[2].messages[1].role, "assistant");
  EXPECT_EQ(target.sent[2].messages[1].content, " reply1");
  EXPECT_EQ(target.sent[2].messages[2].role, "tool");
  EXPECT_EQ(r.records[1].t_sched, r.records[0].t_done + 100 * MS);
  EXPECT_TRUE(r.records[1].wait_is_tool);
  EXPECT_EQ(r.records[2].session_id, 1u);
  EXPECT_EQ(r.records[2].turn, 2);
}

TEST(Runner, FailedTurnEndsItsSessionAndTheUserMovesOn) {
  FakeTarget target(10 * MS, 5 * MS);
  target.fail_ids = {1};
  FixedSource source(2);
  LoadOptions opt;
  opt.concurrency = 1;
  opt.requests = 3;
  auto r = run_load(target, source, opt);
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_FALSE(r.records[0].ok());
  EXPECT_TRUE(r.records[1].ok());
}

TEST(Runner, StopFlagCancelsInFlightAndKeepsEverything) {
  FakeTarget target(10 * MS, 5 * MS);
  FixedSource source(1000);  // each request lasts ~5 s
  std::atomic<bool> stop{false};
  LoadOptions opt;
  opt.concurrency = 3;
  opt.requests = 100;
  opt.stop = &stop;
  opt.progress_interval_ns = 100 * MS;
  opt.on_progress = [&](const LoadProgress& p) {
    if (p.elapsed_s >= 0.2) stop = true;
  };
  auto r = run_load(target, source, opt);
  EXPECT_TRUE(r.interrupted);
  ASSERT_EQ(r.records.size(), 3u);
  for (const auto& rec : r.records) EXPECT_EQ(rec.error, ErrorClass::cancelled);
}

TEST(Runner, RejectsRunsWithoutAnEnd) {
  FakeTarget target(MS, MS);
  FixedSource source(1);
  LoadOptions opt;
  EXPECT_THROW(run_load(target, source, opt), InputError);
  opt.requests = 1;
  opt.concurrency = 0;
  EXPECT_THROW(run_load(target, source, opt), InputError);
}

}  // namespace inferscope
