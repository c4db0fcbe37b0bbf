// Client CPU spent decoding one streamed token: SSE framing + JSON + timeline bookkeeping,
// one read per event as a server that flushes every token produces. The issue's target is
// <= 2 us per streamed token for the whole client; see docs/protocols.md for numbers.
//
//   bench_protocol --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "inferscope/client/protocol.h"
#include "inferscope/client/sse.h"
#include "inferscope/core/sim_tokenizer.h"

namespace inferscope {
namespace {

constexpr int kTokens = 256;

// vLLM chat chunk (typical size ~330 bytes), optionally with continuous usage.
std::vector<std::string> openai_chat_events(bool continuous_usage) {
  std::vector<std::string> ev;
  const std::string head =
      R"(data: {"id":"chatcmpl-5b0e0b0b1a2d4f0c9d7e8f6a5b4c3d2e","object":"chat.completion.chunk","created":1767225600,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{)";
  auto usage = [&](int c) {
    return continuous_usage ? R"(,"usage":{"prompt_tokens":512,"total_tokens":)" + std::to_string(512 + c) +
                                  R"(,"completion_tokens":)" + std::to_string(c) + "}"
                            : std::string();
  };
  ev.push_back(head + R"("role":"assistant","content":""},"logprobs":null,"finish_reason":null}])" + usage(0) + "}\n\n");
  for (int i = 1; i <= kTokens; ++i) {
    ev.push_back(head + R"("content":")" + std::string(SimTokenizer::filler_token(7, static_cast<std::uint64_t>(i))) +
                 R"("},"logprobs":null,"finish_reason":null}])" + usage(i) + "}\n\n");
  }
  ev.push_back(head + R"("content":""},"logprobs":null,"finish_reason":"length","stop_reason":null}])" +
               usage(kTokens) + "}\n\n");
  ev.push_back("data: [DONE]\n\n");
  return ev;
}

std::vector<std::string> llamacpp_native_events() {
  std::vector<std::string> ev;
  for (int i = 1; i <= kTokens; ++i)
    ev.push_back(R"(data: {"index":0,"content":")" + std::string(SimTokenizer::filler_token(7, static_cast<std::uint64_t>(i))) +
                 R"(","tokens":[25268],"stop":false,"id_slot":-1,"tokens_predicted":)" + std::to_string(i) +
                 R"(,"tokens_evaluated":17})" + "\n\n");
  ev.push_back(R"(data: {"index":0,"content":"","tokens":[],"stop":true,"tokens_predicted":256,"tokens_evaluated":17,"stop_type":"limit","timings":{"cache_n":0,"prompt_n":17,"prompt_ms":11.0,"predicted_n":256,"predicted_ms":1337.7}})"
               "\n\n");
  return ev;
}

std::vector<std::string> sglang_native_events() {
  std::vector<std::string> ev;
  std::string text;
  for (int i = 1; i <= kTokens; ++i) {
    text += SimTokenizer::filler_token(7, static_cast<std::uint64_t>(i));
    ev.push_back(R"(data: {"text":")" + text + R"(","meta_info":{"id":"a1","finish_reason":)" +
                 (i == kTokens ? std::string(R"({"type":"length","length":256})") : std::string("null")) +
                 R"(,"prompt_tokens":512,"completion_tokens":)" + std::to_string(i) + R"(,"cached_tokens":0}})" + "\n\n");
  }
  ev.push_back("data: [DONE]\n\n");
  return ev;
}

std::vector<std::string> tgi_events() {
  std::vector<std::string> ev;
  for (int i = 1; i <= kTokens; ++i)
    ev.push_back(R"(data:{"index":)" + std::to_string(i) + R"(,"token":{"id":1919,"text":")" +
                 std::string(SimTokenizer::filler_token(7, static_cast<std::uint64_t>(i))) +
                 R"(","logprob":-0.25,"special":false},"generated_text":)" +
                 (i == kTokens ? std::string(R"("…","details":{"finish_reason":"length","generated_tokens":256,"seed":null})")
                               : std::string(R"(null,"details":null)")) +
                 "}\n\n");
  return ev;
}

void run(benchmark::State& state, ApiKind api, const std::vector<std::string>& events,
         const TokenCounter* counter) {
  for (auto _ : state) {
    RequestRecord rec;
    rec.chunks.reserve(kTokens);  // the load loop's record; not the decoder's cost
    auto dec = make_stream_decoder(api, counter, false);
    Nanos t = 0;
    for (const std::string& e : events) dec->on_body(e, ++t, rec);
    dec->on_end(++t, rec);
    if (!rec.ok() || rec.chunks.size() != kTokens) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(rec.chunks.data());
  }
  state.SetItemsProcessed(state.iterations() * kTokens);
  state.counters["ns_per_token"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kTokens,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

const SimTokenizer kCounter;

void BM_ChatContinuousUsage(benchmark::State& s) { run(s, ApiKind::chat, openai_chat_events(true), &kCounter); }
void BM_ChatCountedNoUsage(benchmark::State& s) { run(s, ApiKind::chat, openai_chat_events(false), &kCounter); }
void BM_ChatNoCounter(benchmark::State& s) { run(s, ApiKind::chat, openai_chat_events(false), nullptr); }
void BM_LlamacppNative(benchmark::State& s) { run(s, ApiKind::llamacpp, llamacpp_native_events(), nullptr); }
void BM_SglangNativeCumulative(benchmark::State& s) { run(s, ApiKind::sglang, sglang_native_events(), nullptr); }
void BM_TgiGenerateStream(benchmark::State& s) { run(s, ApiKind::tgi, tgi_events(), nullptr); }

// SSE framing alone, for reference.
void BM_SseParserOnly(benchmark::State& state) {
  const auto events = openai_chat_events(true);
  for (auto _ : state) {
    std::size_t n = 0;
    SseParser p([&n](const SseEvent& e) { n += e.data.size(); });
    for (const std::string& e : events) p.feed(e);
    benchmark::DoNotOptimize(n);
  }
  state.counters["ns_per_token"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kTokens,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_ChatContinuousUsage);
BENCHMARK(BM_ChatCountedNoUsage);
BENCHMARK(BM_ChatNoCounter);
BENCHMARK(BM_LlamacppNative);
BENCHMARK(BM_SglangNativeCumulative);
BENCHMARK(BM_TgiGenerateStream);
BENCHMARK(BM_SseParserOnly);

}  // namespace
}  // namespace inferscope

BENCHMARK_MAIN();
