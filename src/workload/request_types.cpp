#include "inferscope/workload/request_types.h"

#include <cmath>

namespace inferscope::workload {
namespace {

LengthDist lognormal(double median, double sigma, std::int64_t lo, std::int64_t hi) {
  LengthDist d;
  d.kind = DistKind::lognormal;
  d.mu = std::log(median);
  d.sigma = sigma;
  d.min = std::min(lo, hi);
  d.max = hi;
  return d;
}

const nlohmann::json& default_schema() {
  static const nlohmann::json s = nlohmann::json::parse(R"({
    "type": "object",
    "properties": {
      "answer": {"type": "string"},
      "category": {"type": "string", "enum": ["fact", "opinion", "other"]},
      "confidence": {"type": "number"},
      "tags": {"type": "array", "items": {"type": "string"}}
    },
    "required": ["answer", "category"]
  })");
  return s;
}

const char* kDefaultTools = R"([
  {"type": "function", "function": {"name": "get_weather",
    "description": "Current weather for a city",
    "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
      "required": ["city"]}}},
  {"type": "function", "function": {"name": "search_docs",
    "description": "Search the document store",
    "parameters": {"type": "object",
      "properties": {"query": {"type": "string"}, "top_k": {"type": "integer"}},
      "required": ["query"]}}}
])";

bool type_matches(const nlohmann::json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "number") return v.is_number();
  if (t == "integer")
    return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  return true;  // unknown type names are not ours to reject
}

Validation fail_at(const std::string& path, const std::string& msg) {
  return {false, (path.empty() ? "/" : path) + ": " + msg};
}

Validation validate_at(const nlohmann::json& v, const nlohmann::json& s, const std::string& path) {
  if (!s.is_object()) return {};
  if (s.contains("type")) {
    const auto& t = s["type"];
    bool ok = false;
    if (t.is_string()) ok = type_matches(v, t.get<std::string>());
    if (t.is_array())
      for (const auto& e : t) ok = ok || (e.is_string() && type_matches(v, e.get<std::string>()));
    if (!ok) return fail_at(path, "expected type " + t.dump() + ", got " + std::string(v.type_name()));
  }
  if (s.contains("enum") && s["enum"].is_array()) {
    bool found = false;
    for (const auto& e : s["enum"]) found = found || e == v;
    if (!found) return fail_at(path, "value " + v.dump() + " not in enum " + s["enum"].dump());
  }
  if (v.is_object()) {
    if (s.contains("required") && s["required"].is_array())
      for (const auto& r : s["required"])
        if (r.is_string() && !v.contains(r.get<std::string>()))
          return fail_at(path, "missing required property '" + r.get<std::string>() + "'");
    const bool closed = s.contains("additionalProperties") && s["additionalProperties"] == false;
    const nlohmann::json* props = s.contains("properties") && s["properties"].is_object() ? &s["properties"] : nullptr;
    for (const auto& [k, sub] : v.items()) {
      if (props && props->contains(k)) {
        auto r = validate_at(sub, (*props)[k], path + "/" + k);
        if (!r.ok) return r;
      } else if (closed) {
        return fail_at(path, "unexpected property '" + k + "'");
      }
    }
  }
  if (v.is_array() && s.contains("items")) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      auto r = validate_at(v[i], s["items"], path + "/" + std::to_string(i));
      if (!r.ok) return r;
    }
  }
  return {};
}

// Strips whitespace and a markdown code fence around a JSON reply.
std::string_view unwrap(std::string_view s) {
  auto trim = [](std::string_view x) {
    while (!x.empty() && std::isspace(static_cast<unsigned char>(x.front()))) x.remove_prefix(1);
    while (!x.empty() && std::isspace(static_cast<unsigned char>(x.back()))) x.remove_suffix(1);
    return x;
  };
  s = trim(s);
  if (s.starts_with("```")) {
    const auto nl = s.find('\n');
    const auto end = s.rfind("```");
    if (nl != std::string_view::npos && end != std::string_view::npos && end > nl) s = trim(s.substr(nl + 1, end - nl - 1));
  }
  return s;
}

}  // namespace

TypeDefaults type_defaults(std::string_view name, std::int64_t max_len) {
  TypeDefaults d;
  if (name == "qa") {
    d.input = lognormal(256, 0.6, 16, std::min<std::int64_t>(4096, max_len));
    d.output = lognormal(128, 0.5, 8, std::min<std::int64_t>(1024, max_len));
    d.instruction = " Answer the question below in a few sentences.";
  } else if (name == "long_doc") {
    d.input = lognormal(6000, 0.35, std::min<std::int64_t>(2048, max_len), max_len);
    d.output = lognormal(300, 0.4, 32, std::min<std::int64_t>(2048, max_len));
    d.instruction = " Summarize the following document.";
  } else if (name == "structured") {
    d.input = lognormal(512, 0.5, 32, std::min<std::int64_t>(8192, max_len));
    d.output = LengthDist::fixed_of(256);
    d.instruction = " Reply with one JSON object that matches the given schema.";
    d.response_format_json = response_format_for_schema(default_schema()).dump();
    d.ignore_eos = false;  // the reply must end where the JSON ends to be valid
  } else if (name == "tool_call") {
    d.input = lognormal(768, 0.5, 32, std::min<std::int64_t>(8192, max_len));
    d.output = LengthDist::fixed_of(128);
    d.instruction = " Call a tool if it helps to answer.";
    d.tools_json = nlohmann::json::parse(kDefaultTools).dump();
    d.ignore_eos = false;
  }
  return d;
}

nlohmann::json response_format_for_schema(const nlohmann::json& schema) {
  return {{"type", "json_schema"}, {"json_schema", {{"name", "reply"}, {"schema", schema}, {"strict", true}}}};
}

Validation validate_json(const nlohmann::json& value, const nlohmann::json& schema) {
  return validate_at(value, schema, "");
}

Validation validate_structured_reply(std::string_view reply, std::string_view response_format_json) {
  const auto rf = nlohmann::json::parse(response_format_json, nullptr, false);
  if (rf.is_discarded()) return {false, "response_format is not JSON"};
  const nlohmann::json* schema = &rf;
  if (rf.contains("json_schema") && rf["json_schema"].contains("schema")) schema = &rf["json_schema"]["schema"];
  const auto v = nlohmann::json::parse(unwrap(reply), nullptr, false);
  if (v.is_discarded()) return {false, "reply is not valid JSON"};
  return validate_json(v, *schema);
}

Validation validate_tool_call(const ToolCall& call, std::string_view tools_json) {
  const auto tools = nlohmann::json::parse(tools_json, nullptr, false);
  if (!tools.is_array()) return {false, "tools is not a JSON array"};
  for (const auto& t : tools) {
    const auto& fn = t.contains("function") ? t["function"] : t;
    if (!fn.is_object() || fn.value("name", "") != call.name) continue;
    const auto args = nlohmann::json::parse(call.arguments.empty() ? std::string_view("{}") : std::string_view(call.arguments),
                                            nullptr, false);
    if (args.is_discarded()) return {false, "arguments of '" + call.name + "' are not valid JSON"};
    if (!args.is_object()) return {false, "arguments of '" + call.name + "' are not a JSON object"};
    if (!fn.contains("parameters")) return {};
    auto r = validate_json(args, fn["parameters"]);
    if (!r.ok) r.error = call.name + ": " + r.error;
    return r;
  }
  return {false, "unknown tool '" + call.name + "'"};
}

std::vector<ToolCall> extract_tool_calls(std::string_view reply) {
  std::vector<ToolCall> out;
  const auto j = nlohmann::json::parse(unwrap(reply), nullptr, false);
  if (j.is_discarded()) return out;
  auto one = [&](const nlohmann::json& c) {
    const auto& fn = c.contains("function") ? c["function"] : c;
    if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string()) return;
    ToolCall tc;
    tc.name = fn["name"].get<std::string>();
    if (fn.contains("arguments")) tc.arguments = fn["arguments"].is_string() ? fn["arguments"].get<std::string>() : fn["arguments"].dump();
    if (fn.contains("parameters") && !fn.contains("arguments")) tc.arguments = fn["parameters"].dump();
    out.push_back(std::move(tc));
  };
  if (j.is_object() && j.contains("tool_calls") && j["tool_calls"].is_array()) {
    for (const auto& c : j["tool_calls"]) one(c);
  } else if (j.is_array()) {
    for (const auto& c : j) one(c);
  } else if (j.is_object()) {
    one(j);
  }
  return out;
}

}  // namespace inferscope::workload
