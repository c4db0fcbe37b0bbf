#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

#include "inferscope/core/errors.h"
#include "inferscope/workload/request_types.h"
#include "inferscope/workload/workload.h"
#include "test_util.h"

namespace inferscope::workload {
namespace {
using testing::shared_path;

std::vector<SessionPlan> take(SessionSource& src, int n) {
  std::vector<SessionPlan> out;
  for (int i = 0; i < n; ++i) {
    auto p = src.next();
    if (!p) break;
    out.push_back(std::move(*p));
  }
  return out;
}

TEST(Workload, FixedLengthsAreExactUnderSim) {
  SimTextTokenizer tok;
  const auto cfg = fixed_workload(700, 64);
  auto src = make_session_source(cfg, 1, tok);
  EXPECT_FALSE(src->has_arrival_times());
  std::set<std::string> prompts;
  for (const auto& p : take(*src, 50)) {
    ASSERT_EQ(p.turns.size(), 1u);
    const auto& r = p.turns[0].req;
    EXPECT_EQ(r.input_tokens, 700);
    EXPECT_EQ(tok.count(r.prompt), 700);
    EXPECT_EQ(r.max_tokens, 64);
    EXPECT_EQ(r.type, "default");
    EXPECT_TRUE(r.ignore_eos);
    EXPECT_EQ(r.session_id, 0u);
    EXPECT_FALSE(p.arrival_ns.has_value());
    prompts.insert(r.prompt);
  }
  EXPECT_EQ(prompts.size(), 50u);
}

TEST(Workload, SameSeedSameSessions) {
  SimTextTokenizer tok;
  const auto cfg = parse_workload("{input: {dist: uniform, min: 10, max: 500}, output: {dist: normal, mean: 50, std: 20}}");
  auto a = take(*make_session_source(cfg, 9, tok), 20);
  auto b = take(*make_session_source(cfg, 9, tok), 20);
  auto c = take(*make_session_source(cfg, 10, tok), 20);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].turns[0].req.prompt, b[i].turns[0].req.prompt);
    EXPECT_EQ(a[i].turns[0].req.max_tokens, b[i].turns[0].req.max_tokens);
    EXPECT_EQ(tok.count(a[i].turns[0].req.prompt), a[i].turns[0].req.input_tokens);
  }
  EXPECT_NE(a[0].turns[0].req.prompt, c[0].turns[0].req.prompt);
}

TEST(Workload, TypesByWeightWithTheirShapes) {
  SimTextTokenizer tok;
  const auto cfg = parse_workload("{types: {qa: 1, long_doc: 1, structured: 1, tool_call: 1}, count: 400}");
  std::map<std::string, int> n;
  for (const auto& p : take(*make_session_source(cfg, 3, tok), 1000)) {
    const auto& r = p.turns[0].req;
    ++n[r.type];
    EXPECT_EQ(tok.count(r.prompt), r.input_tokens);
    if (r.type == "structured") {
      EXPECT_FALSE(r.response_format_json.empty());
      EXPECT_FALSE(r.ignore_eos);
    }
    if (r.type == "tool_call") {
      EXPECT_NE(r.tools_json.find("get_weather"), std::string::npos);
    }
    if (r.type == "long_doc") {
      EXPECT_GE(r.input_tokens, 2048);
    }
  }
  EXPECT_EQ(n["qa"] + n["long_doc"] + n["structured"] + n["tool_call"], 400);  // count ends the source
  for (const auto& [k, v] : n) EXPECT_GT(v, 60) << k;
}

TEST(Workload, ExplicitLengthsBeatTypeDefaults) {
  SimTextTokenizer tok;
  const auto cfg = parse_workload("{input: 100, output: 7, types: [{name: qa}, {name: long_doc, input: 3000}]}");
  for (const auto& p : take(*make_session_source(cfg, 3, tok), 50)) {
    const auto& r = p.turns[0].req;
    EXPECT_EQ(r.input_tokens, r.type == "qa" ? 100 : 3000);
    EXPECT_EQ(r.max_tokens, 7);
  }
}

TEST(Workload, SchemaInSpecBecomesResponseFormat) {
  const auto cfg = parse_workload(
      "types:\n  - name: structured\n    schema: {type: object, properties: {x: {type: integer}}, required: [x]}\n");
  SimTextTokenizer tok;
  const auto p = make_session_source(cfg, 1, tok)->next();
  const auto rf = nlohmann::json::parse(p->turns[0].req.response_format_json);
  EXPECT_EQ(rf["json_schema"]["schema"]["required"][0], "x");
  EXPECT_TRUE(validate_structured_reply("{\"x\": 3}", p->turns[0].req.response_format_json).ok);
}

TEST(Workload, SessionsCarryOnlyNewContent) {
  SimTextTokenizer tok;
  const auto cfg = parse_workload(
      "{input: 200, output: 20, sessions: {turns: 4, followup_input: 30, tool_fraction: 1.0, "
      "tool_wait_ms: {dist: uniform, min: 100, max: 200}, tool_result_tokens: 40}}");
  const auto plans = take(*make_session_source(cfg, 2, tok), 5);
  for (const auto& p : plans) {
    ASSERT_EQ(p.turns.size(), 4u);
    EXPECT_EQ(p.turns[0].req.input_tokens, 200);
    for (std::size_t k = 0; k < 4; ++k) {
      EXPECT_EQ(p.turns[k].req.session_id, p.session_id);
      EXPECT_EQ(p.turns[k].req.turn, static_cast<int>(k));
    }
    for (std::size_t k = 1; k < 4; ++k) {
      EXPECT_EQ(p.turns[k].req.input_tokens, 30);
      EXPECT_EQ(tok.count(p.turns[k].req.prompt), 30);
      EXPECT_EQ(tok.count(p.turns[k].tool_result), 40);
      EXPECT_TRUE(p.turns[k].wait_is_tool);
      EXPECT_GE(p.turns[k].wait_before_ns, 100 * kNsPerMs);
      EXPECT_LE(p.turns[k].wait_before_ns, 200 * kNsPerMs);
    }
  }
}

TEST(Workload, SharedPrefixReuseIsWhatTheUserChose) {
  SimTextTokenizer tok;
  // Every request: 32 shared tokens (2 blocks of 16) + 32 own tokens, 10 requests.
  // Blocks: 4 per request, 40 in all; every request after the first reuses 2: 18/40.
  auto cfg = parse_workload("{input: 64, output: 8, prefix: {tokens: 32, share: 1.0, distinct: 1}, count: 10}");
  EXPECT_DOUBLE_EQ(inspect(cfg, tok, 1).prefix_reuse_fraction, 18.0 / 40.0);
  // Without a prefix nothing is reused.
  cfg = parse_workload("{input: 64, output: 8, count: 10}");
  EXPECT_DOUBLE_EQ(inspect(cfg, tok, 1).prefix_reuse_fraction, 0.0);
}

TEST(Workload, SessionHistoryCountsAsReuse) {
  SimTextTokenizer tok;
  // One session of 2 turns: turn 0 = 32 tokens (2 blocks); the reply stands in as 16 fresh
  // tokens, then tool result 16 + new 16. Turn 1's prompt = 32 + 16 + 16 + 16 = 80 tokens =
  // 5 blocks, the first 2 seen before. Hits 2 of 2 + 5 = 7 blocks.
  const auto cfg = parse_workload(
      "{input: 32, output: 16, count: 1, sessions: {turns: 2, followup_input: 16, tool_result_tokens: 16, tool_wait_ms: 5}}");
  const auto s = inspect(cfg, tok, 1);
  EXPECT_EQ(s.count, 2);
  EXPECT_DOUBLE_EQ(s.prefix_reuse_fraction, 2.0 / 7.0);
}

TEST(Workload, MooncakeHashIdsBecomeIdenticalBlocks) {
  const auto dir = std::filesystem::temp_directory_path() / ("inferscope_wl_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "m.jsonl");
    f << "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 5, \"hash_ids\": [0, 1, 2]}\n"
         "{\"timestamp\": 2000, \"input_length\": 600, \"output_length\": 7, \"hash_ids\": [0, 3]}\n";
  }
  SimTextTokenizer tok;
  const auto cfg = parse_workload((dir / "m.jsonl").string());
  auto src = make_session_source(cfg, 1, tok);
  EXPECT_TRUE(src->has_arrival_times());
  const auto a = src->next(), b = src->next();
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(src->next().has_value());
  EXPECT_EQ(a->turns[0].req.input_tokens, 1100);
  EXPECT_EQ(tok.count(a->turns[0].req.prompt), 1100);
  EXPECT_EQ(b->turns[0].req.input_tokens, 600);
  EXPECT_EQ(*b->arrival_ns, 2 * kNsPerSec);
  // The first 512 tokens (block 0) are the same text; block 1 vs 3 differ.
  const auto ta = tok.encode(a->turns[0].req.prompt), tb = tok.encode(b->turns[0].req.prompt);
  EXPECT_TRUE(std::equal(ta.begin(), ta.begin() + 512, tb.begin()));
  EXPECT_NE(ta[512], tb[512]);
  // Inspect: 5 hash ids, 1 repeated.
  const auto s = inspect(cfg, tok, 1);
  EXPECT_DOUBLE_EQ(s.prefix_reuse_fraction, 0.2);
  EXPECT_EQ(s.block_tokens, 512);
  std::filesystem::remove_all(dir);
}

TEST(Workload, TraceSessionsReplayWaitsAndText) {
  const auto dir = std::filesystem::temp_directory_path() / ("inferscope_wl2_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "s.jsonl");
    f << "{\"t_ms\": 0, \"input_tokens\": 20, \"output_tokens\": 5, \"session\": \"s1\", \"turn\": 0, \"type\": \"agent\"}\n"
         "{\"input_tokens\": 8, \"output_tokens\": 6, \"session\": \"s1\", \"turn\": 1, \"wait_ms\": 250, \"tool\": true}\n"
         "{\"t_ms\": 40, \"prompt\": \"why is the sky blue\", \"output_tokens\": 3}\n";
    std::ofstream g(dir / "c.json");
    g << R"([{"id": "x", "conversations": [{"from": "human", "value": "hello there"}, {"from": "gpt", "value": "hi you two"}]}])";
  }
  SimTextTokenizer tok;
  auto src = make_session_source(parse_workload((dir / "s.jsonl").string()), 1, tok);
  const auto a = src->next(), b = src->next();
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->turns.size(), 2u);
  EXPECT_EQ(a->turns[0].req.type, "agent");
  EXPECT_EQ(a->turns[0].req.session_id, a->session_id);
  EXPECT_EQ(a->turns[1].req.input_tokens, 8);
  EXPECT_EQ(tok.count(a->turns[1].req.prompt), 8);
  EXPECT_EQ(a->turns[1].wait_before_ns, 250 * kNsPerMs);
  EXPECT_TRUE(a->turns[1].wait_is_tool);
  EXPECT_EQ(b->turns[0].req.prompt, "why is the sky blue");
  EXPECT_EQ(b->turns[0].req.input_tokens, 5);
  EXPECT_EQ(*b->arrival_ns, 40 * kNsPerMs);
  EXPECT_EQ(b->turns[0].req.session_id, 0u);
  auto sg = make_session_source(parse_workload((dir / "c.json").string()), 1, tok);
  const auto c = sg->next();
  ASSERT_TRUE(c);
  EXPECT_FALSE(sg->has_arrival_times());
  EXPECT_EQ(c->turns[0].req.prompt, "hello there");
  EXPECT_EQ(c->turns[0].req.max_tokens, 3);  // the recorded reply's tokens
  std::filesystem::remove_all(dir);
}

TEST(Workload, TraceSpecWithSpeedAndWindow) {
  const auto cfg = parse_workload(std::string("{trace: {file: ") + shared_path("traces/AzureLLMInferenceTrace_code.csv") +
                                  ", speed: 2.0, window: [0, 60]}}");
  ASSERT_TRUE(cfg.trace_data);
  SimTextTokenizer tok;
  const auto s = inspect(cfg, tok, 1);
  EXPECT_GT(s.count, 0);
  EXPECT_LE(*s.duration_s, 30.0);  // 60 s of trace at 2x
  EXPECT_DOUBLE_EQ(s.prefix_reuse_fraction, 0.0);
  auto src = make_session_source(cfg, 1, tok);
  const auto first = src->next();
  EXPECT_EQ(*first->arrival_ns, 0);
  EXPECT_EQ(first->turns[0].req.input_tokens, 4808);
  EXPECT_EQ(tok.count(first->turns[0].req.prompt), 4808);
  EXPECT_EQ(first->turns[0].req.max_tokens, 10);
}

TEST(Workload, LengthsOnlyReplayHasNoArrivals) {
  const auto cfg = parse_workload(std::string("{trace: {file: ") + shared_path("traces/mooncake_synthetic_trace.jsonl") +
                                  ", timestamps: false}, count: 3}");
  SimTextTokenizer tok;
  auto src = make_session_source(cfg, 1, tok);
  EXPECT_FALSE(src->has_arrival_times());
  EXPECT_EQ(take(*src, 10).size(), 3u);
}

TEST(Workload, InspectRealMooncake) {
  SimTextTokenizer tok;
  const auto s = inspect(parse_workload(shared_path("traces/mooncake_synthetic_trace.jsonl")), tok, 1);
  EXPECT_EQ(s.count, 3993);
  EXPECT_GT(s.prefix_reuse_fraction, 0.0);
  EXPECT_LT(s.prefix_reuse_fraction, 1.0);
  const auto j = to_json(s);
  for (const char* k : {"count", "duration_s", "rate_rps", "peak_rate_rpm", "input_tokens", "output_tokens",
                        "prefix_reuse_fraction"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["input_tokens"]["count"], 3993);
}

TEST(Workload, BadSpecsAreInputErrors) {
  auto expect_err = [](const std::string& spec, int line, const std::string& field) {
    try {
      parse_workload(spec);
      ADD_FAILURE() << spec;
    } catch (const InputError& e) {
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
    }
  };
  expect_err("{inptu: 5}", 1, "inptu");
  expect_err("input: 5\noutput: {dist: lognormal}\n", 2, "output");
  expect_err("prefix: {tokens: 10, share: 2}\n", 1, "prefix.share");
  expect_err("{trace: {file: /nonexistent.csv}}", 0, "");
  expect_err("{types: {qa: 0}}", 1, "types");
  expect_err("{input: [1, 2}", 1, "");
  expect_err("no-such-file", 0, "");
}

TEST(Workload, DescribeHasTheShape) {
  const auto j = describe(parse_workload("{input: 100, types: {qa: 3, tool_call: 1}, prefix: {tokens: 50, share: 0.5}}"));
  EXPECT_EQ(j["input"]["dist"], "fixed");
  EXPECT_EQ(j["types"].size(), 2u);
  EXPECT_EQ(j["types"][1]["name"], "tool_call");
  EXPECT_TRUE(j["types"][1].contains("tools"));
  EXPECT_EQ(j["prefix"]["tokens"], 50);
  EXPECT_EQ(j["prefix"]["share"], 0.5);
}

}  // namespace
}  // namespace inferscope::workload
