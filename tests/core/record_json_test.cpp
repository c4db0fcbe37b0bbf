#include "inferscope/core/record_json.h"

#include <gtest/gtest.h>

#include "inferscope/core/errors.h"

namespace inferscope {

TEST(RecordJson, RoundTripsRelativeToOrigin) {
  RequestRecord r;
  r.id = 42;
  r.type = "qa";
  r.t_sched = 1000;
  r.t_send = 1100;
  r.t_headers = 1200;
  r.t_first = 1300;
  r.t_last = 1500;
  r.t_done = 1600;
  r.chunks = {{1300, 1}, {1400, 2}, {1500, 1}};
  r.completion_tokens = 4;
  r.error = ErrorClass::truncated;
  r.server_timings_json = R"({"prompt_n":5})";
  auto j = record_to_json(r, 1000);
  EXPECT_EQ(j["t_send"], 100);
  EXPECT_EQ(j["chunks"][1][0], 400);
  EXPECT_EQ(j["error"], "truncated");
  EXPECT_EQ(j["server_timings"]["prompt_n"], 5);
  auto back = record_from_json(j, "x.jsonl", 3);
  EXPECT_EQ(back.id, 42u);
  EXPECT_EQ(back.t_first, 300);
  EXPECT_EQ(back.chunks.size(), 3u);
  EXPECT_EQ(back.chunks[1].tokens, 2);
  EXPECT_EQ(back.error, ErrorClass::truncated);
  EXPECT_EQ(back.output_tokens(), 4);
}

TEST(RecordJson, MissingFieldNamesLineAndField) {
  nlohmann::json j = {{"id", 1}};
  try {
    record_from_json(j, "runs/requests.jsonl", 7);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 7);
    EXPECT_EQ(e.field(), "t_sched");
  }
}

TEST(ErrorClass, NamesRoundTrip) {
  for (int i = 0; i < kErrorClassCount; ++i) {
    auto e = static_cast<ErrorClass>(i);
    EXPECT_EQ(error_class_from_string(to_string(e)), e);
  }
  EXPECT_FALSE(error_class_from_string("nope"));
}

}  // namespace inferscope
