// `sim serve` over loopback: routes, vLLM's stream format, faults, ground truth, and the
// same engine agreeing with `sim predict` on one workload.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "inferscope/client/http_target.h"
#include "inferscope/core/sim_tokenizer.h"
#include "inferscope/load/runner.h"
#include "inferscope/sim/server.h"
#include "inferscope/sim/sim_target.h"
#include "inferscope/stats/run_metrics.h"
#include "inferscope/workload/tokenizer.h"
#include "inferscope/workload/workload.h"
#include "sim_test_util.h"

namespace inferscope::sim {
namespace {
using nlohmann::json;
using testing::make_config;

ServeOptions loopback() {
  ServeOptions o;
  o.port = 0;
  return o;
}

// The JSON payloads of an SSE body ("[DONE]" kept as a string).
std::vector<std::string> events(const std::string& body) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while ((pos = body.find("data: ", pos)) != std::string::npos) {
    const auto end = body.find("\n\n", pos);
    out.push_back(body.substr(pos + 6, end - pos - 6));
    pos = end;
  }
  return out;
}

TEST(SimServe, ControlRoutes) {
  SimServer server(make_config(), loopback());
  server.start();
  const std::string base = server.base_url();
  auto models = http_get(base + "/v1/models");
  ASSERT_EQ(models.status, 200);
  EXPECT_EQ(json::parse(models.body)["data"][0]["id"], "Llama-3-8B");
  EXPECT_EQ(http_get(base + "/health").status, 200);
  EXPECT_EQ(http_get(base + "/version").status, 200);
  EXPECT_EQ(http_get(base + "/nope").status, 404);
  EXPECT_EQ(http_get(base + "/v1/completions").status, 405);
  auto tok = http_post_json(base + "/tokenize", R"({"prompt":" one two three"})");
  ASSERT_EQ(tok.status, 200);
  const auto tj = json::parse(tok.body);
  EXPECT_EQ(tj["count"], 3);
  EXPECT_EQ(tj["max_model_len"], 8192);
  EXPECT_EQ(tj["tokens"][0], SimTokenizer::token_id(" one"));
  auto metrics = http_get(base + "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("vllm:num_requests_running{model_name=\"Llama-3-8B\"} 0"), std::string::npos);
  server.stop();
}

TEST(SimServe, NonStreamingCompletionAndErrors) {
  SimServer server(make_config(), loopback());
  server.start();
  const std::string url = server.base_url() + "/v1/completions";
  auto r = http_post_json(url, R"({"model":"Llama-3-8B","prompt":" a b c d","max_tokens":7})");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto j = json::parse(r.body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 4);
  EXPECT_EQ(j["usage"]["completion_tokens"], 7);
  EXPECT_EQ(SimTokenizer{}.count(j["choices"][0]["text"].get<std::string>()), 7);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(http_post_json(url, R"({"model":"other","prompt":"x"})").status, 404);
  EXPECT_EQ(http_post_json(url, "{not json").status, 400);
  EXPECT_EQ(http_post_json(url, R"({"prompt":"x","max_tokens":9000})").status, 400);  // over 8192
  server.stop();
}

TEST(SimServe, StreamingChatFollowsVllmFormat) {
  SimServer server(make_config(), loopback());
  server.start();
  auto r = http_post_json(server.base_url() + "/v1/chat/completions",
                          R"({"model":"Llama-3-8B","messages":[{"role":"user","content":"hello"}],"max_tokens":5,)"
                          R"("stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}})");
  ASSERT_EQ(r.status, 200);
  const auto ev = events(r.body);
  // role chunk, 5 content chunks (the last with finish_reason), usage chunk, [DONE]
  ASSERT_EQ(ev.size(), 8u) << r.body;
  const auto role = json::parse(ev[0]);
  EXPECT_EQ(role["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(role["choices"][0]["delta"]["content"], "");
  std::string text;
  for (int i = 1; i <= 5; ++i) {
    const auto c = json::parse(ev[static_cast<std::size_t>(i)]);
    EXPECT_EQ(c["object"], "chat.completion.chunk");
    text += c["choices"][0]["delta"]["content"].get<std::string>();
    EXPECT_EQ(c["usage"]["completion_tokens"], i);  // continuous usage
    EXPECT_EQ(c["choices"][0]["finish_reason"].is_null(), i < 5);
  }
  EXPECT_EQ(SimTokenizer{}.count(text), 5);
  const auto usage = json::parse(ev[6]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 5);
  EXPECT_EQ(usage["usage"]["prompt_tokens"], 3);  // <|user|> hello <|assistant|>
  EXPECT_EQ(ev[7], "[DONE]");
  server.stop();
}

TEST(SimServe, FaultsOnDemand) {
  auto with = [](auto set) {
    ServeOptions o = loopback();
    set(o.faults);
    return o;
  };
  const std::string body = R"({"prompt":" x y","max_tokens":6,"stream":true})";
  {
    SimServer s(make_config(), with([](FaultOptions& f) { f.http_429_rate = 1; }));
    s.start();
    EXPECT_EQ(http_post_json(s.base_url() + "/v1/completions", body).status, 429);
  }
  {
    SimServer s(make_config(), with([](FaultOptions& f) { f.http_503_rate = 1; }));
    s.start();
    EXPECT_EQ(http_post_json(s.base_url() + "/v1/completions", body).status, 503);
  }
  {
    SimServer s(make_config(), with([](FaultOptions& f) { f.error_event_rate = 1; }));
    s.start();
    auto r = http_post_json(s.base_url() + "/v1/completions", body);
    EXPECT_EQ(r.status, 200);
    const auto ev = events(r.body);
    ASSERT_GE(ev.size(), 2u);
    EXPECT_TRUE(json::parse(ev[ev.size() - 2]).contains("error"));
    EXPECT_EQ(ev.back(), "[DONE]");
  }
  {
    SimServer s(make_config(), with([](FaultOptions& f) { f.malformed_rate = 1; }));
    s.start();
    auto r = http_post_json(s.base_url() + "/v1/completions", body);
    int broken = 0;
    for (const auto& e : events(r.body)) broken += e != "[DONE]" && !json::accept(e);
    EXPECT_EQ(broken, 1);
  }
  {
    SimServer s(make_config(), with([](FaultOptions& f) { f.reset_rate = 1; }));
    s.start();
    auto r = http_post_json(s.base_url() + "/v1/completions", body);
    EXPECT_EQ(r.body.find("[DONE]"), std::string::npos);  // cut before the end
  }
}

TEST(SimServe, StallPausesTheStreamAndColdStartDelaysTheFirstRequests) {
  const auto path = std::filesystem::temp_directory_path() / ("inferscope_sim_stall_" + std::to_string(::getpid()) + ".jsonl");
  ServeOptions o = loopback();
  o.ground_truth_path = path.string();
  o.faults.stall_rate = 1;
  o.faults.stall_s = 0.05;
  o.faults.cold_start_requests = 1;
  o.faults.cold_start_s = 0.05;
  {
    SimServer server(make_config(), o);
    server.start();
    for (int i = 0; i < 2; ++i) {
      auto r = http_post_json(server.base_url() + "/v1/completions", R"({"prompt":" a b","max_tokens":6,"stream":true})");
      ASSERT_EQ(r.status, 200);
      const auto ev = events(r.body);  // nothing lost: 6 chunks and [DONE]
      ASSERT_EQ(ev.size(), 7u) << r.body;
      EXPECT_EQ(ev.back(), "[DONE]");
    }
    server.stop();
  }
  std::ifstream in(path);
  std::string line;
  std::vector<json> rows;
  while (std::getline(in, line)) rows.push_back(json::parse(line));
  ASSERT_EQ(rows.size(), 2u);
  // A cold start holds the first request at least 50 ms before the engine sees it (a
  // timer never fires early); the second starts warm.
  EXPECT_GE(rows[0]["accepted_ns"].get<Nanos>() - rows[0]["arrival_ns"].get<Nanos>(), 50 * kNsPerMs);
  std::filesystem::remove(path);
}

TEST(SimServe, GroundTruthHasEveryTokensTime) {
  const auto path = std::filesystem::temp_directory_path() / ("inferscope_sim_gt_" + std::to_string(::getpid()) + ".jsonl");
  ServeOptions o = loopback();
  o.ground_truth_path = path.string();
  {
    SimServer server(make_config(), o);
    server.start();
    for (int i = 0; i < 3; ++i)
      ASSERT_EQ(http_post_json(server.base_url() + "/v1/completions", R"({"prompt":" a b","max_tokens":4})").status, 200);
    server.stop();
  }
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    const auto j = json::parse(line);
    EXPECT_EQ(j["outcome"], "ok");
    ASSERT_EQ(j["token_ns"].size(), 4u);
    EXPECT_EQ(j["first_token_ns"], j["token_ns"][0]);
    EXPECT_LE(j["arrival_ns"].get<Nanos>(), j["scheduled_ns"].get<Nanos>());
    EXPECT_LE(j["scheduled_ns"].get<Nanos>(), j["first_token_ns"].get<Nanos>());
    ++n;
  }
  EXPECT_EQ(n, 3);
  std::filesystem::remove(path);
}

// The same workload through `bench`'s path (HTTP target, real time) and `predict`'s path
// (in-process, virtual time) gives the same latencies. The sim runs at a quarter of real
// speed so a late timer wake-up (a few hundred µs on a busy machine) is small against an
// 18 ms (wall) decode step; latencies are compared in simulated units.
TEST(SimServe, AgreesWithPredictOnTheSameWorkload) {
  constexpr double kScale = 0.25;
  workload::SimTextTokenizer tok;
  LoadOptions lo;
  lo.mode = LoadMode::closed;
  lo.concurrency = 4;
  lo.requests = 12;
  lo.seed = 3;
  auto run_with = [&](Target& t) {
    auto src = workload::make_session_source(workload::fixed_workload(200, 24), 3, tok);
    const LoadResult r = run_load(t, *src, lo);
    return compute_run_metrics(std::vector<RequestRecord>(r.records.begin(), r.records.end()), {});
  };
  SimTarget predicted(make_config());
  const RunMetrics p = run_with(predicted);

  ServeOptions o = loopback();
  o.time_scale = kScale;
  SimServer server(make_config(), o);
  server.start();
  HttpTargetOptions ho;
  ho.base_url = server.base_url();
  ho.protocol.model = "Llama-3-8B";
  auto http = make_http_target(ho, SteadyClock::instance());
  const RunMetrics s = run_with(*http);
  server.stop();

  ASSERT_EQ(p.completed, 12u);
  ASSERT_EQ(s.completed, 12u);
  const double ttft = s.all.ttft.mean * kScale, tpot = s.all.tpot.mean * kScale;
  EXPECT_NEAR(ttft, p.all.ttft.mean, 0.1 * p.all.ttft.mean + 0.5) << "serve TTFT " << ttft << " ms vs predict";
  EXPECT_NEAR(tpot, p.all.tpot.mean, 0.05 * p.all.tpot.mean) << "serve TPOT " << tpot << " ms vs predict";
}

}  // namespace
}  // namespace inferscope::sim
