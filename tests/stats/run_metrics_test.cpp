#include "inferscope/stats/run_metrics.h"

#include <gtest/gtest.h>

#include "inferscope/core/errors.h"

namespace inferscope {
namespace {
constexpr Nanos MS = kNsPerMs;

RequestRecord worked_request() {
  RequestRecord r;
  r.id = 1;
  r.t_sched = 0;
  r.t_send = 1 * MS;
  r.t_headers = 2 * MS;
  r.t_first = 11 * MS;
  r.chunks = {{11 * MS, 1}, {21 * MS, 1}, {31 * MS, 2}};
  r.t_last = 31 * MS;
  r.t_done = 32 * MS;
  r.completion_tokens = 4;
  r.tokenizer_output_tokens = 4;
  r.prompt_tokens = 100;
  return r;
}
}  // namespace

TEST(RunMetrics, WorkedByHand) {
  std::vector<RequestRecord> recs{worked_request()};
  RequestRecord failed;
  failed.id = 2;
  failed.t_sched = 0;
  failed.t_send = 2 * MS;
  failed.t_done = 3 * MS;
  failed.error = ErrorClass::http_5xx;
  recs.push_back(failed);
  RequestRecord warm = worked_request();
  warm.warmup = true;
  recs.push_back(warm);

  auto m = compute_run_metrics(recs, {});
  EXPECT_EQ(m.issued, 2u);
  EXPECT_EQ(m.completed, 1u);
  EXPECT_EQ(m.failed, 1u);
  EXPECT_EQ(m.warmup, 1u);
  EXPECT_EQ(m.errors_by_class.at("http_5xx"), 1u);
  EXPECT_DOUBLE_EQ(m.all.ttft.p50, 10.0);
  EXPECT_DOUBLE_EQ(m.all.ttft_sched.p50, 11.0);
  EXPECT_DOUBLE_EQ(m.all.send_lag.p50, 1.0);
  EXPECT_NEAR(m.all.tpot.p50, 20.0 / 3.0, 1e-9);
  EXPECT_EQ(m.all.itl.count, 2u);
  EXPECT_DOUBLE_EQ(m.all.itl.max, 10.0);
  // The last gap (10 ms) carried two tokens: per-token ITL samples 10, 5, 5.
  EXPECT_EQ(m.all.itl_token.count, 3u);
  EXPECT_DOUBLE_EQ(m.all.itl_token.min, 5.0);
  EXPECT_DOUBLE_EQ(m.all.e2e.p50, 30.0);
  EXPECT_DOUBLE_EQ(m.all.e2e_sched.p50, 31.0);
  // Throughput window: first send 1 ms to last done 32 ms = 31 ms.
  EXPECT_NEAR(m.duration_s, 0.031, 1e-12);
  EXPECT_NEAR(m.output_tokens_per_s, 4 / 0.031, 1e-6);
  EXPECT_NEAR(m.total_tokens_per_s, 104 / 0.031, 1e-6);
}

TEST(RunMetrics, TpotUndefinedForOneToken) {
  RequestRecord r = worked_request();
  r.completion_tokens = 1;
  EXPECT_FALSE(request_tpot_ms(r));
  r.completion_tokens = -1;  // falls back to the tokenizer count
  r.tokenizer_output_tokens = 4;
  EXPECT_NEAR(*request_tpot_ms(r), 20.0 / 3.0, 1e-9);
}

TEST(RunMetrics, GoodputCountsRequestsMeetingEverySlo) {
  std::vector<RequestRecord> recs;
  for (int i = 0; i < 4; ++i) {
    RequestRecord r = worked_request();
    r.id = i;
    r.t_first = (5 + 5 * i) * MS;  // TTFT 4, 9, 14, 19 ms
    r.chunks.front().t_ns = r.t_first;
    recs.push_back(r);
  }
  auto slos = parse_slos("ttft_p50=10ms, tpot_p99=1s");
  auto m = compute_run_metrics(recs, slos);
  EXPECT_EQ(m.good, 2u);
  EXPECT_DOUBLE_EQ(m.good_fraction, 0.5);
  ASSERT_EQ(m.slos.size(), 2u);
  EXPECT_NEAR(m.slos[0].observed_ms, 11.5, 1e-9);  // p50 of 4, 9, 14, 19
  EXPECT_FALSE(m.slos[0].met);
  EXPECT_TRUE(m.slos[0].enough_samples);
  EXPECT_FALSE(m.slos[1].enough_samples);  // p99 needs 100 samples
  EXPECT_TRUE(m.slos[1].met);
}

TEST(RunMetrics, FailedRequestsAreNeverGood) {
  RequestRecord r = worked_request();
  r.error = ErrorClass::timeout;
  auto m = compute_run_metrics({r}, parse_slos("ttft_p50=1s"));
  EXPECT_EQ(m.good, 0u);
  EXPECT_EQ(m.all.ttft.count, 0u);
}

TEST(RunMetrics, SteadyWindowExcludesRampAndDrain) {
  // Two requests: A completes at 32 ms, B is sent at 40 ms. Window [32, 40] ms holds
  // B's chunks at 33 and 39 ms only.
  RequestRecord a = worked_request();
  RequestRecord b = worked_request();
  b.id = 2;
  b.t_send = 40 * MS;
  b.chunks = {{33 * MS, 3}, {39 * MS, 2}, {45 * MS, 1}};
  b.t_first = 33 * MS;
  b.t_last = 45 * MS;
  b.t_done = 46 * MS;
  auto m = compute_run_metrics({a, b}, {});
  ASSERT_TRUE(m.steady_window_s);
  EXPECT_NEAR(*m.steady_window_s, 0.008, 1e-12);
  EXPECT_NEAR(*m.steady_output_tokens_per_s, 5 / 0.008, 1e-6);
}

TEST(RunMetrics, ParseSloErrors) {
  EXPECT_THROW(parse_slos("ttft=5ms"), InputError);
  EXPECT_THROW(parse_slos("latency_p95=5ms"), InputError);
  EXPECT_THROW(parse_slos("ttft_p97=5ms"), InputError);
  EXPECT_THROW(parse_slos("ttft_p95=-5ms"), InputError);
  auto s = parse_slos("e2e_p99=2s,itl_p999=300us");
  EXPECT_DOUBLE_EQ(s[0].threshold_ms, 2000);
  EXPECT_DOUBLE_EQ(s[1].threshold_ms, 0.3);
  EXPECT_DOUBLE_EQ(s[1].percentile, 99.9);
}

TEST(RunMetrics, SplitsByType) {
  RequestRecord a = worked_request();
  RequestRecord b = worked_request();
  b.type = "long_doc";
  auto m = compute_run_metrics({a, b}, {});
  EXPECT_EQ(m.by_type.size(), 2u);
  EXPECT_EQ(m.by_type.at("long_doc").ttft.count, 1u);
  auto j = to_json(m);
  EXPECT_TRUE(j.contains("by_type"));
  EXPECT_EQ(j["ttft_ms"]["count"], 2);
}

}  // namespace inferscope
