#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "inferscope/core/sim_tokenizer.h"
#include "inferscope/sim/sim_target.h"
#include "sim_test_util.h"

namespace inferscope::sim {
namespace {
using testing::make_config;

// Drives the target the way the load generator does: submit, then poll with deadlines.
std::vector<RequestRecord*> poll_all(SimTarget& t, std::size_t want) {
  std::vector<RequestRecord*> done;
  for (int i = 0; i < 100000 && done.size() < want; ++i) t.poll(SimTarget::kNoDeadline, done);
  return done;
}

TEST(SimTarget, FillsTheTimelineInVirtualTime) {
  auto cfg = make_config("H100-SXM");
  cfg.mfu = 0.6;
  SimTarget target(cfg, 1'000'000);
  GenRequest req;
  req.input_tokens = 1024;
  req.max_tokens = 5;
  req.keep_text = true;
  RequestRecord rec;
  rec.t_sched = 1'000'000;
  target.submit(req, rec);
  EXPECT_EQ(rec.t_send, 1'000'000);
  EXPECT_EQ(target.in_flight(), 1u);
  const auto done = poll_all(target, 1);
  ASSERT_EQ(done.size(), 1u);
  ASSERT_EQ(done[0], &rec);
  EXPECT_TRUE(rec.ok());
  EXPECT_EQ(rec.http_status, 200);
  // Headers when the front end hands it over: 300 + 0.05 · 1024 µs.
  EXPECT_EQ(rec.t_headers - rec.t_send, 351'200);
  // TTFT as in Engine.OneRequestsTimeToFirstTokenIsFrontEndPlusPrefillStep.
  EXPECT_NEAR(ns_to_ms(rec.t_first - rec.t_send), 0.3512 + 26.3534 + 0.304 + 0.065, 0.001);
  ASSERT_EQ(rec.chunks.size(), 5u);
  for (const auto& c : rec.chunks) EXPECT_EQ(c.tokens, 1);
  EXPECT_EQ(rec.t_last, rec.chunks.back().t_ns);
  EXPECT_EQ(rec.t_done, rec.t_last);
  EXPECT_EQ(rec.completion_tokens, 5);
  EXPECT_EQ(rec.prompt_tokens, 1024);
  EXPECT_EQ(rec.cached_tokens, 0);
  EXPECT_EQ(rec.finish_reason, "length");
  EXPECT_TRUE(rec.usage_streamed);
  EXPECT_EQ(SimTokenizer{}.count(rec.output_text), 5);
  EXPECT_EQ(target.clock().now_ns(), rec.t_done);
  EXPECT_EQ(target.in_flight(), 0u);
}

TEST(SimTarget, PollStopsAtTheDeadline) {
  SimTarget target(make_config());
  GenRequest req;
  req.input_tokens = 100;
  req.max_tokens = 50;
  RequestRecord rec;
  target.submit(req, rec);
  std::vector<RequestRecord*> done;
  target.poll(ms_to_ns(20), done);
  EXPECT_TRUE(done.empty());
  EXPECT_EQ(target.clock().now_ns(), ms_to_ns(20));
  EXPECT_GT(rec.chunks.size(), 0u);  // decoding by 20 ms
  EXPECT_LT(rec.chunks.size(), 50u);
}

TEST(SimTarget, ChatMessagesUseTheTemplateAndShareAPrefix) {
  SimTarget target(make_config());
  GenRequest a;
  std::string sys;
  for (int i = 0; i < 64; ++i) sys += " rule" + std::to_string(i);
  a.messages = {{"system", sys}, {"user", "first question"}};
  a.max_tokens = 4;
  RequestRecord ra, rb;
  target.submit(a, ra);
  poll_all(target, 1);
  // " <|system|>" + 64 words + " <|user|> first question" + " <|assistant|>" = 69 tokens.
  EXPECT_EQ(ra.prompt_tokens, 69);
  GenRequest b = a;
  b.messages[1].content = "another question";
  target.submit(b, rb);
  poll_all(target, 1);
  // The shared 65-token system part covers 4 full blocks: 64 tokens hit.
  EXPECT_EQ(rb.cached_tokens, 64);
}

TEST(SimTarget, RejectionIsAn4xxRecord) {
  SimTarget target(make_config());
  GenRequest req;
  req.input_tokens = 9000;  // over Llama-3-8B's 8192
  RequestRecord rec;
  target.submit(req, rec);
  const auto done = poll_all(target, 1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(rec.error, ErrorClass::http_4xx);
  EXPECT_EQ(rec.http_status, 400);
  EXPECT_GE(rec.t_done, rec.t_send);
}

TEST(SimTarget, CancelAllReturnsEveryRequestCancelled) {
  SimTarget target(make_config());
  GenRequest req;
  req.input_tokens = 100;
  req.max_tokens = 1000;
  RequestRecord r1, r2;
  target.submit(req, r1);
  target.submit(req, r2);
  std::vector<RequestRecord*> done;
  target.poll(ms_to_ns(50), done);
  target.cancel_all();
  target.poll(ms_to_ns(60), done);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(r1.error, ErrorClass::cancelled);
  EXPECT_EQ(r2.error, ErrorClass::cancelled);
  EXPECT_EQ(target.in_flight(), 0u);
  EXPECT_EQ(target.engine().active(), 0u);
}

TEST(SimTarget, EngineSeriesHasOneRowPerStep) {
  SimTarget target(make_config());
  GenRequest req;
  req.input_tokens = 100;
  req.max_tokens = 3;
  RequestRecord rec;
  target.submit(req, rec);
  poll_all(target, 1);
  std::ostringstream out;
  write_engine_series(out, target.engine().steps(), 0);
  std::istringstream in(out.str());
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_TRUE(j.contains("kv_usage") && j.contains("batch_tokens") && j.contains("waiting"));
    if (rows == 0) {
      EXPECT_EQ(j["prefill_tokens"], 100);
    }
    ++rows;
  }
  EXPECT_EQ(rows, 3);  // one prefill step and two decode steps
}

}  // namespace
}  // namespace inferscope::sim
