#pragma once
// The four request types (qa, long_doc, structured, tool_call): their default shapes, and
// validators for structured replies and tool calls. Pure functions, thread-safe.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "inferscope/workload/distribution.h"

namespace inferscope::workload {

// Defaults for a type name; unknown names get none (plain prompts).
//   qa:         input lognormal median 256, output median 128 (short questions)
//   long_doc:   input lognormal median 6000 (>= 2048), output median 300
//   structured: input median 512, output 256, a JSON-schema response_format, ignore_eos off
//   tool_call:  input median 768, output 128, two function tools, ignore_eos off
struct TypeDefaults {
  std::optional<LengthDist> input, output;
  std::string instruction;
  std::string response_format_json;
  std::string tools_json;
  std::optional<bool> ignore_eos;
};
TypeDefaults type_defaults(std::string_view name, std::int64_t max_len);

// {"type":"json_schema","json_schema":{"name":"reply","schema":schema,"strict":true}}
nlohmann::json response_format_for_schema(const nlohmann::json& schema);

// Result of a validation: ok, or the first violation with its JSON pointer ("/tags/2").
struct Validation {
  bool ok = true;
  std::string error;
};

// Validates `value` against the schema subset inferscope supports: type (object, array,
// string, number, integer, boolean, null, or a list of them), properties, required, enum,
// items, additionalProperties: false. Other keywords are ignored (documented).
Validation validate_json(const nlohmann::json& value, const nlohmann::json& schema);

// Parses `reply` as JSON (surrounding whitespace and a ```json fence allowed) and validates
// it against the schema inside `response_format_json` (or a bare schema).
Validation validate_structured_reply(std::string_view reply, std::string_view response_format_json);

// One tool call as the server returned it (OpenAI `tool_calls[i].function`).
struct ToolCall {
  std::string name;
  std::string arguments;  // JSON text
};

// The tool exists in `tools_json`, its arguments parse as a JSON object and match the
// tool's parameters schema.
Validation validate_tool_call(const ToolCall& call, std::string_view tools_json);

// Tool calls in an OpenAI chat reply message (`{"tool_calls":[{"function":{…}}]}`), or in
// text as {"name":…, "arguments":…} (models that answer tool calls in plain content).
std::vector<ToolCall> extract_tool_calls(std::string_view reply);

}  // namespace inferscope::workload
