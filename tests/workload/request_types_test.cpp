#include <gtest/gtest.h>

#include "inferscope/workload/request_types.h"

namespace inferscope::workload {
namespace {

const nlohmann::json kSchema = nlohmann::json::parse(R"({
  "type": "object",
  "properties": {
    "answer": {"type": "string"},
    "n": {"type": "integer"},
    "kind": {"enum": ["a", "b"]},
    "tags": {"type": "array", "items": {"type": "string"}},
    "opt": {"type": ["string", "null"]}
  },
  "required": ["answer", "kind"],
  "additionalProperties": false
})");

TEST(Schema, AcceptsAndRejects) {
  EXPECT_TRUE(validate_json(nlohmann::json::parse(R"({"answer":"x","kind":"a","n":3,"tags":["p"],"opt":null})"), kSchema).ok);
  EXPECT_TRUE(validate_json(nlohmann::json::parse(R"({"answer":"x","kind":"b","n":3.0})"), kSchema).ok);
  auto r = validate_json(nlohmann::json::parse(R"({"kind":"a"})"), kSchema);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "/: missing required property 'answer'");
  r = validate_json(nlohmann::json::parse(R"({"answer":"x","kind":"c"})"), kSchema);
  EXPECT_EQ(r.error, "/kind: value \"c\" not in enum [\"a\",\"b\"]");
  r = validate_json(nlohmann::json::parse(R"({"answer":"x","kind":"a","tags":["p",2]})"), kSchema);
  EXPECT_EQ(r.error, "/tags/1: expected type \"string\", got number");
  r = validate_json(nlohmann::json::parse(R"({"answer":"x","kind":"a","n":2.5})"), kSchema);
  EXPECT_FALSE(r.ok);
  r = validate_json(nlohmann::json::parse(R"({"answer":"x","kind":"a","extra":1})"), kSchema);
  EXPECT_EQ(r.error, "/: unexpected property 'extra'");
  EXPECT_FALSE(validate_json(nlohmann::json::parse("[1]"), kSchema).ok);
}

TEST(Schema, StructuredReplyThroughResponseFormat) {
  const std::string rf = response_format_for_schema(kSchema).dump();
  EXPECT_TRUE(validate_structured_reply("  {\"answer\":\"x\",\"kind\":\"a\"}\n", rf).ok);
  EXPECT_TRUE(validate_structured_reply("```json\n{\"answer\":\"x\",\"kind\":\"a\"}\n```", rf).ok);
  EXPECT_EQ(validate_structured_reply("{\"answer\":", rf).error, "reply is not valid JSON");
  EXPECT_FALSE(validate_structured_reply("{\"answer\":1,\"kind\":\"a\"}", rf).ok);
  // The default structured type's schema.
  const auto def = type_defaults("structured", 8192);
  EXPECT_TRUE(validate_structured_reply(R"({"answer":"yes","category":"fact"})", def.response_format_json).ok);
  EXPECT_FALSE(validate_structured_reply(R"({"answer":"yes","category":"joke"})", def.response_format_json).ok);
}

TEST(ToolCall, ValidatesNameAndArguments) {
  const std::string tools = type_defaults("tool_call", 8192).tools_json;
  EXPECT_TRUE(validate_tool_call({"get_weather", R"({"city":"Oslo","unit":"celsius"})"}, tools).ok);
  EXPECT_EQ(validate_tool_call({"get_wether", "{}"}, tools).error, "unknown tool 'get_wether'");
  EXPECT_EQ(validate_tool_call({"get_weather", "{\"city\":"}, tools).error, "arguments of 'get_weather' are not valid JSON");
  EXPECT_EQ(validate_tool_call({"get_weather", R"({"unit":"kelvin","city":"x"})"}, tools).error,
            "get_weather: /unit: value \"kelvin\" not in enum [\"celsius\",\"fahrenheit\"]");
  EXPECT_EQ(validate_tool_call({"search_docs", R"({"query":"q","top_k":"3"})"}, tools).error,
            "search_docs: /top_k: expected type \"integer\", got string");
  EXPECT_FALSE(validate_tool_call({"search_docs", "[]"}, tools).ok);
}

TEST(ToolCall, ExtractFromMessageOrText) {
  auto calls = extract_tool_calls(
      R"({"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]})");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].name, "get_weather");
  EXPECT_EQ(calls[0].arguments, "{\"city\":\"Rome\"}");
  calls = extract_tool_calls(R"({"name":"search_docs","arguments":{"query":"kv cache"}})");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(calls[0].arguments)["query"], "kv cache");
  EXPECT_TRUE(extract_tool_calls("plain text").empty());
}

TEST(TypeDefaults, Shapes) {
  EXPECT_TRUE(type_defaults("qa", 8192).input.has_value());
  EXPECT_EQ(type_defaults("long_doc", 8192).input->min, 2048);
  EXPECT_FALSE(*type_defaults("structured", 8192).ignore_eos);
  EXPECT_FALSE(type_defaults("custom", 8192).input.has_value());
}

}  // namespace
}  // namespace inferscope::workload
