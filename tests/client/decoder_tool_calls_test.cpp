// Streamed tool calls are rebuilt (fragments joined per index) so they can be validated.
#include <gtest/gtest.h>

#include "inferscope/client/protocol.h"

namespace inferscope {

TEST(DecoderToolCalls, FragmentsJoinPerIndex) {
  const std::string stream =
      R"(data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]})" "\n\n"
      R"(data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]})" "\n\n"
      R"(data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": "}}]}}]})" "\n\n"
      R"(data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]})" "\n\n"
      R"(data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})" "\n\n"
      "data: [DONE]\n\n";
  RequestRecord rec;
  auto dec = make_stream_decoder(ApiKind::chat, nullptr, /*keep_text=*/true);
  dec->on_body(stream, 1000, rec);
  dec->on_end(2000, rec);
  EXPECT_TRUE(rec.ok()) << rec.error_detail;
  EXPECT_EQ(rec.chunks.size(), 3u);  // the three tool-call deltas are content
  EXPECT_EQ(rec.tool_calls_json,
            R"({"tool_calls":[{"function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]})");
  EXPECT_EQ(rec.finish_reason, "tool_calls");

  RequestRecord plain;
  auto dec2 = make_stream_decoder(ApiKind::chat, nullptr, /*keep_text=*/false);
  dec2->on_body(stream, 1000, plain);
  EXPECT_TRUE(plain.tool_calls_json.empty());
}

}  // namespace inferscope
