// Names, request builders and HTTP error-body messages. The stream decoders live in
// decoder.cpp.
#include "inferscope/client/protocol.h"

#include <simdjson.h>

#include <array>

#include "client/json_write.h"
#include "inferscope/core/errors.h"

namespace inferscope {
namespace {

constexpr std::array<std::string_view, 5> kApiNames = {"completions", "chat", "sglang",
                                                       "llamacpp", "tgi"};
constexpr std::array<std::string_view, 7> kFlavorNames = {"vllm",   "sglang", "trtllm", "llamacpp",
                                                          "ollama", "tgi",    "generic"};

// What each engine's OpenAI-compatible routes accept beyond the OpenAI spec (see
// docs/protocols.md for the sources). Sending an unknown field makes some engines reject
// the request (Pydantic `extra=forbid`) and others silently ignore it; either way it is
// not measured, so it is not sent.
struct FlavorCaps {
  bool include_usage;
  bool continuous_usage_stats;
  bool ignore_eos;
  bool min_tokens;
};
FlavorCaps caps(EngineFlavor f) {
  switch (f) {
    case EngineFlavor::vllm: return {true, true, true, true};
    case EngineFlavor::sglang: return {true, true, true, true};
    case EngineFlavor::trtllm: return {true, true, true, true};
    case EngineFlavor::llamacpp: return {true, false, true, false};
    case EngineFlavor::ollama: return {true, false, false, false};
    case EngineFlavor::tgi: return {true, false, false, false};
    case EngineFlavor::generic: return {true, false, false, false};
  }
  return {false, false, false, false};
}

// Text for the native routes, which take one prompt string: the prompt, or else the
// chat messages' contents one per line.
std::string_view native_prompt(const GenRequest& req, std::string& scratch) {
  if (!req.prompt.empty() || req.messages.empty()) return req.prompt;
  for (const auto& m : req.messages) {
    if (!scratch.empty()) scratch.push_back('\n');
    scratch += m.content;
  }
  return scratch;
}

void key(std::string& b, std::string_view k) {
  if (b.back() != '{') b.push_back(',');
  jsonw::append_string(b, k);
  b.push_back(':');
}
void kv_int(std::string& b, std::string_view k, std::int64_t v) {
  key(b, k);
  jsonw::append_int(b, v);
}
void kv_str(std::string& b, std::string_view k, std::string_view v) {
  key(b, k);
  jsonw::append_string(b, v);
}
void kv_bool(std::string& b, std::string_view k, bool v) {
  key(b, k);
  b += v ? "true" : "false";
}
void kv_raw(std::string& b, std::string_view k, std::string_view raw_json) {
  key(b, k);
  b += raw_json;
}

HttpRequestSpec build_openai(ApiKind api, const GenRequest& req, const ProtocolOptions& opt) {
  const FlavorCaps c = caps(opt.flavor);
  HttpRequestSpec spec;
  std::string& b = spec.body;
  b.reserve(req.prompt.size() + 256);
  b.push_back('{');
  kv_str(b, "model", opt.model);
  if (api == ApiKind::completions) {
    spec.path = "/v1/completions";
    kv_str(b, "prompt", req.prompt);
  } else {
    spec.path = "/v1/chat/completions";
    key(b, "messages");
    b.push_back('[');
    if (req.messages.empty()) {
      b += R"({"role":"user","content":)";
      jsonw::append_string(b, req.prompt);
      b.push_back('}');
    } else {
      for (std::size_t i = 0; i < req.messages.size(); ++i) {
        if (i) b.push_back(',');
        b += R"({"role":)";
        jsonw::append_string(b, req.messages[i].role);
        b += R"(,"content":)";
        jsonw::append_string(b, req.messages[i].content);
        b.push_back('}');
      }
    }
    b.push_back(']');
  }
  kv_int(b, "max_tokens", req.max_tokens);
  kv_bool(b, "stream", opt.stream);
  if (opt.stream) {
    const bool usage = opt.include_usage && c.include_usage;
    const bool continuous = opt.continuous_usage_stats && c.continuous_usage_stats;
    if (usage || continuous) {
      key(b, "stream_options");
      b.push_back('{');
      if (usage) kv_bool(b, "include_usage", true);
      if (continuous) kv_bool(b, "continuous_usage_stats", true);
      b.push_back('}');
    }
  }
  if (req.ignore_eos && c.ignore_eos) kv_bool(b, "ignore_eos", true);
  if (req.min_tokens >= 0 && c.min_tokens) kv_int(b, "min_tokens", req.min_tokens);
  if (!req.response_format_json.empty()) kv_raw(b, "response_format", req.response_format_json);
  if (!req.tools_json.empty() && api == ApiKind::chat) kv_raw(b, "tools", req.tools_json);
  b.push_back('}');
  return spec;
}

}  // namespace

std::string_view to_string(ApiKind k) { return kApiNames[static_cast<std::size_t>(k)]; }

ApiKind api_kind_from_string(std::string_view s) {
  for (std::size_t i = 0; i < kApiNames.size(); ++i)
    if (kApiNames[i] == s) return static_cast<ApiKind>(i);
  throw InputError("--api", 0, "api",
                   "unknown API '" + std::string(s) +
                       "' (expected completions, chat, sglang, llamacpp or tgi)");
}

std::string_view to_string(EngineFlavor f) { return kFlavorNames[static_cast<std::size_t>(f)]; }

EngineFlavor engine_flavor_from_string(std::string_view s) {
  for (std::size_t i = 0; i < kFlavorNames.size(); ++i)
    if (kFlavorNames[i] == s) return static_cast<EngineFlavor>(i);
  throw InputError("--engine", 0, "engine",
                   "unknown engine '" + std::string(s) +
                       "' (expected vllm, sglang, trtllm, llamacpp, ollama, tgi or generic)");
}

HttpRequestSpec build_request(ApiKind api, const GenRequest& req, const ProtocolOptions& opt) {
  if (api == ApiKind::completions || api == ApiKind::chat) return build_openai(api, req, opt);
  std::string scratch;
  const std::string_view prompt = native_prompt(req, scratch);
  HttpRequestSpec spec;
  std::string& b = spec.body;
  b.reserve(prompt.size() + 160);
  b.push_back('{');
  switch (api) {
    case ApiKind::sglang:
      // SGLang /generate: sampling options nest under sampling_params.
      spec.path = "/generate";
      kv_str(b, "text", prompt);
      key(b, "sampling_params");
      b.push_back('{');
      kv_int(b, "max_new_tokens", req.max_tokens);
      if (req.ignore_eos) kv_bool(b, "ignore_eos", true);
      if (req.min_tokens >= 0) kv_int(b, "min_new_tokens", req.min_tokens);
      b.push_back('}');
      kv_bool(b, "stream", opt.stream);
      break;
    case ApiKind::llamacpp:
      spec.path = "/completion";
      kv_str(b, "prompt", prompt);
      kv_int(b, "n_predict", req.max_tokens);
      kv_bool(b, "stream", opt.stream);
      if (req.ignore_eos) kv_bool(b, "ignore_eos", true);
      break;
    case ApiKind::tgi:
      // TGI has no ignore_eos and no minimum length; `details` makes the final event
      // carry finish_reason and generated_tokens.
      spec.path = opt.stream ? "/generate_stream" : "/generate";
      kv_str(b, "inputs", prompt);
      key(b, "parameters");
      b.push_back('{');
      kv_int(b, "max_new_tokens", req.max_tokens);
      kv_bool(b, "details", true);
      b.push_back('}');
      break;
    case ApiKind::completions:
    case ApiKind::chat:
      break;  // handled above
  }
  b.push_back('}');
  return spec;
}

std::string error_message_from_body(std::string_view body) {
  constexpr std::size_t kMax = 200;
  std::string msg;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (!parser.parse(body.data(), body.size()).get(root)) {
    std::string_view s;
    simdjson::dom::element e;
    if (!root["error"].get(e)) {
      if (!e.get_string().get(s)) {
        msg = s;  // {"error": "…"} (TGI)
      } else if (!e["message"].get_string().get(s)) {
        msg = s;  // {"error": {"message": …}} (OpenAI, vLLM ≥ 0.6, llama.cpp)
      } else {
        msg = simdjson::minify(e);
      }
    } else if (!root["message"].get_string().get(s)) {
      msg = s;  // {"object": "error", "message": …} (older vLLM), Ollama
    } else if (!root["detail"].get(e)) {
      msg = e.is_string() ? std::string(e.get_string().value_unsafe()) : simdjson::minify(e);
    } else {
      msg = simdjson::minify(root);
    }
  } else {
    msg = body;
  }
  // One line, trimmed, at most kMax bytes without cutting a UTF-8 character.
  for (char& ch : msg)
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  const auto first = msg.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  msg.erase(0, first);
  msg.erase(msg.find_last_not_of(' ') + 1);
  if (msg.size() > kMax) {
    std::size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(msg[cut]) & 0xC0) == 0x80) --cut;
    msg.resize(cut);
  }
  return msg;
}

}  // namespace inferscope
