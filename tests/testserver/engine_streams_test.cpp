#include <gtest/gtest.h>

#include "inferscope/testserver/script_server.h"

namespace inferscope::testserver {
namespace {

std::vector<std::string> bytes_of(const Script& sc) {
  std::vector<std::string> out;
  for (const auto& s : sc.steps) out.push_back(s.bytes);
  return out;
}
std::vector<Nanos> delays_of(const Script& sc) {
  std::vector<Nanos> out;
  for (const auto& s : sc.steps) out.push_back(s.delay_ns);
  return out;
}

TEST(EngineStreams, NumberedTokens) {
  EXPECT_EQ(numbered_tokens(3), (std::vector<std::string>{"t0 ", "t1 ", "t2 "}));
  EXPECT_TRUE(numbered_tokens(0).empty());
}

TEST(EngineStreams, OpenAICompletionsWithUsageAndDone) {
  StreamSpec spec;
  spec.tokens = {"Hi", " there"};
  spec.first_delay_ns = 20 * kNsPerMs;
  spec.gap_ns = 10 * kNsPerMs;
  spec.prompt_tokens = 5;
  Script sc = engine_stream(spec);
  EXPECT_EQ(sc.status, 200);
  EXPECT_TRUE(sc.chunked);
  const std::string head =
      R"(data: {"id":"cmpl-test","object":"text_completion","created":1700000000,"model":"test-model",)";
  EXPECT_EQ(bytes_of(sc),
            (std::vector<std::string>{
                head + R"("choices":[{"index":0,"logprobs":null,"text":"Hi","finish_reason":null}]})" "\n\n",
                head + R"("choices":[{"index":0,"logprobs":null,"text":" there","finish_reason":"length"}]})" "\n\n",
                head + R"("choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}})" "\n\n",
                "data: [DONE]\n\n"}));
  EXPECT_EQ(delays_of(sc), (std::vector<Nanos>{20 * kNsPerMs, 10 * kNsPerMs, 0, 0}));
}

TEST(EngineStreams, ChatRoleChunkFirstAndContinuousUsage) {
  StreamSpec spec;
  spec.format = EngineFormat::openai_chat;
  spec.tokens = {"a", "bc"};
  spec.chunk_tokens = {1, 2};  // a speculative-decoding chunk with two tokens
  spec.continuous_usage = true;
  spec.usage = false;
  spec.prompt_tokens = 4;
  Script sc = engine_stream(spec);
  auto b = bytes_of(sc);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_NE(b[0].find(R"("delta":{"role":"assistant","content":""})"), std::string::npos);
  EXPECT_NE(b[1].find(R"("delta":{"content":"a"})"), std::string::npos);
  EXPECT_NE(b[1].find(R"("usage":{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5})"),
            std::string::npos);
  EXPECT_NE(b[2].find(R"("usage":{"prompt_tokens":4,"completion_tokens":3,"total_tokens":7})"),
            std::string::npos);
  EXPECT_NE(b[2].find(R"("finish_reason":"length")"), std::string::npos);
  EXPECT_EQ(b[3], "data: [DONE]\n\n");
}

TEST(EngineStreams, OpenAIWithoutEndMarkerHasNoDoneAndNoFinishReason) {
  StreamSpec spec;
  spec.tokens = {"x"};
  spec.end_marker = false;
  auto b = bytes_of(engine_stream(spec));
  ASSERT_EQ(b.size(), 1u);
  EXPECT_NE(b[0].find(R"("finish_reason":null)"), std::string::npos);
}

TEST(EngineStreams, SGLangCumulativeText) {
  StreamSpec spec;
  spec.format = EngineFormat::sglang_generate;
  spec.tokens = {"A", "B"};
  spec.prompt_tokens = 3;
  EXPECT_EQ(bytes_of(engine_stream(spec)),
            (std::vector<std::string>{
                R"(data: {"text":"A","meta_info":{"id":"sglang-test","finish_reason":null,"prompt_tokens":3,"completion_tokens":1,"cached_tokens":0}})" "\n\n",
                R"(data: {"text":"AB","meta_info":{"id":"sglang-test","finish_reason":{"type":"length","length":2},"prompt_tokens":3,"completion_tokens":2,"cached_tokens":0}})" "\n\n",
                "data: [DONE]\n\n"}));
}

TEST(EngineStreams, LlamaCppFinalEventWithTimingsNoDone) {
  StreamSpec spec;
  spec.format = EngineFormat::llamacpp_completion;
  spec.tokens = {"x", "y", "z"};
  spec.prompt_tokens = 7;
  auto b = bytes_of(engine_stream(spec));
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0], R"(data: {"content":"x","tokens":[],"stop":false,"id_slot":0,"index":0})" "\n\n");
  EXPECT_NE(b[3].find(R"("stop":true)"), std::string::npos);
  EXPECT_NE(b[3].find(R"("timings":{"prompt_n":7,"prompt_ms":12.5,"predicted_n":3,)"),
            std::string::npos);
  for (const auto& s : b) EXPECT_EQ(s.find("[DONE]"), std::string::npos);
}

TEST(EngineStreams, TgiNoSpaceAfterDataAndFinalDetails) {
  StreamSpec spec;
  spec.format = EngineFormat::tgi_generate_stream;
  spec.tokens = {"p", "q"};
  auto b = bytes_of(engine_stream(spec));
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0],
            R"(data:{"index":1,"token":{"id":1,"text":"p","logprob":-0.5,"special":false},"generated_text":null,"details":null,"top_tokens":null})" "\n\n");
  EXPECT_NE(b[1].find(R"("generated_text":"pq","details":{"finish_reason":"length","generated_tokens":2)"),
            std::string::npos);
}

TEST(EngineStreams, ExplicitDelaysOverrideGap) {
  StreamSpec spec;
  spec.format = EngineFormat::llamacpp_completion;
  spec.tokens = {"a", "b"};
  spec.delays_ns = {5, 7};
  spec.gap_ns = 1000;
  EXPECT_EQ(delays_of(engine_stream(spec)), (std::vector<Nanos>{5, 7, 0}));
}

TEST(EngineStreams, JsonResponseAndNullTarget) {
  Script e = json_response(429, R"({"error":"slow down"})", {{"Retry-After", "3"}});
  EXPECT_EQ(e.status, 429);
  EXPECT_FALSE(e.chunked);
  EXPECT_EQ(e.headers, (net::Headers{{"Content-Type", "application/json"}, {"Retry-After", "3"}}));
  ASSERT_EQ(e.steps.size(), 1u);
  EXPECT_EQ(e.steps[0].bytes, R"({"error":"slow down"})");

  Script nt = null_target(EngineFormat::openai_completions, 16);
  ASSERT_EQ(nt.steps.size(), 18u);  // 16 tokens + usage + [DONE]
  for (const auto& s : nt.steps) EXPECT_EQ(s.delay_ns, 0);
}

}  // namespace
}  // namespace inferscope::testserver
