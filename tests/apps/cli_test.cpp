// Runs the real binary as a user would: exit codes, files written, messages.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "inferscope/testserver/script_server.h"

namespace inferscope {
namespace {
namespace fs = std::filesystem;
using testserver::EngineFormat;

struct Result {
  int code = -1;
  std::string out, err;
};

// Runs `inferscope ARGS` with `env` prepended; captures stdout and stderr.
Result run_cli(const std::string& args, const std::string& env = "") {
  const fs::path dir = fs::temp_directory_path() / ("inferscope-cli-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "stdout").string(), err = (dir / "stderr").string();
  const std::string cmd = env + " " + std::string(INFERSCOPE_BIN) + " " + args + " >" + out + " 2>" + err + " </dev/null";
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  auto slurp = [](const std::string& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// Requests the server received on `path` (telemetry also scrapes /metrics).
std::vector<testserver::ReceivedRequest> requests_to(const testserver::ScriptServer& srv, std::string_view path) {
  std::vector<testserver::ReceivedRequest> out;
  for (auto& r : srv.requests())
    if (r.path() == path) out.push_back(r);
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() / ("inferscope-out-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(out_);
  }
  void TearDown() override { fs::remove_all(out_); }
  fs::path out_;
};

testserver::Script ok_stream() {
  testserver::StreamSpec spec;
  spec.format = EngineFormat::openai_completions;
  spec.tokens = testserver::numbered_tokens(8);
  spec.first_delay_ns = 5 * kNsPerMs;
  spec.gap_ns = 2 * kNsPerMs;
  return testserver::engine_stream(spec);
}

}  // namespace

TEST_F(CliTest, BenchWritesSummaryAndOneTimelinePerRequest) {
  testserver::ScriptServer srv;
  srv.route("/v1/completions", ok_stream());
  auto r = run_cli("bench --url " + srv.base_url() + " --model m -c 2 -n 6 --input-len 32 --output-len 8 -q --slo ttft_p50=1s --out " +
                   out_.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto s = nlohmann::json::parse(slurp(out_ / "summary.json"));
  for (const char* key : {"ttft_ms", "ttft_sched_ms", "tpot_ms", "itl_ms", "itl_token_ms", "e2e_ms", "send_lag_ms",
                          "input_tokens", "output_tokens"}) {
    ASSERT_TRUE(s.contains(key)) << key;
    for (const char* stat : {"count", "mean", "std", "min", "p50", "p90", "p95", "p99", "p999", "max"})
      EXPECT_TRUE(s[key].contains(stat)) << key << "." << stat;
  }
  for (const char* key : {"output_tokens_per_s", "total_tokens_per_s", "requests_per_s", "goodput_rps", "completed",
                          "failed", "errors_by_class", "valid", "invalid_reasons", "manifest"})
    EXPECT_TRUE(s.contains(key)) << key;
  EXPECT_EQ(s["completed"], 6);
  EXPECT_EQ(s["failed"], 0);
  EXPECT_EQ(s["ttft_ms"]["count"], 6);
  EXPECT_EQ(s["output_tokens"]["p50"], 8.0);
  // 8 chunks scheduled 2 ms apart after 5 ms: the server's timers can be late (never
  // early), so the first token is ≥ 5 ms and the 7 gaps sum to ≥ 14 ms less the first's
  // lateness. Bounds are generous: this is a loaded 2-core machine.
  EXPECT_GE(s["ttft_ms"]["min"].get<double>(), 5.0);
  EXPECT_NEAR(s["tpot_ms"]["p50"].get<double>(), 2.0, 1.0);
  EXPECT_NEAR(s["itl_ms"]["p50"].get<double>(), 2.0, 1.0);
  EXPECT_EQ(s["itl_ms"]["count"], 6 * 7);
  EXPECT_EQ(s["manifest"]["model"], "m");
  EXPECT_EQ(s["manifest"]["concurrency"], 2);
  EXPECT_EQ(s["good_fraction"], 1.0);
  std::ifstream lines(out_ / "requests.jsonl");
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    auto rec = nlohmann::json::parse(line);
    EXPECT_EQ(rec["chunks"].size(), 8u);
    EXPECT_TRUE(rec["error"].is_null());
  }
  EXPECT_EQ(n, 6);
  EXPECT_EQ(requests_to(srv, "/v1/completions").size(), 6u);
}

TEST_F(CliTest, FailuresAreCountedByClassAndTheRunGoesOn) {
  testserver::ScriptServer srv;
  srv.route("/v1/completions", ok_stream());
  srv.enqueue("/v1/completions", testserver::json_response(500, R"({"error":{"message":"boom"}})"));
  srv.enqueue("/v1/completions", testserver::json_response(429, R"({"error":"slow down"})", {{"Retry-After", "2"}}));
  auto cut = ok_stream();
  cut.steps.resize(3);
  cut.ending = testserver::Ending::reset;
  srv.enqueue("/v1/completions", cut);
  auto r = run_cli("bench --url " + srv.base_url() + " --model m -c 1 -n 6 --output-len 8 -q --out " + out_.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto s = nlohmann::json::parse(slurp(out_ / "summary.json"));
  EXPECT_EQ(s["completed"].get<int>() + s["failed"].get<int>(), 6);
  EXPECT_EQ(s["failed"], 3);
  EXPECT_EQ(s["errors_by_class"]["http_5xx"], 1);
  EXPECT_EQ(s["errors_by_class"]["rate_limited"], 1);
  EXPECT_EQ(s["errors_by_class"]["reset"], 1);
  EXPECT_NE(r.out.find("http_5xx 1"), std::string::npos) << r.out;
}

TEST_F(CliTest, ApiKeyIsSentButNeverWritten) {
  testserver::ScriptServer srv;
  srv.route("/v1/completions", ok_stream());
  const std::string secret = "sk-test-5f2a9c0d1e";
  auto r = run_cli("bench --url " + srv.base_url() + " --model m -c 1 -n 2 --output-len 8 --out " + out_.string(),
                   "INFERSCOPE_TEST_KEY=" + secret + " " + "OPENAI_API_KEY=" + secret);
  ASSERT_EQ(r.code, 0) << r.err;
  auto reqs = requests_to(srv, "/v1/completions");
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].header("Authorization"), "Bearer " + secret);
  EXPECT_EQ(r.out.find(secret), std::string::npos);
  EXPECT_EQ(r.err.find(secret), std::string::npos);
  for (const auto& f : fs::directory_iterator(out_)) EXPECT_EQ(slurp(f.path()).find(secret), std::string::npos) << f.path();
}

TEST_F(CliTest, BadInputExitsTwoNamingTheFieldAndWritesNothing) {
  auto r = run_cli("bench --url http://127.0.0.1:9 --model m -c 1 -n 1 --slo ttft_p97=5ms --out " + out_.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--slo"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ttft_p97"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out_));

  r = run_cli("bench --url http://127.0.0.1:9 --model m -n 1 --out " + out_.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--concurrency"), std::string::npos) << r.err;

  r = run_cli("bench --url http://127.0.0.1:9 --model m -c 1 -n 1 --api grpc --out " + out_.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--api"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out_));
}

// A bad workload file or profile: exit 2, the message names file, line and field, and no
// output folder appears.
TEST_F(CliTest, BadFilesNameFileLineAndField) {
  const fs::path dir = out_.string() + "-inputs";
  fs::create_directories(dir);
  const fs::path trace = dir / "trace.csv";
  std::ofstream(trace) << "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                          "2023-11-16 18:15:46.6805900,374,44\n"
                          "2023-11-16 18:15:50.9951690,many,16\n";
  auto r = run_cli("sim predict -c 1 -n 2 --workload " + trace.string() + " --out " + out_.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(trace.string() + ":3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ContextTokens"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out_));

  const fs::path gpu = dir / "gpu.yaml";
  std::ofstream(gpu) << "name: My-GPU\nmemory_gib: 80\nhbm_bandwidth_gbps: fast\n";
  r = run_cli("sim predict -c 1 -n 2 --gpu " + gpu.string() + " --out " + out_.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(gpu.string() + ":"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out_));
  fs::remove_all(dir);
}

// The main command: no URL, so it starts the simulated engine and scans concurrency.
TEST_F(CliTest, RunScansConcurrencyAgainstTheSimulatedEngine) {
  auto r = run_cli("run -c 1,4 -n 8 --input-len 64 --output-len 8 -q --slo ttft_p50=10s --out " + out_.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto sweep = nlohmann::json::parse(slurp(out_ / "sweep.json"));
  ASSERT_EQ(sweep["points"].size(), 2u);
  EXPECT_TRUE(sweep["first_slo_violation"].is_null());
  for (int c : {1, 4}) {
    auto s = nlohmann::json::parse(slurp(out_ / ("c" + std::to_string(c)) / "summary.json"));
    EXPECT_EQ(s["completed"], 8);
    EXPECT_EQ(s["manifest"]["concurrency"], c);
    EXPECT_EQ(s["manifest"]["model"], "Llama-3-8B");
    EXPECT_EQ(s["output_tokens"]["p50"], 8.0);
    // The engine's own metrics were scraped beside the run.
    EXPECT_TRUE(s["telemetry"]["series"].contains("engine.kv_usage")) << s["telemetry"].dump();
    EXPECT_TRUE(fs::exists(out_ / ("c" + std::to_string(c)) / "telemetry.jsonl"));
  }
  EXPECT_NE(r.out.find("simulated engine: Llama-3-8B on H200-SXM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("every point met every SLO"), std::string::npos) << r.out;
}

// Lists of lengths make a grid: every input × output length at every concurrency.
TEST_F(CliTest, RunScansInputAndOutputLengths) {
  auto r = run_cli("run -c 2 --input-len 64,256 --output-len 4 -n 4 -q --out " + out_.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto sweep = nlohmann::json::parse(slurp(out_ / "sweep.json"));
  ASSERT_EQ(sweep["points"].size(), 2u);
  EXPECT_EQ(sweep["points"][1]["name"], "in256-out4-c2");
  auto s = nlohmann::json::parse(slurp(out_ / "in256-out4-c2" / "summary.json"));
  EXPECT_EQ(s["input_tokens"]["p50"], 256.0);  // the server's usage.prompt_tokens
  EXPECT_EQ(s["completed"], 4);
  // A bad list is an input error before anything starts.
  fs::remove_all(out_);
  r = run_cli("run --input-len 64,x -q --out " + out_.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--input-len"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out_));
}

// Ctrl-C mid-run: in-flight requests are cancelled, what was measured is written and
// flagged, and the exit code says the run was interrupted.
TEST_F(CliTest, InterruptWritesPartialResults) {
  testserver::ScriptServer srv;
  srv.enqueue("/v1/completions", ok_stream());
  srv.enqueue("/v1/completions", ok_stream());
  auto stall = ok_stream();
  stall.steps.resize(2);
  stall.ending = testserver::Ending::stall;
  srv.route("/v1/completions", stall);
  auto r = run_cli("bench --url " + srv.base_url() + " --model m -c 1 -n 50 --output-len 8 -q --out " + out_.string(),
                   "timeout --preserve-status -s INT 1.5");
  EXPECT_EQ(r.code, 130) << r.err;
  auto s = nlohmann::json::parse(slurp(out_ / "summary.json"));
  EXPECT_EQ(s["interrupted"], true);
  EXPECT_EQ(s["valid"], false);
  EXPECT_EQ(s["completed"], 2);
  EXPECT_EQ(s["failed"], 1);
  EXPECT_EQ(s["errors_by_class"]["cancelled"], 1);
  EXPECT_FALSE(fs::exists(out_ / "summary.json.tmp"));
}

TEST_F(CliTest, UnreachableServerIsAConnectFailureNotACrash) {
  // Port 9 (discard) on loopback: nothing listens, connect is refused at once.
  auto r = run_cli("bench --url http://127.0.0.1:9 --model m -c 2 -n 4 -q --out " + out_.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto s = nlohmann::json::parse(slurp(out_ / "summary.json"));
  EXPECT_EQ(s["failed"], 4);
  EXPECT_EQ(s["errors_by_class"]["connect"], 4);
  EXPECT_EQ(s["valid"], false);
}

}  // namespace inferscope
