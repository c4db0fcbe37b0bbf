// Golden tests for the stream decoders: recorded and hand-written bodies under
// tests/data/streams/, every timeline field checked against values worked out by hand.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "inferscope/client/protocol.h"
#include "inferscope/core/sim_tokenizer.h"

namespace inferscope {
namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in.good()) << p;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
std::string stream_file(const std::string& name) {
  return read_file(std::filesystem::path(INFERSCOPE_TEST_DATA) / "streams" / name);
}

struct Read {
  Nanos t;
  std::string bytes;
};

// One read per SSE event (split after each blank line), event i arriving at
// t0 + i * step; the remainder after the last blank line is one more read.
std::vector<Read> per_event(const std::string& body, Nanos t0, Nanos step) {
  std::vector<Read> reads;
  std::size_t start = 0;
  while (start < body.size()) {
    std::size_t end = body.find("\n\n", start);
    end = end == std::string::npos ? body.size() : end + 2;
    reads.push_back({t0 + static_cast<Nanos>(reads.size()) * step, body.substr(start, end - start)});
    start = end;
  }
  return reads;
}

struct Result {
  RequestRecord rec;
  bool finished_before_end = false;
};

Result decode(ApiKind api, const std::vector<Read>& reads, const TokenCounter* counter = nullptr,
              bool keep_text = true, Nanos t_end = -1) {
  Result r;
  auto dec = make_stream_decoder(api, counter, keep_text);
  for (const Read& rd : reads) dec->on_body(rd.bytes, rd.t, r.rec);
  r.finished_before_end = dec->finished();
  dec->on_end(t_end >= 0 ? t_end : (reads.empty() ? 0 : reads.back().t), r.rec);
  return r;
}

Result decode_whole(ApiKind api, const std::string& body, const TokenCounter* counter = nullptr) {
  return decode(api, {{0, body}}, counter);
}

std::vector<std::int32_t> tokens_of(const RequestRecord& r) {
  std::vector<std::int32_t> v;
  for (const Chunk& c : r.chunks) v.push_back(c.tokens);
  return v;
}
std::vector<Nanos> times_of(const RequestRecord& r) {
  std::vector<Nanos> v;
  for (const Chunk& c : r.chunks) v.push_back(c.t_ns);
  return v;
}

// Everything but chunk times must not depend on how the body was split into reads.
void expect_same_outcome(const RequestRecord& a, const RequestRecord& b) {
  EXPECT_EQ(tokens_of(a), tokens_of(b));
  EXPECT_EQ(a.prompt_tokens, b.prompt_tokens);
  EXPECT_EQ(a.completion_tokens, b.completion_tokens);
  EXPECT_EQ(a.cached_tokens, b.cached_tokens);
  EXPECT_EQ(a.tokenizer_output_tokens, b.tokenizer_output_tokens);
  EXPECT_EQ(a.usage_streamed, b.usage_streamed);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.error_detail, b.error_detail);
  EXPECT_EQ(a.finish_reason, b.finish_reason);
  EXPECT_EQ(a.output_text, b.output_text);
  EXPECT_EQ(a.server_timings_json, b.server_timings_json);
}

// Feeds `body` split in two at every byte position (and byte by byte) and checks the
// outcome equals the one-read decode.
void check_split_independent(ApiKind api, const std::string& body, const TokenCounter* counter) {
  const Result whole = decode_whole(api, body, counter);
  for (std::size_t k = 1; k < body.size(); ++k) {
    SCOPED_TRACE("split at " + std::to_string(k));
    const Result split = decode(api, {{0, body.substr(0, k)}, {1, body.substr(k)}}, counter);
    expect_same_outcome(whole.rec, split.rec);
    if (::testing::Test::HasFailure()) return;
  }
  std::vector<Read> bytes;
  for (std::size_t i = 0; i < body.size(); ++i)
    bytes.push_back({static_cast<Nanos>(i), body.substr(i, 1)});
  const Result one_by_one = decode(api, bytes, counter);
  expect_same_outcome(whole.rec, one_by_one.rec);
}

constexpr Nanos kT0 = 1'000'000'000;  // first event at 1 s
constexpr Nanos kStep = 10'000'000;   // one event every 10 ms
Nanos at(int event) { return kT0 + event * kStep; }

const SimTokenizer kWords;  // counts words: " big world" = 2

// --- vLLM ------------------------------------------------------------------------------

TEST(Decoder, VllmChatContinuousUsage) {
  // Events: 0 role-only (usage 0), 1 " Hello" (cum 1), 2 " big world" (cum 3),
  // 3 "!" (cum 4), 4 finish_reason=length with empty content, 5 usage-only, 6 [DONE].
  const std::string body = stream_file("vllm_chat_continuous_usage.sse");
  const Result r = decode(ApiKind::chat, per_event(body, kT0, kStep), &kWords);
  EXPECT_TRUE(r.finished_before_end);
  EXPECT_TRUE(r.rec.ok()) << r.rec.error_detail;
  EXPECT_EQ(r.rec.t_first, at(1));
  EXPECT_EQ(r.rec.t_last, at(3));
  EXPECT_EQ(times_of(r.rec), (std::vector<Nanos>{at(1), at(2), at(3)}));
  EXPECT_EQ(tokens_of(r.rec), (std::vector<std::int32_t>{1, 2, 1}));  // usage deltas
  EXPECT_TRUE(r.rec.usage_streamed);
  EXPECT_EQ(r.rec.prompt_tokens, 12);
  EXPECT_EQ(r.rec.completion_tokens, 4);
  EXPECT_EQ(r.rec.cached_tokens, 8);
  EXPECT_EQ(r.rec.tokenizer_output_tokens, 4);  // " Hello"=1, " big world"=2, "!"=1
  EXPECT_EQ(r.rec.finish_reason, "length");
  EXPECT_EQ(r.rec.output_text, " Hello big world!");
  check_split_independent(ApiKind::chat, body, &kWords);
}

TEST(Decoder, VllmCompletionsIncludeUsageOnlyCountsChunks) {
  // Usage only in the final usage-only chunk: chunk tokens come from the counter.
  const std::string body = stream_file("vllm_completions_include_usage.sse");
  Result r = decode(ApiKind::completions, per_event(body, kT0, kStep), &kWords);
  EXPECT_TRUE(r.rec.ok());
  EXPECT_EQ(times_of(r.rec), (std::vector<Nanos>{at(0), at(1), at(2)}));
  EXPECT_EQ(tokens_of(r.rec), (std::vector<std::int32_t>{1, 2, 1}));
  EXPECT_FALSE(r.rec.usage_streamed);
  EXPECT_EQ(r.rec.completion_tokens, 4);
  EXPECT_EQ(r.rec.prompt_tokens, 5);
  EXPECT_EQ(r.rec.cached_tokens, -1);
  EXPECT_EQ(r.rec.finish_reason, "stop");
  EXPECT_EQ(r.rec.output_text, " The quick brown fox");
  // No counter: one token per content chunk.
  r = decode(ApiKind::completions, per_event(body, kT0, kStep), nullptr, false);
  EXPECT_EQ(tokens_of(r.rec), (std::vector<std::int32_t>{1, 1, 1}));
  EXPECT_EQ(r.rec.tokenizer_output_tokens, 3);
  EXPECT_EQ(r.rec.output_text, "");  // keep_text off
  check_split_independent(ApiKind::completions, body, &kWords);
}

TEST(Decoder, VllmErrorEventMidStream) {
  const std::string body = stream_file("vllm_chat_error_midstream.sse");
  const Result r = decode(ApiKind::chat, per_event(body, kT0, kStep));
  EXPECT_EQ(r.rec.error, ErrorClass::server_error_event);
  EXPECT_EQ(r.rec.error_detail, "CUDA error: an illegal memory access was encountered");
  EXPECT_TRUE(r.finished_before_end);
  EXPECT_EQ(times_of(r.rec), (std::vector<Nanos>{at(1)}));  // " Hi" arrived before the error
  check_split_independent(ApiKind::chat, body, nullptr);
}

TEST(Decoder, SglangAbortFinishReasonIsAnError) {
  const Result r = decode_whole(
      ApiKind::completions,
      "data: {\"choices\":[{\"index\":0,\"text\":\"a\",\"finish_reason\":null}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"abort\"}]}\n\ndata: [DONE]\n\n");
  EXPECT_EQ(r.rec.error, ErrorClass::server_error_event);
  EXPECT_EQ(r.rec.chunks.size(), 1u);
}

TEST(Decoder, OlderVllmFlatErrorObject) {
  const Result r = decode_whole(
      ApiKind::completions,
      "data: {\"object\":\"error\",\"message\":\"out of KV cache\",\"type\":\"x\",\"code\":500}\n\n");
  EXPECT_EQ(r.rec.error, ErrorClass::server_error_event);
  EXPECT_EQ(r.rec.error_detail, "out of KV cache");
}

// --- SGLang, TensorRT-LLM, Ollama (OpenAI routes) -------------------------------------

TEST(Decoder, SglangChatReasoningCountsAsContent) {
  // 0 role, 1-2 reasoning_content, 3-4 content, 5 finish, 6 usage (cached 16), 7 [DONE].
  const std::string body = stream_file("sglang_chat_reasoning.sse");
  const Result r = decode(ApiKind::chat, per_event(body, kT0, kStep), &kWords);
  EXPECT_TRUE(r.rec.ok());
  EXPECT_EQ(r.rec.t_first, at(1));  // reasoning is generated content
  EXPECT_EQ(r.rec.t_last, at(4));
  // "Let me think."=3, " Two plus two"=3, "It is"=2, " 4."=1
  EXPECT_EQ(tokens_of(r.rec), (std::vector<std::int32_t>{3, 3, 2, 1}));
  EXPECT_EQ(r.rec.tokenizer_output_tokens, 9);
  EXPECT_EQ(r.rec.completion_tokens, 9);
  EXPECT_EQ(r.rec.prompt_tokens, 20);
  EXPECT_EQ(r.rec.cached_tokens, 16);
  EXPECT_EQ(r.rec.finish_reason, "stop");
  EXPECT_EQ(r.rec.output_text, "It is 4.");  // reasoning is counted, not kept
  check_split_independent(ApiKind::chat, body, &kWords);
}

TEST(Decoder, TrtllmToolCallsAreContent) {
  // 0 role with tool_calls: [] (not content), 1 tool call name, 2 arguments, 3 finish.
  const std::string body = stream_file("trtllm_chat_tool_calls.sse");
  const Result r = decode(ApiKind::chat, per_event(body, kT0, kStep), &kWords);
  EXPECT_TRUE(r.rec.ok());
  EXPECT_EQ(times_of(r.rec), (std::vector<Nanos>{at(1), at(2)}));
  EXPECT_EQ(tokens_of(r.rec), (std::vector<std::int32_t>{1, 2}));  // get_weather; {"city": "Paris"}
  EXPECT_EQ(r.rec.completion_tokens, 12);
  EXPECT_EQ(r.rec.prompt_tokens, 140);
  EXPECT_EQ(r.rec.finish_reason, "tool_calls");
  EXPECT_EQ(r.rec.output_text, "");
  check_split_independent(ApiKind::chat, body, &kWords);
}

TEST(Decoder, OllamaRoleAndContentInFirstChunk) {
  const std::string body = stream_file("ollama_chat.sse");
  const Result r = decode(ApiKind::chat, per_event(body, kT0, kStep));
  EXPECT_TRUE(r.rec.ok());
  EXPECT_EQ(r.rec.t_first, at(0));
  EXPECT_EQ(r.rec.t_last, at(2));
  EXPECT_EQ(tokens_of(r.rec), (std::vector<std::int32_t>{1, 1, 1}));
  EXPECT_EQ(r.rec.completion_tokens, 3);
  EXPECT_EQ(r.rec.prompt_tokens, 26);
  EXPECT_EQ(r.rec.output_text, "Hello there friend");
  check_split_independent(ApiKind::chat, body, nullptr);
}

TEST(Decoder, DoneAbsentButFinishReasonSeenIsComplete) {
  std::string body = stream_file("ollama_chat.sse");
  body.resize(body.find("data: [DONE]"));
  const Result r = decode(ApiKind::chat, per_event(body, kT0, kStep));
  EXPECT_FALSE(r.finished_before_end);  // usage could still follow: wait for the close
  EXPECT_TRUE(r.rec.ok());
  EXPECT_EQ(r.rec.completion_tokens, 3);
}

TEST(Decoder, StreamCutBeforeFinishIsTruncated) {
  std::string body = stream_file("ollama_chat.sse");
  body.resize(body.find("data:", 10));  // only the first event
  const Result r = decode(ApiKind::chat, per_event(body, kT0, kStep));
  EXPECT_EQ(r.rec.error, ErrorClass::truncated);
  EXPECT_EQ(r.rec.chunks.size(), 1u);  // what arrived is kept
  EXPECT_EQ(decode_whole(ApiKind::chat, "").rec.error, ErrorClass::truncated);
}

TEST(Decoder, LastEventWithoutBlankLineStillCounts) {
  const std::string body = "data: {\"choices\":[{\"text\":\"a\",\"finish_reason\":null}]}\n\ndata: [DONE]";
  const Result r = decode_whole(ApiKind::completions, body);
  EXPECT_FALSE(r.finished_before_end);
  EXPECT_TRUE(r.rec.ok());  // [DONE] delivered by on_end's finish()
  EXPECT_EQ(r.rec.chunks.size(), 1u);
}

TEST(Decoder, CrlfAndCrFramingDecodeTheSame) {
  const std::string lf = stream_file("vllm_chat_continuous_usage.sse");
  std::string crlf, cr;
  for (char c : lf) {
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    cr += c == '\n' ? '\r' : c;
  }
  const Result a = decode_whole(ApiKind::chat, lf, &kWords);
  expect_same_outcome(a.rec, decode_whole(ApiKind::chat, crlf, &kWords).rec);
  expect_same_outcome(a.rec, decode_whole(ApiKind::chat, cr, &kWords).rec);
  check_split_independent(ApiKind::chat, crlf, &kWords);
}

TEST(Decoder, MalformedJsonIsBadPayload) {
  const std::string body =
      "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}\n\ndata: [DONE]\n\n";
  const Result r = decode(ApiKind::completions, per_event(body, kT0, kStep));
  EXPECT_EQ(r.rec.error, ErrorClass::bad_payload);
  EXPECT_NE(r.rec.error_detail.find("malformed JSON"), std::string::npos);
  EXPECT_EQ(r.rec.chunks.size(), 1u);
  EXPECT_TRUE(r.finished_before_end);
  // Wrong shapes are malformed too.
  EXPECT_EQ(decode_whole(ApiKind::completions, "data: [1,2]\n\n").rec.error, ErrorClass::bad_payload);
  EXPECT_EQ(decode_whole(ApiKind::completions, "data: {\"choices\":{}}\n\n").rec.error,
            ErrorClass::bad_payload);
  EXPECT_EQ(decode_whole(ApiKind::chat, "data: {\"choices\":[{\"delta\":{\"content\":7}}]}\n\n").rec.error,
            ErrorClass::bad_payload);
  EXPECT_EQ(decode_whole(ApiKind::completions,
                         "data: {\"choices\":[],\"usage\":{\"completion_tokens\":3000000000}}\n\n")
                .rec.error,
            ErrorClass::bad_payload);  // would not fit the record's int32
}

TEST(Decoder, OverlongSseLineIsBadPayload) {
  auto dec = make_stream_decoder(ApiKind::completions, nullptr, false);
  RequestRecord rec;
  const std::string chunk(1024 * 1024, 'x');
  dec->on_body("data: ", 0, rec);
  for (int i = 0; i < 17 && !dec->finished(); ++i) dec->on_body(chunk, i, rec);
  EXPECT_TRUE(dec->finished());
  EXPECT_EQ(rec.error, ErrorClass::bad_payload);
}

TEST(Decoder, TransportErrorIsNotOverwritten) {
  RequestRecord rec;
  rec.error = ErrorClass::reset;
  rec.error_detail = "connection reset";
  auto dec = make_stream_decoder(ApiKind::chat, nullptr, false);
  dec->on_body("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n", 5, rec);
  dec->on_end(6, rec);
  EXPECT_EQ(rec.error, ErrorClass::reset);
  EXPECT_EQ(rec.error_detail, "connection reset");
  EXPECT_EQ(rec.t_first, 5);
}

TEST(Decoder, BytesAfterDoneIgnored) {
  const Result r = decode_whole(ApiKind::completions,
                                "data: [DONE]\n\ndata: {\"choices\":[{\"text\":\"late\"}]}\n\n");
  EXPECT_TRUE(r.rec.ok());
  EXPECT_TRUE(r.rec.chunks.empty());
}

// --- UTF-8 -----------------------------------------------------------------------------

// Records what it was asked to count: every string must be whole characters.
class RecordingCounter final : public TokenCounter {
 public:
  int count(std::string_view text) const override {
    seen.emplace_back(text);
    return static_cast<int>(text.size());
  }
  mutable std::vector<std::string> seen;
};

TEST(Decoder, CharacterSplitAcrossChunksTextIsHeldBack) {
  // Chunk texts: "caf\xC3" | "\xA9 \xE2\x82" | "\xAC!" (raw bytes; "é" and "€" split).
  const std::string body = stream_file("utf8_partial_bytes_completions.sse");
  RecordingCounter counter;
  const Result r = decode(ApiKind::completions, per_event(body, kT0, kStep), &counter);
  EXPECT_TRUE(r.rec.ok()) << r.rec.error_detail;
  EXPECT_EQ(r.rec.output_text, "caf\xc3\xa9 \xe2\x82\xac!");
  EXPECT_EQ(counter.seen, (std::vector<std::string>{"caf", "\xc3\xa9 ", "\xe2\x82\xac!"}));
  EXPECT_EQ(tokens_of(r.rec), (std::vector<std::int32_t>{3, 3, 4}));  // bytes counted
  EXPECT_EQ(r.rec.completion_tokens, 3);
  check_split_independent(ApiKind::completions, body, &counter);
}

TEST(Decoder, IncompleteCharacterAtEndIsKept) {
  RecordingCounter counter;
  const Result r = decode_whole(
      ApiKind::completions,
      "data: {\"choices\":[{\"text\":\"ab\xe2\x82\",\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n",
      &counter);
  EXPECT_TRUE(r.rec.ok());
  EXPECT_EQ(r.rec.output_text, "ab\xe2\x82");
  EXPECT_EQ(r.rec.tokenizer_output_tokens, 4);  // "ab" then the 2 stray bytes at the end
}

TEST(Decoder, EscapedUnicodeIsDecoded) {
  const Result r = decode_whole(
      ApiKind::chat, "data: {\"choices\":[{\"delta\":{\"content\":\"\\u00e9\\ud83d\\ude00\"}}]}\n\ndata: [DONE]\n\n");
  EXPECT_TRUE(r.rec.ok());
  EXPECT_EQ(r.rec.output_text, "\xc3\xa9\xf0\x9f\x98\x80");
}

// --- SGLang native ---------------------------------------------------------------------

TEST(Decoder, SglangNativeCumulativeText) {
  // Texts " Paris" | " Paris is the" | " Paris is the capital" | " Paris is the capital."
  // with completion_tokens 1, 3, 4, 5; then [DONE].
  const std::string body = stream_file("sglang_generate.sse");
  const Result r = decode(ApiKind::sglang, per_event(body, kT0, kStep), &kWords);
  EXPECT_TRUE(r.rec.ok());
  EXPECT_TRUE(r.finished_before_end);
  EXPECT_EQ(times_of(r.rec), (std::vector<Nanos>{at(0), at(1), at(2), at(3)}));
  EXPECT_EQ(tokens_of(r.rec), (std::vector<std::int32_t>{1, 2, 1, 1}));
  EXPECT_TRUE(r.rec.usage_streamed);
  // Counted over the deltas " Paris", " is the", " capital", ".": 1+2+1+1.
  EXPECT_EQ(r.rec.tokenizer_output_tokens, 5);
  EXPECT_EQ(r.rec.prompt_tokens, 6);
  EXPECT_EQ(r.rec.completion_tokens, 5);
  EXPECT_EQ(r.rec.cached_tokens, 3);
  EXPECT_EQ(r.rec.finish_reason, "length");
  EXPECT_EQ(r.rec.output_text, " Paris is the capital.");
  check_split_independent(ApiKind::sglang, body, &kWords);
}

TEST(Decoder, SglangNativeAbortAndRewrite) {
  Result r = decode_whole(ApiKind::sglang,
                          "data: {\"text\":\"\",\"meta_info\":{\"finish_reason\":{\"type\":\"abort\","
                          "\"message\":\"prompt too long\"},\"prompt_tokens\":9000}}\n\ndata: [DONE]\n\n");
  EXPECT_EQ(r.rec.error, ErrorClass::server_error_event);
  EXPECT_EQ(r.rec.error_detail, "prompt too long");
  // A rewritten tail counts from the first differing byte.
  r = decode_whole(ApiKind::sglang,
                   "data: {\"text\":\"ab?\"}\n\ndata: {\"text\":\"abcd\",\"meta_info\":{\"finish_reason\":"
                   "{\"type\":\"stop\"}}}\n\ndata: [DONE]\n\n");
  EXPECT_TRUE(r.rec.ok());
  EXPECT_EQ(r.rec.output_text, "ab?cd");  // kept text is the deltas as received
  EXPECT_EQ(r.rec.chunks.size(), 2u);
  EXPECT_EQ(decode_whole(ApiKind::sglang, "data: {\"error\":{\"message\":\"bad\"}}\n\ndata: [DONE]\n\n")
                .rec.error_detail,
            "bad");
}

// --- llama.cpp -------------------------------------------------------------------------

std::string shared_llamacpp(const std::string& name) {
  const auto p = std::filesystem::path(INFERSCOPE_SHARED_DIR) / "data" / "llamacpp" / name;
  return std::filesystem::exists(p) ? read_file(p) : std::string();
}

TEST(Decoder, LlamacppNativeRecorded) {
  // Real recording: 64 events with content and tokens_predicted 1..64, then stop:true
  // with stop_type "limit", tokens_evaluated 17 and timings (cache_n 0).
  const std::string body = shared_llamacpp("native_stream.txt");
  if (body.empty()) GTEST_SKIP() << "no ../shared recordings";
  const Result r = decode(ApiKind::llamacpp, per_event(body, kT0, kStep));
  EXPECT_TRUE(r.rec.ok()) << r.rec.error_detail;
  EXPECT_TRUE(r.finished_before_end);
  ASSERT_EQ(r.rec.chunks.size(), 64u);
  for (const Chunk& c : r.rec.chunks) EXPECT_EQ(c.tokens, 1);
  EXPECT_EQ(r.rec.t_first, at(0));
  EXPECT_EQ(r.rec.t_last, at(63));
  EXPECT_TRUE(r.rec.usage_streamed);
  EXPECT_EQ(r.rec.completion_tokens, 64);
  EXPECT_EQ(r.rec.prompt_tokens, 17);
  EXPECT_EQ(r.rec.cached_tokens, 0);
  EXPECT_EQ(r.rec.finish_reason, "length");
  EXPECT_EQ(r.rec.output_text.substr(0, 25), "imasigma reset\xc3\xa9g briefly");
  EXPECT_EQ(r.rec.server_timings_json.substr(0, 40), "{\"cache_n\":0,\"prompt_n\":17,\"prompt_ms\":1");
  EXPECT_NE(r.rec.server_timings_json.find("\"predicted_n\":64"), std::string::npos);
  check_split_independent(ApiKind::llamacpp, body.substr(0, 600) + body.substr(body.rfind("data:")),
                          nullptr);
}

TEST(Decoder, LlamacppNativeEosFirst) {
  // Copied recording: one event with empty content (the EOS token, tokens_predicted 1),
  // then the stop event with stop_type "eos": no content chunk at all.
  const std::string body = stream_file("llamacpp/eosheavy_native_stream.sse");
  const Result r = decode(ApiKind::llamacpp, per_event(body, kT0, kStep));
  EXPECT_TRUE(r.rec.ok());
  EXPECT_TRUE(r.rec.chunks.empty());
  EXPECT_EQ(r.rec.t_first, -1);
  EXPECT_EQ(r.rec.completion_tokens, 1);
  EXPECT_EQ(r.rec.prompt_tokens, 6);
  EXPECT_EQ(r.rec.finish_reason, "stop");
  check_split_independent(ApiKind::llamacpp, body, nullptr);
}

TEST(Decoder, LlamacppOpenAiRoutesRecorded) {
  // Copied recordings. Chat without usage: role chunk, 16 content chunks, finish "length"
  // chunk with timings (cache_n 10), [DONE].
  std::string body = stream_file("llamacpp/chat_stream_no_usage.sse");
  Result r = decode(ApiKind::chat, per_event(body, kT0, kStep));
  EXPECT_TRUE(r.rec.ok());
  ASSERT_EQ(r.rec.chunks.size(), 16u);
  EXPECT_EQ(r.rec.t_first, at(1));
  EXPECT_EQ(r.rec.t_last, at(16));
  EXPECT_EQ(r.rec.completion_tokens, -1);
  EXPECT_EQ(r.rec.output_tokens(), 16);  // one per chunk without a counter
  EXPECT_EQ(r.rec.finish_reason, "length");
  EXPECT_NE(r.rec.server_timings_json.find("\"cache_n\":10"), std::string::npos);
  EXPECT_EQ(r.rec.output_text.substr(0, 12), " Multipleidi");
  check_split_independent(ApiKind::chat, body, nullptr);

  // EOS first: role chunk, finish "stop", usage chunk (completion 1), [DONE].
  body = stream_file("llamacpp/eosheavy_chat_stream.sse");
  r = decode(ApiKind::chat, per_event(body, kT0, kStep));
  EXPECT_TRUE(r.rec.ok());
  EXPECT_TRUE(r.rec.chunks.empty());
  EXPECT_EQ(r.rec.completion_tokens, 1);
  EXPECT_EQ(r.rec.prompt_tokens, 29);
  EXPECT_EQ(r.rec.cached_tokens, 0);

  // Completions, EOS first: an empty-text chunk is not a token.
  body = stream_file("llamacpp/eosheavy_completions_stream.sse");
  r = decode(ApiKind::completions, per_event(body, kT0, kStep));
  EXPECT_TRUE(r.rec.ok());
  EXPECT_TRUE(r.rec.chunks.empty());
  EXPECT_EQ(r.rec.completion_tokens, 1);
  EXPECT_EQ(r.rec.prompt_tokens, 6);
}

TEST(Decoder, LlamacppLongRecordingsFromShared) {
  const std::string chat = shared_llamacpp("chat_stream.txt");
  const std::string cmpl = shared_llamacpp("completions_stream.txt");
  if (chat.empty() || cmpl.empty()) GTEST_SKIP() << "no ../shared recordings";
  // Chat with include_usage: 64 content chunks, usage chunk 64/37, cached 0.
  Result r = decode(ApiKind::chat, per_event(chat, kT0, kStep));
  EXPECT_TRUE(r.rec.ok());
  EXPECT_EQ(r.rec.chunks.size(), 64u);
  EXPECT_EQ(r.rec.completion_tokens, 64);
  EXPECT_EQ(r.rec.prompt_tokens, 37);
  EXPECT_EQ(r.rec.cached_tokens, 0);
  EXPECT_FALSE(r.rec.usage_streamed);
  EXPECT_EQ(r.rec.t_first, at(1));
  // Completions: usage and timings ride on the finish chunk, whose text is empty.
  r = decode(ApiKind::completions, per_event(cmpl, kT0, kStep));
  EXPECT_TRUE(r.rec.ok());
  EXPECT_EQ(r.rec.chunks.size(), 64u);
  EXPECT_EQ(r.rec.completion_tokens, 64);
  EXPECT_EQ(r.rec.prompt_tokens, 17);
  EXPECT_EQ(r.rec.t_first, at(0));
  EXPECT_EQ(r.rec.t_last, at(63));
}

TEST(Decoder, LlamacppErrorEventWithoutDone) {
  // Copied recording: 14 content chunks, then {"error":{…}} and the connection closes.
  const std::string body = stream_file("llamacpp/quirk_bytetoken_model_chat_stream.sse");
  const Result r = decode(ApiKind::chat, per_event(body, kT0, kStep));
  EXPECT_EQ(r.rec.error, ErrorClass::server_error_event);
  EXPECT_EQ(r.rec.error_detail.substr(0, 34), "Failed to parse input at pos 22: p");
  EXPECT_EQ(r.rec.chunks.size(), 13u);
  check_split_independent(ApiKind::chat, body, nullptr);
}

TEST(Decoder, LlamacppBareErrorLine) {
  const std::string body = stream_file("llamacpp_error_line.sse");
  const Result r = decode(ApiKind::llamacpp, per_event(body, kT0, kStep));
  EXPECT_EQ(r.rec.error, ErrorClass::server_error_event);
  EXPECT_EQ(r.rec.error_detail,
            "Input prompt is too big compared to KV size. Please try increasing KV size.");
  EXPECT_EQ(times_of(r.rec), (std::vector<Nanos>{at(0)}));
  check_split_independent(ApiKind::llamacpp, body, nullptr);
}

// --- TGI -------------------------------------------------------------------------------

TEST(Decoder, TgiGenerateStream) {
  // "Hello" | " world" | "</s>" (special) with generated_text and details.
  const std::string body = stream_file("tgi_generate_stream.sse");
  const Result r = decode(ApiKind::tgi, per_event(body, kT0, kStep), &kWords);
  EXPECT_TRUE(r.rec.ok());
  EXPECT_TRUE(r.finished_before_end);
  EXPECT_EQ(times_of(r.rec), (std::vector<Nanos>{at(0), at(1)}));
  EXPECT_EQ(tokens_of(r.rec), (std::vector<std::int32_t>{1, 1}));
  EXPECT_TRUE(r.rec.usage_streamed);
  EXPECT_EQ(r.rec.completion_tokens, 3);
  EXPECT_EQ(r.rec.prompt_tokens, 7);
  EXPECT_EQ(r.rec.finish_reason, "eos_token");
  EXPECT_EQ(r.rec.output_text, "Hello world");
  check_split_independent(ApiKind::tgi, body, &kWords);
}

TEST(Decoder, TgiErrorAndTruncation) {
  Result r = decode_whole(ApiKind::tgi,
                          "data:{\"error\":\"Request failed during generation: Server error: OOM\","
                          "\"error_type\":\"generation\"}\n\n");
  EXPECT_EQ(r.rec.error, ErrorClass::server_error_event);
  EXPECT_EQ(r.rec.error_detail, "Request failed during generation: Server error: OOM");
  std::string body = stream_file("tgi_generate_stream.sse");
  body.resize(body.rfind("data:"));  // final event lost
  r = decode_whole(ApiKind::tgi, body);
  EXPECT_EQ(r.rec.error, ErrorClass::truncated);
  EXPECT_EQ(r.rec.chunks.size(), 2u);
}

// --- Non-streamed responses -------------------------------------------------------------

TEST(Decoder, FullResponses) {
  RequestRecord rec;
  decode_full_response(ApiKind::chat, shared_llamacpp("chat_nonstream.json").empty()
                                          ? R"({"choices":[{"message":{"content":"x"},"finish_reason":"length"}],
                                               "usage":{"prompt_tokens":29,"completion_tokens":8,
                                               "prompt_tokens_details":{"cached_tokens":28}}})"
                                          : shared_llamacpp("chat_nonstream.json"),
                       777, rec, nullptr, false);
  EXPECT_TRUE(rec.ok());
  EXPECT_EQ(rec.completion_tokens, 8);
  EXPECT_EQ(rec.prompt_tokens, 29);
  EXPECT_EQ(rec.cached_tokens, 28);
  EXPECT_EQ(rec.finish_reason, "length");
  ASSERT_EQ(rec.chunks.size(), 1u);
  EXPECT_EQ(rec.chunks[0].t_ns, 777);
  EXPECT_EQ(rec.chunks[0].tokens, 8);
  EXPECT_EQ(rec.t_first, 777);
  EXPECT_EQ(rec.t_last, 777);

  rec = {};
  decode_full_response(ApiKind::tgi,
                       R"({"generated_text":" a b c","details":{"finish_reason":"length","generated_tokens":3}})",
                       5, rec, &kWords, true);
  EXPECT_TRUE(rec.ok());
  EXPECT_EQ(rec.output_text, " a b c");
  EXPECT_EQ(rec.tokenizer_output_tokens, 3);
  ASSERT_EQ(rec.chunks.size(), 1u);
  EXPECT_EQ(rec.chunks[0].tokens, 3);

  rec = {};
  decode_full_response(ApiKind::sglang, R"({"text":" x y","meta_info":{"prompt_tokens":4,"completion_tokens":2,"finish_reason":{"type":"length"}}})",
                       5, rec, nullptr, true);
  EXPECT_TRUE(rec.ok());
  EXPECT_EQ(rec.output_text, " x y");
  EXPECT_EQ(rec.chunks[0].tokens, 2);

  rec = {};
  decode_full_response(ApiKind::llamacpp, R"({"content":" hi there","stop":true,"tokens_predicted":2,"tokens_evaluated":5,"stop_type":"eos","timings":{"cache_n":4}})",
                       5, rec, nullptr, true);
  EXPECT_TRUE(rec.ok());
  EXPECT_EQ(rec.completion_tokens, 2);
  EXPECT_EQ(rec.cached_tokens, 4);
  EXPECT_EQ(rec.finish_reason, "stop");

  rec = {};
  decode_full_response(ApiKind::completions, "{not json", 5, rec, nullptr, false);
  EXPECT_EQ(rec.error, ErrorClass::bad_payload);
  EXPECT_TRUE(rec.chunks.empty());
  rec = {};
  decode_full_response(ApiKind::completions, R"({"error":{"message":"nope"}})", 5, rec, nullptr, false);
  EXPECT_EQ(rec.error, ErrorClass::server_error_event);
  EXPECT_EQ(rec.error_detail, "nope");
}

}  // namespace
}  // namespace inferscope
