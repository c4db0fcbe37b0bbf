#include "inferscope/client/protocol.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "inferscope/core/errors.h"

namespace inferscope {
namespace {

using nlohmann::json;

GenRequest sample() {
  GenRequest r;
  r.prompt = "Say \"hi\"\n\tnow";
  r.max_tokens = 64;
  r.ignore_eos = true;
  r.min_tokens = 64;
  return r;
}

json body_of(ApiKind api, const GenRequest& r, EngineFlavor f, bool stream = true) {
  ProtocolOptions o;
  o.model = "m";
  o.flavor = f;
  o.stream = stream;
  return json::parse(build_request(api, r, o).body);
}

TEST(Protocol, NamesRoundTrip) {
  for (auto k : {ApiKind::completions, ApiKind::chat, ApiKind::sglang, ApiKind::llamacpp, ApiKind::tgi})
    EXPECT_EQ(api_kind_from_string(to_string(k)), k);
  for (auto f : {EngineFlavor::vllm, EngineFlavor::sglang, EngineFlavor::trtllm, EngineFlavor::llamacpp,
                 EngineFlavor::ollama, EngineFlavor::tgi, EngineFlavor::generic})
    EXPECT_EQ(engine_flavor_from_string(to_string(f)), f);
  EXPECT_THROW(api_kind_from_string("openai"), InputError);
  EXPECT_THROW(engine_flavor_from_string("vLLM"), InputError);
}

TEST(Protocol, CompletionsVllmSendsEveryOption) {
  ProtocolOptions o;
  o.model = "meta-llama/Llama-3.1-8B";
  const auto spec = build_request(ApiKind::completions, sample(), o);
  EXPECT_EQ(spec.method, "POST");
  EXPECT_EQ(spec.path, "/v1/completions");
  const json b = json::parse(spec.body);
  EXPECT_EQ(b, json::parse(R"({"model":"meta-llama/Llama-3.1-8B","prompt":"Say \"hi\"\n\tnow",
      "max_tokens":64,"stream":true,
      "stream_options":{"include_usage":true,"continuous_usage_stats":true},
      "ignore_eos":true,"min_tokens":64})"));
}

TEST(Protocol, FlavorTableForOpenAiRoutes) {
  struct Row {
    EngineFlavor f;
    bool usage, continuous, ignore_eos, min_tokens;
  };
  const Row rows[] = {{EngineFlavor::vllm, true, true, true, true},
                      {EngineFlavor::sglang, true, true, true, true},
                      {EngineFlavor::trtllm, true, true, true, true},
                      {EngineFlavor::llamacpp, true, false, true, false},
                      {EngineFlavor::ollama, true, false, false, false},
                      {EngineFlavor::tgi, true, false, false, false},
                      {EngineFlavor::generic, true, false, false, false}};
  for (const Row& row : rows) {
    SCOPED_TRACE(std::string(to_string(row.f)));
    const json b = body_of(ApiKind::chat, sample(), row.f);
    EXPECT_EQ(b.contains("stream_options") && b["stream_options"].contains("include_usage"), row.usage);
    EXPECT_EQ(b.contains("stream_options") && b["stream_options"].contains("continuous_usage_stats"),
              row.continuous);
    EXPECT_EQ(b.contains("ignore_eos"), row.ignore_eos);
    EXPECT_EQ(b.contains("min_tokens"), row.min_tokens);
    EXPECT_EQ(b["max_tokens"], 64);
  }
}

TEST(Protocol, OptionsOffOrNotStreaming) {
  GenRequest r = sample();
  r.ignore_eos = false;
  r.min_tokens = -1;
  ProtocolOptions o;
  o.include_usage = false;
  o.continuous_usage_stats = false;
  json b = json::parse(build_request(ApiKind::completions, r, o).body);
  EXPECT_FALSE(b.contains("stream_options"));
  EXPECT_FALSE(b.contains("ignore_eos"));
  EXPECT_FALSE(b.contains("min_tokens"));
  b = body_of(ApiKind::completions, sample(), EngineFlavor::vllm, false);
  EXPECT_EQ(b["stream"], false);
  EXPECT_FALSE(b.contains("stream_options"));  // only valid with stream=true
}

TEST(Protocol, ChatMessagesOrPromptAndPassThroughJson) {
  GenRequest r = sample();
  json b = body_of(ApiKind::chat, r, EngineFlavor::vllm);
  EXPECT_EQ(b["messages"], json::parse(R"([{"role":"user","content":"Say \"hi\"\n\tnow"}])"));
  r.messages = {{"system", "be brief"}, {"user", "é ✓"}};
  r.response_format_json = R"({"type":"json_object"})";
  r.tools_json = R"([{"type":"function","function":{"name":"f","parameters":{}}}])";
  ProtocolOptions o;
  const auto spec = build_request(ApiKind::chat, r, o);
  EXPECT_EQ(spec.path, "/v1/chat/completions");
  b = json::parse(spec.body);
  EXPECT_EQ(b["messages"],
            json::parse(R"([{"role":"system","content":"be brief"},{"role":"user","content":"é ✓"}])"));
  EXPECT_EQ(b["response_format"], json::parse(r.response_format_json));
  EXPECT_EQ(b["tools"], json::parse(r.tools_json));
  EXPECT_FALSE(b.contains("prompt"));
}

TEST(Protocol, ControlCharactersEscaped) {
  GenRequest r = sample();
  r.prompt = std::string("a\x01\x1f\b\f\\b", 7);
  const json b = body_of(ApiKind::completions, r, EngineFlavor::vllm);
  EXPECT_EQ(b["prompt"], r.prompt);
}

TEST(Protocol, SglangNative) {
  ProtocolOptions o;
  const auto spec = build_request(ApiKind::sglang, sample(), o);
  EXPECT_EQ(spec.path, "/generate");
  EXPECT_EQ(json::parse(spec.body), json::parse(R"({"text":"Say \"hi\"\n\tnow",
      "sampling_params":{"max_new_tokens":64,"ignore_eos":true,"min_new_tokens":64},"stream":true})"));
}

TEST(Protocol, LlamacppNative) {
  ProtocolOptions o;
  const auto spec = build_request(ApiKind::llamacpp, sample(), o);
  EXPECT_EQ(spec.path, "/completion");
  EXPECT_EQ(json::parse(spec.body), json::parse(R"({"prompt":"Say \"hi\"\n\tnow","n_predict":64,
      "stream":true,"ignore_eos":true})"));
}

TEST(Protocol, TgiNativeHasNoIgnoreEos) {
  ProtocolOptions o;
  auto spec = build_request(ApiKind::tgi, sample(), o);
  EXPECT_EQ(spec.path, "/generate_stream");
  EXPECT_EQ(json::parse(spec.body), json::parse(R"({"inputs":"Say \"hi\"\n\tnow",
      "parameters":{"max_new_tokens":64,"details":true}})"));
  o.stream = false;
  spec = build_request(ApiKind::tgi, sample(), o);
  EXPECT_EQ(spec.path, "/generate");
}

TEST(Protocol, NativeRoutesJoinChatMessagesWhenNoPrompt) {
  GenRequest r;
  r.messages = {{"system", "S"}, {"user", "U"}};
  EXPECT_EQ(body_of(ApiKind::llamacpp, r, EngineFlavor::vllm)["prompt"], "S\nU");
}

TEST(Protocol, ErrorMessageFromBody) {
  EXPECT_EQ(error_message_from_body(R"({"error":{"message":"model not found","type":"NotFound","code":404}})"),
            "model not found");
  EXPECT_EQ(error_message_from_body(
                R"({"object":"error","message":"max_tokens too large","type":"BadRequestError","code":400})"),
            "max_tokens too large");
  EXPECT_EQ(error_message_from_body(R"({"error":"Input validation error: `inputs` must be non-empty","error_type":"validation"})"),
            "Input validation error: `inputs` must be non-empty");
  EXPECT_EQ(error_message_from_body(R"({"error":"model \"x\" not found, try pulling it first"})"),
            "model \"x\" not found, try pulling it first");
  EXPECT_EQ(error_message_from_body(R"({"detail":"Not Found"})"), "Not Found");
  EXPECT_EQ(error_message_from_body("  Internal Server Error\n"), "Internal Server Error");
  EXPECT_EQ(error_message_from_body(""), "");
  // 200 bytes at most, cut on a character boundary ("é" is 2 bytes: 199 fit).
  const std::string long_body(199, 'a');
  EXPECT_EQ(error_message_from_body(long_body + "\xc3\xa9zzz").size(), 199u);
  EXPECT_EQ(error_message_from_body(std::string(500, 'b')).size(), 200u);
}

}  // namespace
}  // namespace inferscope
