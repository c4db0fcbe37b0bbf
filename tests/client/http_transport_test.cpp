// The libcurl transport against the scripted loopback server: timestamps, every fault
// class, connection reuse, concurrency, cancellation, and the API key's handling.
#include <cstdlib>
#include <fstream>
#include <map>
#include <ostream>
#include <set>

#include <gtest/gtest.h>

#include "inferscope/client/http_target.h"
#include "inferscope/core/errors.h"
#include "inferscope/core/record_json.h"
#include "inferscope/testserver/script_server.h"

namespace inferscope {
namespace {

using testserver::EngineFormat;
using testserver::Ending;
using testserver::Script;
using testserver::ScriptServer;
using testserver::StreamSpec;

constexpr Nanos kLateBound = 50 * kNsPerMs;  // generous: a loaded 2-core machine

HttpTargetOptions options(const ScriptServer& srv, ApiKind api = ApiKind::completions) {
  HttpTargetOptions o;
  o.base_url = srv.base_url();
  o.api = api;
  o.protocol.model = "test-model";
  o.proxy = "";  // loopback: never through an environment proxy
  o.idle_timeout_ns = 5 * kNsPerSec;
  return o;
}

GenRequest request(std::uint64_t id, int max_tokens = 8) {
  GenRequest r;
  r.id = id;
  r.prompt = "hello world";
  r.max_tokens = max_tokens;
  return r;
}

// Polls until every submitted request came back (bounded: 10 s). Counts how often each
// record came back, so a duplicate or a loss fails the test.
std::map<RequestRecord*, int> drain(Target& t, Nanos limit = 10 * kNsPerSec) {
  std::map<RequestRecord*, int> seen;
  const Nanos end = t.clock().now_ns() + limit;
  std::vector<RequestRecord*> fin;
  while (t.in_flight() > 0 && t.clock().now_ns() < end) {
    fin.clear();
    t.poll(std::min(end, t.clock().now_ns() + 100 * kNsPerMs), fin);
    for (auto* r : fin) ++seen[r];
  }
  return seen;
}

RequestRecord run_one(Target& t, std::uint64_t id = 1) {
  RequestRecord rec;
  rec.id = id;
  t.submit(request(id), rec);
  auto seen = drain(t);
  EXPECT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[&rec], 1);
  return rec;
}

StreamSpec tokens_spec(int n, Nanos first, Nanos gap, EngineFormat f = EngineFormat::openai_completions) {
  StreamSpec s;
  s.format = f;
  s.tokens = testserver::numbered_tokens(n);
  s.first_delay_ns = first;
  s.gap_ns = gap;
  return s;
}

TEST(HttpTransport, ChunkTimestampsFollowTheScript) {
  ScriptServer srv;
  srv.route("/v1/completions", engine_stream(tokens_spec(5, 20 * kNsPerMs, 10 * kNsPerMs)));
  auto target = make_http_target(options(srv), SteadyClock::instance());
  RequestRecord rec = run_one(*target);

  ASSERT_TRUE(rec.ok()) << to_string(rec.error) << ": " << rec.error_detail;
  EXPECT_EQ(rec.http_status, 200);
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 1u);
  const auto& sent = reqs[0].step_sent_ns;  // 5 tokens, usage chunk, [DONE]
  ASSERT_EQ(sent.size(), 7u);
  ASSERT_EQ(rec.chunks.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    // Same CLOCK_MONOTONIC on both sides: arrival is never before the send.
    EXPECT_GE(rec.chunks[i].t_ns, sent[i]) << i;
    EXPECT_LT(rec.chunks[i].t_ns - sent[i], kLateBound) << i;
    EXPECT_EQ(rec.chunks[i].tokens, 1);
    if (i > 0) {
      EXPECT_GE(rec.chunks[i].t_ns - rec.chunks[i - 1].t_ns, 0);
    }
  }
  // Scripted: headers at once, first token 20 ms later, then every 10 ms.
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_GE(sent[i] - reqs[0].t_received_ns, (20 + 10 * static_cast<Nanos>(i)) * kNsPerMs);
  }
  EXPECT_LE(rec.t_send, reqs[0].t_received_ns);
  EXPECT_GE(rec.t_headers, reqs[0].t_headers_sent_ns);
  EXPECT_LE(rec.t_headers, rec.t_first);
  EXPECT_EQ(rec.t_first, rec.chunks.front().t_ns);
  EXPECT_EQ(rec.t_last, rec.chunks.back().t_ns);
  EXPECT_GE(rec.t_done, sent[6]);
  EXPECT_EQ(rec.completion_tokens, 5);
  EXPECT_EQ(rec.prompt_tokens, 10);
  EXPECT_FALSE(rec.net.reused_connection);
  EXPECT_GT(rec.net.first_byte_ns, 0);
}

struct FormatCase {
  ApiKind api;
  EngineFormat format;
  const char* path;
  const char* name;
};
// Names the case in test names (instead of gtest's byte dump of the struct).
void PrintTo(const FormatCase& c, std::ostream* os) { *os << c.name; }

class EveryEngineFormat : public ::testing::TestWithParam<FormatCase> {};

TEST_P(EveryEngineFormat, StreamsThroughTheTransport) {
  const FormatCase& c = GetParam();
  ScriptServer srv;
  srv.route(c.path, engine_stream(tokens_spec(4, kNsPerMs, kNsPerMs, c.format)));
  auto target = make_http_target(options(srv, c.api), SteadyClock::instance());
  RequestRecord rec = run_one(*target);
  ASSERT_TRUE(rec.ok()) << to_string(rec.error) << ": " << rec.error_detail;
  EXPECT_EQ(rec.chunks.size(), 4u);
  EXPECT_EQ(rec.output_tokens(), 4);
  ASSERT_EQ(srv.requests().size(), 1u);
  EXPECT_EQ(srv.requests()[0].method, "POST");
  EXPECT_EQ(srv.requests()[0].header("Content-Type"), "application/json");
}

INSTANTIATE_TEST_SUITE_P(
    Formats, EveryEngineFormat,
    ::testing::Values(
        FormatCase{ApiKind::completions, EngineFormat::openai_completions, "/v1/completions", "completions"},
        FormatCase{ApiKind::chat, EngineFormat::openai_chat, "/v1/chat/completions", "chat"},
        FormatCase{ApiKind::sglang, EngineFormat::sglang_generate, "/generate", "sglang"},
        FormatCase{ApiKind::llamacpp, EngineFormat::llamacpp_completion, "/completion", "llamacpp"},
        FormatCase{ApiKind::tgi, EngineFormat::tgi_generate_stream, "/generate_stream", "tgi"}),
    [](const ::testing::TestParamInfo<FormatCase>& i) { return std::string(i.param.name); });

RequestRecord one_with(const Script& sc, HttpTargetOptions* tweak = nullptr) {
  ScriptServer srv;
  srv.route("/v1/completions", sc);
  HttpTargetOptions o = options(srv);
  if (tweak != nullptr) {
    o.idle_timeout_ns = tweak->idle_timeout_ns;
    o.total_timeout_ns = tweak->total_timeout_ns;
  }
  auto target = make_http_target(o, SteadyClock::instance());
  RequestRecord rec = run_one(*target);
  EXPECT_EQ(target->in_flight(), 0u);
  return rec;
}

TEST(HttpTransport, Http5xxWithMessage) {
  auto rec = one_with(testserver::json_response(
      503, R"({"error":{"message":"overloaded","type":"ServiceUnavailable","code":503}})"));
  EXPECT_EQ(rec.error, ErrorClass::http_5xx);
  EXPECT_EQ(rec.http_status, 503);
  EXPECT_EQ(rec.error_detail, "HTTP 503: overloaded");
  EXPECT_GE(rec.t_done, rec.t_headers);
}

TEST(HttpTransport, Http4xxWithOldVllmBody) {
  auto rec = one_with(testserver::json_response(
      400, R"({"object":"error","message":"max_tokens too large","code":400})"));
  EXPECT_EQ(rec.error, ErrorClass::http_4xx);
  EXPECT_EQ(rec.error_detail, "HTTP 400: max_tokens too large");
}

TEST(HttpTransport, RateLimitedKeepsRetryAfter) {
  auto rec = one_with(testserver::json_response(429, R"({"error":"slow down"})", {{"Retry-After", "7"}}));
  EXPECT_EQ(rec.error, ErrorClass::rate_limited);
  EXPECT_EQ(rec.http_status, 429);
  EXPECT_EQ(rec.error_detail, "retry-after=7; slow down");
}

TEST(HttpTransport, ResetMidStreamKeepsTheChunksSoFar) {
  auto spec = tokens_spec(3, kNsPerMs, kNsPerMs);
  spec.end_marker = false;
  Script sc = engine_stream(spec);
  sc.ending = Ending::reset;
  sc.ending_delay_ns = 10 * kNsPerMs;  // the client reads the tokens before the RST
  auto rec = one_with(sc);
  EXPECT_EQ(rec.error, ErrorClass::reset) << rec.error_detail;
  EXPECT_EQ(rec.chunks.size(), 3u);
}

TEST(HttpTransport, CloseWithoutTerminatingChunkIsTruncated) {
  auto spec = tokens_spec(3, kNsPerMs, kNsPerMs);
  spec.end_marker = false;
  Script sc = engine_stream(spec);
  sc.ending = Ending::close_without_end;
  auto rec = one_with(sc);
  EXPECT_EQ(rec.error, ErrorClass::truncated) << rec.error_detail;
  EXPECT_EQ(rec.chunks.size(), 3u);
}

TEST(HttpTransport, CleanBodyEndWithoutDoneIsTruncated) {
  auto spec = tokens_spec(2, kNsPerMs, kNsPerMs);
  spec.end_marker = false;
  auto rec = one_with(engine_stream(spec));  // terminating chunk sent, [DONE] missing
  EXPECT_EQ(rec.error, ErrorClass::truncated) << rec.error_detail;
}

TEST(HttpTransport, DoneWithoutTerminatingChunkStillCompletes) {
  Script sc = engine_stream(tokens_spec(2, kNsPerMs, kNsPerMs));
  sc.ending = Ending::stall;  // [DONE] sent, the HTTP body never ends
  auto rec = one_with(sc);
  EXPECT_TRUE(rec.ok()) << to_string(rec.error) << ": " << rec.error_detail;
  EXPECT_EQ(rec.chunks.size(), 2u);
  EXPECT_GE(rec.t_done, rec.t_last);
}

TEST(HttpTransport, StallPastIdleTimeoutIsTimeout) {
  Script sc = engine_stream(tokens_spec(2, kNsPerMs, kNsPerMs));
  sc.steps.resize(2);  // two tokens, then nothing
  sc.ending = Ending::stall;
  HttpTargetOptions t;
  t.idle_timeout_ns = 100 * kNsPerMs;
  auto rec = one_with(sc, &t);
  EXPECT_EQ(rec.error, ErrorClass::timeout) << rec.error_detail;
  EXPECT_EQ(rec.chunks.size(), 2u);
  EXPECT_GE(rec.t_done - rec.t_last, 100 * kNsPerMs);
}

TEST(HttpTransport, StallBeforeHeadersIsTimeout) {
  Script sc = engine_stream(tokens_spec(1, 0, 0));
  sc.headers_delay_ns = 3600 * kNsPerSec;
  HttpTargetOptions t;
  t.idle_timeout_ns = 50 * kNsPerMs;
  auto rec = one_with(sc, &t);
  EXPECT_EQ(rec.error, ErrorClass::timeout);
  EXPECT_EQ(rec.t_headers, -1);
  EXPECT_GE(rec.t_done - rec.t_send, 50 * kNsPerMs);
}

TEST(HttpTransport, TotalTimeoutCapsASlowStream) {
  HttpTargetOptions t;
  t.idle_timeout_ns = 5 * kNsPerSec;
  t.total_timeout_ns = 100 * kNsPerMs;
  auto rec = one_with(engine_stream(tokens_spec(100, 0, 20 * kNsPerMs)), &t);
  EXPECT_EQ(rec.error, ErrorClass::timeout) << rec.error_detail;
  EXPECT_GT(rec.chunks.size(), 0u);
  EXPECT_LT(rec.chunks.size(), 100u);
}

TEST(HttpTransport, MalformedJsonIsBadPayload) {
  Script sc;
  sc.steps = {{0, "data: {\"choices\":[{\"text\":\"a\"}]}\n\n"}, {0, "data: {not json\n\n"},
              {0, "data: [DONE]\n\n"}};
  auto rec = one_with(sc);
  EXPECT_EQ(rec.error, ErrorClass::bad_payload) << rec.error_detail;
}

TEST(HttpTransport, ErrorEventMidStream) {
  Script sc = engine_stream(tokens_spec(2, 0, 0));
  sc.steps.insert(sc.steps.begin() + 2,
                  {0, "data: {\"error\":{\"message\":\"engine died\",\"code\":500}}\n\n"});
  auto rec = one_with(sc);
  EXPECT_EQ(rec.error, ErrorClass::server_error_event) << rec.error_detail;
}

TEST(HttpTransport, ClosedWithoutAnyReplyIsReset) {
  Script sc;
  sc.ending = Ending::close_immediately;
  auto rec = one_with(sc);
  EXPECT_EQ(rec.error, ErrorClass::reset) << rec.error_detail;
  EXPECT_EQ(rec.http_status, 0);
}

TEST(HttpTransport, ConnectionRefusedIsConnect) {
  std::string url;
  {
    ScriptServer srv;
    url = srv.base_url();
  }  // stopped: nothing listens on that port now
  HttpTargetOptions o;
  o.base_url = url;
  o.proxy = "";
  auto target = make_http_target(o, SteadyClock::instance());
  RequestRecord rec = run_one(*target);
  EXPECT_EQ(rec.error, ErrorClass::connect) << rec.error_detail;
  EXPECT_FALSE(rec.error_detail.empty());
  EXPECT_EQ(rec.t_headers, -1);
}

TEST(HttpTransport, BadHostIsConnect) {
  HttpTargetOptions o;
  o.base_url = "http://no-such-host.invalid:1";
  o.proxy = "";
  auto target = make_http_target(o, SteadyClock::instance());
  RequestRecord rec = run_one(*target);
  EXPECT_EQ(rec.error, ErrorClass::connect) << rec.error_detail;
}

TEST(HttpTransport, SequentialRequestsReuseOneConnection) {
  ScriptServer srv;
  srv.route("/v1/completions", engine_stream(tokens_spec(2, 0, 0)));
  auto target = make_http_target(options(srv), SteadyClock::instance());
  RequestRecord a = run_one(*target, 1);
  RequestRecord b = run_one(*target, 2);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(a.net.reused_connection);
  EXPECT_TRUE(b.net.reused_connection);
  EXPECT_EQ(b.net.connect_ns, 0);
  EXPECT_EQ(srv.request_count(), 2u);
  EXPECT_EQ(srv.open_connections(), 1u);
}

TEST(HttpTransport, TwoHundredConcurrentStreamsComplete) {
  ScriptServer srv;
  srv.route("/v1/completions", engine_stream(tokens_spec(10, 5 * kNsPerMs, 2 * kNsPerMs)));
  auto target = make_http_target(options(srv), SteadyClock::instance());
  std::vector<RequestRecord> recs(200);
  for (std::size_t i = 0; i < recs.size(); ++i) {
    recs[i].id = i;
    target->submit(request(i), recs[i]);
  }
  EXPECT_EQ(target->in_flight(), 200u);
  auto seen = drain(*target, 30 * kNsPerSec);
  EXPECT_EQ(seen.size(), 200u);
  for (auto& r : recs) {
    EXPECT_EQ(seen[&r], 1);
    EXPECT_TRUE(r.ok()) << r.id << " " << to_string(r.error) << ": " << r.error_detail;
    EXPECT_EQ(r.chunks.size(), 10u);
  }
  EXPECT_EQ(srv.request_count(), 200u);
}

TEST(HttpTransport, CancelAllReturnsEveryRequestOnce) {
  ScriptServer srv;
  Script stall = engine_stream(tokens_spec(1, 0, 0));
  stall.steps.resize(1);
  stall.ending = Ending::stall;
  srv.route("/v1/completions", stall);
  srv.enqueue("/v1/completions", testserver::json_response(500, "{}"));  // finishes for real
  auto target = make_http_target(options(srv), SteadyClock::instance());
  std::vector<RequestRecord> recs(4);
  for (std::size_t i = 0; i < recs.size(); ++i) target->submit(request(i), recs[i]);
  // Wait until every stream has its first token (bounded), then cancel.
  std::map<RequestRecord*, int> seen;
  std::vector<RequestRecord*> fin;
  const Nanos end = monotonic_now_ns() + 5 * kNsPerSec;
  while (srv.request_count() < 4 && monotonic_now_ns() < end) {
    target->poll(monotonic_now_ns() + 10 * kNsPerMs, fin);
  }
  target->poll(monotonic_now_ns() + 20 * kNsPerMs, fin);
  target->cancel_all();
  for (auto* r : fin) ++seen[r];
  for (auto& [r, n] : drain(*target)) seen[r] += n;
  EXPECT_EQ(target->in_flight(), 0u);
  ASSERT_EQ(seen.size(), 4u);
  int cancelled = 0, failed_5xx = 0;
  for (auto& r : recs) {
    EXPECT_EQ(seen[&r], 1);
    cancelled += r.error == ErrorClass::cancelled;
    failed_5xx += r.error == ErrorClass::http_5xx;
    EXPECT_GE(r.t_done, r.t_send);
  }
  EXPECT_EQ(cancelled, 3);
  EXPECT_EQ(failed_5xx, 1);
}

TEST(HttpTransport, MixedFaultsEveryRequestComesBackExactlyOnce) {
  ScriptServer srv;
  auto trunc = tokens_spec(2, 0, kNsPerMs);
  trunc.end_marker = false;
  Script reset = engine_stream(trunc);
  reset.ending = Ending::reset;
  reset.ending_delay_ns = 5 * kNsPerMs;
  Script closed;
  closed.ending = Ending::close_immediately;
  const std::vector<Script> scripts = {engine_stream(tokens_spec(3, 0, kNsPerMs)),
                                       testserver::json_response(500, "{}"),
                                       testserver::json_response(429, "{}", {{"Retry-After", "1"}}),
                                       reset, engine_stream(trunc), closed};
  srv.route("/v1/completions", scripts[0]);
  for (int round = 0; round < 3; ++round) {
    for (const auto& s : scripts) srv.enqueue("/v1/completions", s);
  }
  auto target = make_http_target(options(srv), SteadyClock::instance());
  std::vector<RequestRecord> recs(18);
  for (std::size_t i = 0; i < recs.size(); ++i) target->submit(request(i), recs[i]);
  auto seen = drain(*target, 20 * kNsPerSec);
  EXPECT_EQ(seen.size(), 18u);
  std::map<ErrorClass, int> by_class;
  for (auto& r : recs) {
    EXPECT_EQ(seen[&r], 1);
    ++by_class[r.error];
  }
  EXPECT_EQ(by_class[ErrorClass::none], 3);
  EXPECT_EQ(by_class[ErrorClass::http_5xx], 3);
  EXPECT_EQ(by_class[ErrorClass::rate_limited], 3);
  EXPECT_EQ(by_class[ErrorClass::reset], 6);  // RST mid-stream and closed without reply
  EXPECT_EQ(by_class[ErrorClass::truncated], 3);
  EXPECT_EQ(target->in_flight(), 0u);
}

TEST(HttpTransport, NonStreamedResponseIsDecodedWhole) {
  ScriptServer srv;
  srv.route("/v1/completions",
            testserver::json_response(
                200, R"({"id":"cmpl-1","object":"text_completion","model":"test-model",)"
                     R"("choices":[{"index":0,"text":"a b c","finish_reason":"length"}],)"
                     R"("usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}})"));
  HttpTargetOptions o = options(srv);
  o.protocol.stream = false;
  auto target = make_http_target(o, SteadyClock::instance());
  RequestRecord rec = run_one(*target);
  ASSERT_TRUE(rec.ok()) << to_string(rec.error) << ": " << rec.error_detail;
  EXPECT_EQ(rec.completion_tokens, 3);
  EXPECT_EQ(rec.prompt_tokens, 5);
  ASSERT_EQ(rec.chunks.size(), 1u);
  EXPECT_EQ(rec.chunks[0].tokens, 3);
  EXPECT_EQ(rec.finish_reason, "length");
}

TEST(HttpTransport, ApiKeyIsSentAsBearerHeaderOnlyAndNeverRecorded) {
  const std::string key = "sk-very-secret-4242";
  ScriptServer srv;
  srv.route("/v1/completions", engine_stream(tokens_spec(2, 0, 0)));
  srv.enqueue("/v1/completions",
              testserver::json_response(401, R"({"error":{"message":"bad key"}})"));
  HttpTargetOptions o = options(srv);
  o.api_key = key;
  auto target = make_http_target(o, SteadyClock::instance());
  RequestRecord denied = run_one(*target, 1);
  RequestRecord ok = run_one(*target, 2);
  EXPECT_EQ(denied.error, ErrorClass::http_4xx);
  EXPECT_TRUE(ok.ok());
  for (const auto& r : srv.requests()) {
    EXPECT_EQ(r.header("Authorization"), "Bearer " + key);
    EXPECT_EQ(r.body.find(key), std::string::npos);
    EXPECT_EQ(r.target.find(key), std::string::npos);
    for (const auto& [k, v] : r.headers) {
      if (k != "Authorization") {
        EXPECT_EQ(v.find(key), std::string::npos) << k;
      }
    }
  }
  for (const auto* r : {&denied, &ok}) {
    EXPECT_EQ(record_to_json(*r, 0).dump().find(key), std::string::npos);
    EXPECT_EQ(r->error_detail.find(key), std::string::npos);
  }
}

TEST(HttpTransport, NoKeyNoAuthorizationHeader) {
  ScriptServer srv;
  srv.route("/v1/completions", engine_stream(tokens_spec(1, 0, 0)));
  auto target = make_http_target(options(srv), SteadyClock::instance());
  run_one(*target);
  EXPECT_FALSE(srv.requests().at(0).has_header("Authorization"));
}

TEST(HttpTransport, PollReturnsAtItsDeadlineWhenIdle) {
  ScriptServer srv;
  auto target = make_http_target(options(srv), SteadyClock::instance());
  std::vector<RequestRecord*> fin;
  const Nanos deadline = monotonic_now_ns() + 5 * kNsPerMs;
  target->poll(deadline, fin);
  EXPECT_GE(monotonic_now_ns(), deadline);
  EXPECT_TRUE(fin.empty());
}

TEST(HttpBlocking, GetAndPostJson) {
  ScriptServer srv;
  srv.route("/health", testserver::json_response(200, R"({"ok":true})"));
  srv.route("/tokenize", testserver::json_response(200, R"({"count":3})"));
  auto g = http_get(srv.base_url() + "/health", 5.0, "k1");
  EXPECT_EQ(g.status, 200);
  EXPECT_EQ(g.body, R"({"ok":true})");
  EXPECT_EQ(g.content_type, "application/json");
  auto p = http_post_json(srv.base_url() + "/tokenize", R"({"prompt":"a b c"})");
  EXPECT_EQ(p.status, 200);
  EXPECT_EQ(p.body, R"({"count":3})");
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].method, "GET");
  EXPECT_EQ(reqs[0].header("Authorization"), "Bearer k1");
  EXPECT_EQ(reqs[1].method, "POST");
  EXPECT_EQ(reqs[1].body, R"({"prompt":"a b c"})");
  EXPECT_FALSE(reqs[1].has_header("Authorization"));
}

TEST(HttpBlocking, UnreachableGivesStatusZeroAndError) {
  std::string url;
  {
    ScriptServer srv;
    url = srv.base_url();
  }
  auto r = http_get(url + "/health", 2.0);
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(r.error.empty());
}

TEST(ApiKey, FromEnvironmentThenFile) {
  const std::string file = ::testing::TempDir() + "/inferscope_key.txt";
  {
    std::ofstream(file) << "  file-key-1 \nsecond line\n";
  }
  ::setenv("INFERSCOPE_TEST_KEY", "env-key-9\n", 1);
  EXPECT_EQ(load_api_key("INFERSCOPE_TEST_KEY", file), "env-key-9");
  ::setenv("INFERSCOPE_TEST_KEY", "", 1);
  EXPECT_EQ(load_api_key("INFERSCOPE_TEST_KEY", file), "file-key-1");
  ::unsetenv("INFERSCOPE_TEST_KEY");
  EXPECT_EQ(load_api_key("INFERSCOPE_TEST_KEY", ""), "");
  EXPECT_EQ(load_api_key("", file), "file-key-1");
  EXPECT_THROW(load_api_key("", file + ".missing"), InputError);
}

}  // namespace
}  // namespace inferscope
