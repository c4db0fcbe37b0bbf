// Canned streams in each engine's wire format (DESIGN.md "Protocol facts"), built from a
// token list and timing, so a test can say "8 tokens, 10 ms apart".
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "inferscope/testserver/script_server.h"

namespace inferscope::testserver {

namespace {

using json = nlohmann::ordered_json;

std::string sse(const json& j, bool space = true) {
  return (space ? "data: " : "data:") + j.dump() + "\n\n";
}

json usage_json(int prompt, int completion) {
  return {{"prompt_tokens", prompt},
          {"completion_tokens", completion},
          {"total_tokens", prompt + completion}};
}

}  // namespace

std::vector<std::string> numbered_tokens(int n) {
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(std::max(n, 0)));
  for (int i = 0; i < n; ++i) out.push_back(fmt::format("t{} ", i));
  return out;
}

Script engine_stream(const StreamSpec& spec) {
  Script sc;
  const std::size_t n = spec.tokens.size();
  auto delay_of = [&](std::size_t i) -> Nanos {
    if (!spec.delays_ns.empty()) return i < spec.delays_ns.size() ? spec.delays_ns[i] : 0;
    return i == 0 ? spec.first_delay_ns : spec.gap_ns;
  };
  auto tokens_of = [&](std::size_t i) {
    return i < spec.chunk_tokens.size() ? spec.chunk_tokens[i] : 1;
  };
  int total = 0;
  for (std::size_t i = 0; i < n; ++i) total += tokens_of(i);
  const bool last_marks_end = spec.end_marker;  // the final content chunk carries finish info

  int cum = 0;
  std::string text;
  switch (spec.format) {
    case EngineFormat::openai_completions:
    case EngineFormat::openai_chat: {
      const bool chat = spec.format == EngineFormat::openai_chat;
      json base = {{"id", chat ? "chatcmpl-test" : "cmpl-test"},
                   {"object", chat ? "chat.completion.chunk" : "text_completion"},
                   {"created", 1700000000},
                   {"model", spec.model}};
      if (chat) {
        json role = base;
        role["choices"] = json::array({{{"index", 0},
                                        {"delta", {{"role", "assistant"}, {"content", ""}}},
                                        {"logprobs", nullptr},
                                        {"finish_reason", nullptr}}});
        sc.steps.push_back({0, sse(role)});
      }
      for (std::size_t i = 0; i < n; ++i) {
        cum += tokens_of(i);
        json c = base;
        json choice = {{"index", 0}, {"logprobs", nullptr}};
        if (chat) {
          choice["delta"] = {{"content", spec.tokens[i]}};
        } else {
          choice["text"] = spec.tokens[i];
        }
        const bool last = i + 1 == n && last_marks_end;
        choice["finish_reason"] = last ? json(spec.finish_reason) : json(nullptr);
        c["choices"] = json::array({choice});
        if (spec.continuous_usage) c["usage"] = usage_json(spec.prompt_tokens, cum);
        sc.steps.push_back({delay_of(i), sse(c)});
      }
      if (spec.end_marker) {
        if (spec.usage) {
          json u = base;
          u["choices"] = json::array();
          u["usage"] = usage_json(spec.prompt_tokens, total);
          sc.steps.push_back({0, sse(u)});
        }
        sc.steps.push_back({0, "data: [DONE]\n\n"});
      }
      break;
    }
    case EngineFormat::sglang_generate: {
      for (std::size_t i = 0; i < n; ++i) {
        cum += tokens_of(i);
        text += spec.tokens[i];
        const bool last = i + 1 == n && last_marks_end;
        json fin = last ? json{{"type", spec.finish_reason}} : json(nullptr);
        if (last && spec.finish_reason == "length") fin["length"] = total;
        json c = {{"text", text},
                  {"meta_info",
                   {{"id", "sglang-test"},
                    {"finish_reason", fin},
                    {"prompt_tokens", spec.prompt_tokens},
                    {"completion_tokens", cum},
                    {"cached_tokens", 0}}}};
        sc.steps.push_back({delay_of(i), sse(c)});
      }
      if (spec.end_marker) sc.steps.push_back({0, "data: [DONE]\n\n"});
      break;
    }
    case EngineFormat::llamacpp_completion: {
      for (std::size_t i = 0; i < n; ++i) {
        json c = {{"content", spec.tokens[i]}, {"tokens", json::array()}, {"stop", false},
                  {"id_slot", 0}, {"index", 0}};
        sc.steps.push_back({delay_of(i), sse(c)});
      }
      if (spec.end_marker) {
        json fin = {{"content", ""},
                    {"tokens", json::array()},
                    {"id_slot", 0},
                    {"stop", true},
                    {"model", spec.model},
                    {"tokens_predicted", total},
                    {"tokens_evaluated", spec.prompt_tokens},
                    {"stop_type", spec.finish_reason == "length" ? "limit" : "eos"},
                    {"timings",
                     {{"prompt_n", spec.prompt_tokens},
                      {"prompt_ms", 12.5},
                      {"predicted_n", total},
                      {"predicted_ms", 100.0},
                      {"cache_n", 0}}}};
        sc.steps.push_back({0, sse(fin)});
      }
      break;
    }
    case EngineFormat::tgi_generate_stream: {
      for (std::size_t i = 0; i < n; ++i) {
        text += spec.tokens[i];
        const bool last = i + 1 == n && last_marks_end;
        json c = {{"index", i + 1},
                  {"token",
                   {{"id", i + 1}, {"text", spec.tokens[i]}, {"logprob", -0.5}, {"special", false}}},
                  {"generated_text", last ? json(text) : json(nullptr)},
                  {"details", last ? json{{"finish_reason", spec.finish_reason},
                                          {"generated_tokens", total},
                                          {"seed", nullptr},
                                          {"input_length", spec.prompt_tokens}}
                                   : json(nullptr)},
                  {"top_tokens", nullptr}};
        sc.steps.push_back({delay_of(i), sse(c, /*space=*/false)});
      }
      break;
    }
  }
  return sc;
}

Script json_response(int status, std::string body, net::Headers extra_headers) {
  Script sc;
  sc.status = status;
  sc.headers = {{"Content-Type", "application/json"}};
  for (auto& h : extra_headers) sc.headers.push_back(std::move(h));
  sc.chunked = false;
  sc.steps.push_back({0, std::move(body)});
  return sc;
}

Script null_target(EngineFormat format, int tokens) {
  StreamSpec spec;
  spec.format = format;
  spec.tokens = numbered_tokens(tokens);
  return engine_stream(spec);
}

}  // namespace inferscope::testserver
