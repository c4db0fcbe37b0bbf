#include <gtest/gtest.h>

#include "inferscope/core/errors.h"
#include "inferscope/workload/trace.h"
#include "test_util.h"

namespace inferscope::workload {
namespace {
using testing::shared_path;

// Expects parse_trace to throw InputError at `line` naming `field`.
void expect_error(std::string_view content, TraceFormat f, int line, const std::string& field) {
  try {
    parse_trace(content, f, "t.txt");
    ADD_FAILURE() << "no error for: " << content;
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "t.txt");
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

TEST(Trace, Azure) {
  const auto t = parse_trace(
      "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
      "2023-11-16 18:17:03.9799600,4808,10\r\n"
      "2023-11-16 18:17:04.0319600,3180,8\r\n"
      "2023-11-16 18:18:04.5,110,27\r\n",
      TraceFormat::azure, "a.csv");
  ASSERT_EQ(t.requests.size(), 3u);
  EXPECT_EQ(*t.requests[0].t_ns, 0);
  EXPECT_EQ(*t.requests[1].t_ns, 52'000'000);        // .0319600 - .9799600 + 1 s
  EXPECT_EQ(*t.requests[2].t_ns, 60'520'040'000);    // 18:18:04.5 - 18:17:03.97996
  EXPECT_EQ(t.requests[0].input_tokens, 4808);
  EXPECT_EQ(t.requests[2].output_tokens, 27);
  EXPECT_EQ(t.requests[2].line, 4);
  expect_error("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.97,12,x\n", TraceFormat::azure, 2,
               "GeneratedTokens");
  expect_error("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.97,12,1\n2023/11/16,1,1\n",
               TraceFormat::azure, 3, "TIMESTAMP");
  expect_error("TIMESTAMP,Context,GeneratedTokens\n", TraceFormat::azure, 1, "ContextTokens");
  expect_error("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.97,12\n", TraceFormat::azure, 2, "");
}

TEST(Trace, AzureRealFiles) {
  const auto code = read_trace(shared_path("traces/AzureLLMInferenceTrace_code.csv"));
  EXPECT_EQ(code.format, TraceFormat::azure);
  EXPECT_EQ(code.requests.size(), 8819u);
  EXPECT_EQ(code.requests.front().input_tokens, 4808);
  const auto conv = read_trace(shared_path("traces/AzureLLMInferenceTrace_conv.csv"));
  EXPECT_EQ(conv.requests.size(), 19366u);
}

TEST(Trace, Mooncake) {
  const auto t = parse_trace(
      "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 5, \"hash_ids\": [0, 1]}\n"
      "{\"timestamp\": 1500, \"input_length\": 600, \"output_length\": 7, \"hash_ids\": [0, 2]}\n",
      TraceFormat::mooncake, "m.jsonl");
  ASSERT_EQ(t.requests.size(), 2u);
  EXPECT_EQ(*t.requests[1].t_ns, 1'500'000'000);
  EXPECT_EQ(t.requests[1].hash_ids, (std::vector<std::uint64_t>{0, 2}));
  EXPECT_EQ(t.block_tokens, 512);
  expect_error("{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5}\n{\"timestamp\": 0, \"input_length\": -4, "
               "\"output_length\": 5}\n",
               TraceFormat::mooncake, 2, "input_length");
  expect_error("{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [1, \"a\"]}",
               TraceFormat::mooncake, 1, "hash_ids");
  expect_error("\n{\"timestamp\": 0, \"input_length\": 10", TraceFormat::mooncake, 2, "");
  const auto real = read_trace(shared_path("traces/mooncake_conversation_trace.jsonl"));
  EXPECT_EQ(real.format, TraceFormat::mooncake);
  EXPECT_EQ(real.requests.size(), 12031u);
  EXPECT_EQ(read_trace(shared_path("traces/mooncake_synthetic_trace.jsonl")).requests.size(), 3993u);
}

TEST(Trace, BurstGpt) {
  const auto t = parse_trace(
      "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
      "5,ChatGPT,472,18,490,Conversation log\n"
      "45,ChatGPT,1087,0,1087,Conversation log\n"
      "46.5,GPT-4,417,276,693,API log\n",
      TraceFormat::burstgpt, "b.csv");
  ASSERT_EQ(t.requests.size(), 2u);  // the failed request (0 response tokens) is dropped
  EXPECT_EQ(*t.requests[1].t_ns, 41'500'000'000);
  EXPECT_EQ(t.requests[1].input_tokens, 417);
  expect_error("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n-3,ChatGPT,1,1,2,API log\n",
               TraceFormat::burstgpt, 2, "Timestamp");
}

TEST(Trace, ShareGpt) {
  const auto t = parse_trace(R"([
    {"id": "a", "conversations": [{"from": "human", "value": "hi there"}, {"from": "gpt", "value": "hello you all"},
                                  {"from": "human", "value": "more"}, {"from": "gpt", "value": "ok"}]},
    {"id": "b", "conversations": [{"from": "system", "value": "s"}, {"from": "human", "value": "q"}]}
  ])",
                             TraceFormat::sharegpt, "s.json");
  ASSERT_EQ(t.requests.size(), 3u);
  EXPECT_EQ(t.requests[0].prompt, "hi there");
  EXPECT_EQ(t.requests[0].reply, "hello you all");
  EXPECT_EQ(t.requests[1].turn, 1);
  EXPECT_EQ(t.requests[1].session, t.requests[0].session);
  EXPECT_NE(t.requests[2].session, t.requests[0].session);
  EXPECT_FALSE(t.requests[0].t_ns.has_value());
  expect_error("[\n{\"conversations\": 3}\n]", TraceFormat::sharegpt, 0, "[0].conversations");
  expect_error("[\n{\"conversations\": []},\n", TraceFormat::sharegpt, 3, "");
}

TEST(Trace, InferscopeJsonl) {
  const auto t = parse_trace(
      "{\"block_tokens\": 16}\n"
      "{\"t_ms\": 100, \"input_tokens\": 50, \"output_tokens\": 10, \"type\": \"qa\"}\n"
      "{\"t_ms\": 0, \"input_tokens\": 20, \"output_tokens\": 5, \"session\": \"s1\", \"turn\": 0}\n"
      "{\"input_tokens\": 8, \"output_tokens\": 5, \"session\": \"s1\", \"turn\": 1, \"wait_ms\": 250, \"tool\": true}\n",
      TraceFormat::inferscope, "i.jsonl");
  EXPECT_EQ(t.block_tokens, 16);
  ASSERT_EQ(t.requests.size(), 3u);
  EXPECT_EQ(t.requests[0].session, "s1");  // sorted by arrival; the later turn follows
  EXPECT_EQ(*t.requests[1].t_ns, 100'000'000);
  EXPECT_EQ(t.requests[1].type, "qa");
  EXPECT_EQ(t.requests[2].wait_ns, 250'000'000);
  EXPECT_TRUE(t.requests[2].wait_is_tool);
  expect_error("{\"input_tokens\": 5, \"output_tokens\": 1, \"colour\": 1}", TraceFormat::inferscope, 1, "colour");
  expect_error("{\"output_tokens\": 1}", TraceFormat::inferscope, 1, "input_tokens");
  expect_error("{\"t_ms\": 1, \"input_tokens\": 5, \"output_tokens\": 1}\n{\"input_tokens\": 5, \"output_tokens\": 1}",
               TraceFormat::inferscope, 2, "t_ms");
}

TEST(Trace, WindowAndSpeed) {
  auto t = parse_trace(
      "{\"t_ms\": 0, \"input_tokens\": 1, \"output_tokens\": 1}\n"
      "{\"t_ms\": 1000, \"input_tokens\": 2, \"output_tokens\": 1}\n"
      "{\"t_ms\": 3000, \"input_tokens\": 3, \"output_tokens\": 1}\n"
      "{\"t_ms\": 5000, \"input_tokens\": 4, \"output_tokens\": 1}\n",
      TraceFormat::inferscope, "w.jsonl");
  apply_time_window(t, 2.0, s_to_ns(1), s_to_ns(5));
  ASSERT_EQ(t.requests.size(), 2u);
  EXPECT_EQ(*t.requests[0].t_ns, 0);
  EXPECT_EQ(*t.requests[1].t_ns, 1'000'000'000);  // (3 s - 1 s) / 2
}

TEST(Trace, DetectFormat) {
  EXPECT_EQ(detect_trace_format("x.csv", "TIMESTAMP,ContextTokens,GeneratedTokens"), TraceFormat::azure);
  EXPECT_EQ(detect_trace_format("x.csv", "Timestamp,Model,Request tokens"), TraceFormat::burstgpt);
  EXPECT_EQ(detect_trace_format("x.jsonl", "{\"timestamp\":0,\"input_length\":1,\"hash_ids\":[]}"), TraceFormat::mooncake);
  EXPECT_EQ(detect_trace_format("x.jsonl", "{\"input_tokens\":1}"), TraceFormat::inferscope);
  EXPECT_EQ(detect_trace_format("x.json", "["), TraceFormat::sharegpt);
  EXPECT_FALSE(detect_trace_format("x.txt", "").has_value());
  EXPECT_THROW(read_trace("/nonexistent.csv"), InputError);
}

}  // namespace
}  // namespace inferscope::workload
