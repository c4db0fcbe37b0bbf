#include "inferscope/core/record_json.h"

#include "inferscope/core/errors.h"

namespace inferscope {
namespace {
Nanos rel(Nanos t, Nanos origin) { return t < 0 ? -1 : t - origin; }
}  // namespace

nlohmann::json record_to_json(const RequestRecord& r, Nanos origin) {
  nlohmann::json j;
  j["id"] = r.id;
  j["type"] = r.type;
  if (r.session_id != 0) {
    j["session_id"] = r.session_id;
    j["turn"] = r.turn;
    j["wait_before_ns"] = r.wait_before_ns;
    j["wait_is_tool"] = r.wait_is_tool;
  }
  j["warmup"] = r.warmup;
  j["t_sched"] = rel(r.t_sched, origin);
  j["t_send"] = rel(r.t_send, origin);
  j["t_headers"] = rel(r.t_headers, origin);
  j["t_first"] = rel(r.t_first, origin);
  j["t_last"] = rel(r.t_last, origin);
  j["t_done"] = rel(r.t_done, origin);
  nlohmann::json chunks = nlohmann::json::array();
  for (const auto& c : r.chunks) chunks.push_back({rel(c.t_ns, origin), c.tokens});
  j["chunks"] = std::move(chunks);
  j["input_tokens_requested"] = r.input_tokens_requested;
  j["max_tokens"] = r.max_tokens;
  j["prompt_tokens"] = r.prompt_tokens;
  j["completion_tokens"] = r.completion_tokens;
  j["cached_tokens"] = r.cached_tokens;
  j["tokenizer_output_tokens"] = r.tokenizer_output_tokens;
  j["output_tokens"] = r.output_tokens();
  j["usage_streamed"] = r.usage_streamed;
  j["http_status"] = r.http_status;
  j["error"] = r.ok() ? nlohmann::json(nullptr) : nlohmann::json(std::string(to_string(r.error)));
  if (!r.error_detail.empty()) j["error_detail"] = r.error_detail;
  if (!r.finish_reason.empty()) j["finish_reason"] = r.finish_reason;
  j["net"] = {{"dns_ns", r.net.dns_ns},
              {"connect_ns", r.net.connect_ns},
              {"tls_ns", r.net.tls_ns},
              {"first_byte_ns", r.net.first_byte_ns},
              {"reused_connection", r.net.reused_connection}};
  if (!r.server_timings_json.empty()) {
    j["server_timings"] = nlohmann::json::parse(r.server_timings_json, nullptr, false);
  }
  if (!r.output_text.empty()) j["output_text"] = r.output_text;
  if (!r.tool_calls_json.empty())
    j["tool_calls"] = nlohmann::json::parse(r.tool_calls_json, nullptr, false)["tool_calls"];
  if (r.output_check >= 0) {
    j["output_check"] = r.output_check == 1 ? "pass" : "fail";
    if (!r.output_check_detail.empty()) j["output_check_detail"] = r.output_check_detail;
  }
  return j;
}

RequestRecord record_from_json(const nlohmann::json& j, const std::string& where, int line) {
  RequestRecord r;
  auto need = [&](const char* key) -> const nlohmann::json& {
    auto it = j.find(key);
    if (it == j.end()) throw InputError(where, line, key, "missing");
    return *it;
  };
  try {
    r.id = need("id").get<std::uint64_t>();
    r.type = j.value("type", std::string("default"));
    r.session_id = j.value("session_id", std::uint64_t{0});
    r.turn = j.value("turn", 0);
    r.wait_before_ns = j.value("wait_before_ns", Nanos{0});
    r.wait_is_tool = j.value("wait_is_tool", false);
    r.warmup = j.value("warmup", false);
    r.t_sched = need("t_sched").get<Nanos>();
    r.t_send = need("t_send").get<Nanos>();
    r.t_headers = j.value("t_headers", Nanos{-1});
    r.t_first = need("t_first").get<Nanos>();
    r.t_last = need("t_last").get<Nanos>();
    r.t_done = need("t_done").get<Nanos>();
    for (const auto& c : need("chunks")) r.chunks.push_back({c.at(0).get<Nanos>(), c.at(1).get<std::int32_t>()});
    r.input_tokens_requested = j.value("input_tokens_requested", -1);
    r.max_tokens = j.value("max_tokens", -1);
    r.prompt_tokens = j.value("prompt_tokens", -1);
    r.completion_tokens = j.value("completion_tokens", -1);
    r.cached_tokens = j.value("cached_tokens", -1);
    r.tokenizer_output_tokens = j.value("tokenizer_output_tokens", 0);
    r.usage_streamed = j.value("usage_streamed", false);
    r.http_status = j.value("http_status", 0);
    if (auto it = j.find("error"); it != j.end() && !it->is_null()) {
      auto e = error_class_from_string(it->get<std::string>());
      if (!e) throw InputError(where, line, "error", "unknown error class '" + it->get<std::string>() + "'");
      r.error = *e;
    }
    r.error_detail = j.value("error_detail", std::string());
    r.finish_reason = j.value("finish_reason", std::string());
    if (auto it = j.find("net"); it != j.end()) {
      r.net.dns_ns = it->value("dns_ns", Nanos{0});
      r.net.connect_ns = it->value("connect_ns", Nanos{0});
      r.net.tls_ns = it->value("tls_ns", Nanos{0});
      r.net.first_byte_ns = it->value("first_byte_ns", Nanos{0});
      r.net.reused_connection = it->value("reused_connection", false);
    }
    if (auto it = j.find("server_timings"); it != j.end()) r.server_timings_json = it->dump();
    r.output_text = j.value("output_text", std::string());
    if (auto it = j.find("tool_calls"); it != j.end()) r.tool_calls_json = nlohmann::json{{"tool_calls", *it}}.dump();
    if (auto it = j.find("output_check"); it != j.end()) r.output_check = *it == "pass" ? 1 : 0;
    r.output_check_detail = j.value("output_check_detail", std::string());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where, line, "", std::string("bad record: ") + e.what());
  }
  return r;
}

}  // namespace inferscope
