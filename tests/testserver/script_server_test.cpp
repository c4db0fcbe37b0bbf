#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "../net/raw_client.h"
#include "inferscope/testserver/script_server.h"

namespace inferscope::testserver {
namespace {

using test::RawClient;

const std::string kPost =
    "POST /v1/completions HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer sk-1\r\n"
    "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

Script three_steps(Ending ending) {
  Script sc;
  sc.headers_delay_ns = 3 * kNsPerMs;
  sc.steps = {{2 * kNsPerMs, "aa"}, {0, "b"}, {4 * kNsPerMs, "cccc"}};
  sc.ending = ending;
  return sc;
}

TEST(ScriptServer, PlaysStepsNoEarlierThanScheduledAndRecordsTheRequest) {
  ScriptServer srv;
  srv.route("/v1/completions", three_steps(Ending::finish));
  RawClient c(srv.port());
  c.send(kPost);
  std::string got = c.read_until("0\r\n\r\n");
  EXPECT_TRUE(got.ends_with("\r\n\r\n2\r\naa\r\n1\r\nb\r\n4\r\ncccc\r\n0\r\n\r\n")) << got;
  EXPECT_NE(got.find("Transfer-Encoding: chunked"), std::string::npos);

  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 1u);
  const auto& r = reqs[0];
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path(), "/v1/completions");
  EXPECT_EQ(r.header("authorization"), "Bearer sk-1");
  EXPECT_EQ(r.body, "{}");
  ASSERT_EQ(r.step_sent_ns.size(), 3u);
  // Scheduled from t_received: headers at +3 ms, steps at +5, +5, +9 ms.
  EXPECT_GE(r.t_headers_sent_ns, r.t_received_ns + 3 * kNsPerMs);
  EXPECT_GE(r.step_sent_ns[0], r.t_received_ns + 5 * kNsPerMs);
  EXPECT_GE(r.step_sent_ns[1], r.step_sent_ns[0]);
  EXPECT_GE(r.step_sent_ns[2], r.t_received_ns + 9 * kNsPerMs);
  EXPECT_EQ(srv.request_count(), 1u);
}

TEST(ScriptServer, UnknownPathIs404AndQueuedScriptsGoFirst) {
  ScriptServer srv;
  srv.route("/r", json_response(200, "route"));
  srv.enqueue("/r", json_response(500, "q1"));
  srv.enqueue("/r", json_response(503, "q2"));
  RawClient c(srv.port());
  c.send("GET /nope HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(c.read_until("}}").substr(0, 22), "HTTP/1.1 404 Not Found");
  c.send("GET /r?x=1 HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(c.read_until("q1"),
            "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\n\r\nq1");
  c.send("GET /r HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(c.read_until("q2").substr(0, 12), "HTTP/1.1 503");
  c.send("GET /r HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_TRUE(c.read_until("route").ends_with("Content-Length: 5\r\n\r\nroute"));
  EXPECT_EQ(srv.requests().size(), 4u);
  EXPECT_EQ(srv.open_connections(), 1u);  // all four on one keep-alive connection
}

TEST(ScriptServer, FallbackServesAnyPath) {
  ScriptServer srv;
  srv.fallback(json_response(200, "fb"));
  RawClient c(srv.port());
  c.send("GET /anything HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_TRUE(c.read_until("fb").ends_with("\r\n\r\nfb"));
}

TEST(ScriptServer, ResetEnding) {
  ScriptServer srv;
  auto sc = three_steps(Ending::reset);
  sc.ending_delay_ns = 5 * kNsPerMs;  // let the client read the bytes before the RST
  srv.route("/v1/completions", sc);
  RawClient c(srv.port());
  c.send(kPost);
  std::string got = c.read_until("cccc\r\n");
  EXPECT_TRUE(got.ends_with("4\r\ncccc\r\n"));
  c.read_until("");
  EXPECT_EQ(c.last_errno(), ECONNRESET);
}

TEST(ScriptServer, CloseWithoutEndEnding) {
  ScriptServer srv;
  srv.route("/v1/completions", three_steps(Ending::close_without_end));
  RawClient c(srv.port());
  c.send(kPost);
  std::string got = c.read_until("");
  EXPECT_TRUE(c.eof());
  EXPECT_TRUE(got.ends_with("4\r\ncccc\r\n")) << got;
}

TEST(ScriptServer, CloseImmediatelySendsNothing) {
  ScriptServer srv;
  srv.route("/v1/completions", three_steps(Ending::close_immediately));
  RawClient c(srv.port());
  c.send(kPost);
  EXPECT_EQ(c.read_until(""), "");
  EXPECT_TRUE(c.eof());
}

TEST(ScriptServer, StallKeepsTheConnectionOpenUntilStop) {
  ScriptServer srv;
  srv.route("/v1/completions", three_steps(Ending::stall));
  RawClient c(srv.port());
  c.send(kPost);
  std::string got = c.read_until("0\r\n\r\n", 100);
  EXPECT_TRUE(got.ends_with("4\r\ncccc\r\n"));
  EXPECT_FALSE(c.eof());
  srv.stop();
  c.read_until("");
  EXPECT_TRUE(c.eof() || c.last_errno() == ECONNRESET);
}

TEST(ScriptServer, StampsSendTimeIntoTheBytes) {
  ScriptServer srv;
  Script sc;
  sc.stamp_send_time = true;
  sc.steps = {{0, "t=" + std::string(kSendTimePlaceholder) + ";"}};
  srv.route("/s", sc);
  RawClient c(srv.port());
  c.send("GET /s HTTP/1.1\r\nHost: t\r\n\r\n");
  std::string got = c.read_until("0\r\n\r\n");
  auto p = got.find("t=");
  ASSERT_NE(p, std::string::npos);
  const std::string digits = got.substr(p + 2, 19);
  EXPECT_EQ(got[p + 21], ';');
  auto reqs = srv.requests();
  ASSERT_EQ(reqs[0].step_sent_ns.size(), 1u);
  EXPECT_EQ(std::stoll(digits), reqs[0].step_sent_ns[0]);
}

TEST(ScriptServer, NotRecordingStillCounts) {
  ScriptServerOptions opt;
  opt.record_requests = false;
  ScriptServer srv(opt);
  srv.fallback(null_target(EngineFormat::openai_completions, 2));
  RawClient c(srv.port());
  c.send(kPost);
  EXPECT_NE(c.read_until("[DONE]").find("\"text\":\"t1 \""), std::string::npos);
  EXPECT_TRUE(srv.requests().empty());
  EXPECT_EQ(srv.request_count(), 1u);
}

}  // namespace
}  // namespace inferscope::testserver
