// Speed of the streaming HTTP client (issue 2, item 8), measured against the scripted
// loopback server running in its own thread:
//
//   cpu        client CPU per request and per streamed token (CLOCK_THREAD_CPUTIME_ID of
//              the load thread), against the null target (MLPerf LoadGen's idea: a
//              server that answers instantly) and against paced streams where every
//              token arrives in its own read;
//   streams    how many concurrent long-lived streams one event loop holds;
//   timestamp  timestamp error: the server writes its CLOCK_MONOTONIC send time into
//              each token; the client's arrival stamp for that chunk is compared with it.
//
// Usage: bench_client_transport [cpu|paced|streams|timestamp|all] [--streams N]
//        [--requests N] [--concurrency N] [--paced-streams N]
// A plain program rather than Google Benchmark: each figure needs its own server set-up
// and a thread-CPU measurement of a whole run. Numbers go to docs/client-transport.md.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "inferscope/client/http_target.h"
#include "inferscope/testserver/script_server.h"

namespace {

using namespace inferscope;
using testserver::EngineFormat;
using testserver::ScriptServer;
using testserver::StreamSpec;

Nanos thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

HttpTargetOptions target_options(const ScriptServer& srv) {
  HttpTargetOptions o;
  o.base_url = srv.base_url();
  o.api = ApiKind::completions;
  o.protocol.model = "bench";
  o.proxy = "";
  o.idle_timeout_ns = 60 * kNsPerSec;
  return o;
}

GenRequest gen(std::uint64_t id, bool keep_text = false) {
  GenRequest r;
  r.id = id;
  r.prompt = "benchmark prompt";
  r.max_tokens = 256;
  r.keep_text = keep_text;
  return r;
}

struct RunResult {
  std::size_t requests = 0;
  std::size_t failed = 0;
  std::size_t chunks = 0;
  Nanos cpu_ns = 0;
  Nanos wall_ns = 0;
};

// Closed loop: keeps `concurrency` requests in flight until `total` have completed.
// The first `concurrency` start `stagger_ns` apart (0: all at once, so identical scripts
// send their tokens in lock-step, like one engine decode step for a whole batch).
// Measures the calling thread's CPU time only (the server runs in its own thread).
RunResult closed_loop(Target& t, std::size_t total, std::size_t concurrency,
                      std::vector<RequestRecord>& recs, bool keep_text = false,
                      Nanos stagger_ns = 0) {
  recs.assign(total, RequestRecord{});
  RunResult r;
  std::size_t next = 0;
  std::vector<RequestRecord*> fin;
  auto submit_next = [&] {
    recs[next].id = next;
    t.submit(gen(next, keep_text), recs[next]);
    ++next;
  };
  auto account = [&](bool refill) {
    for (RequestRecord* done : fin) {
      ++r.requests;
      r.failed += !done->ok();
      r.chunks += done->chunks.size();
      if (refill && next < total) submit_next();
    }
    fin.clear();
  };
  const Nanos wall0 = monotonic_now_ns();
  const Nanos cpu0 = thread_cpu_ns();
  while (next < total && next < concurrency) {
    const Nanos at = wall0 + static_cast<Nanos>(next) * stagger_ns;
    while (monotonic_now_ns() < at) {
      t.poll(at, fin);
      account(false);
    }
    submit_next();
  }
  const Nanos limit = wall0 + 300 * kNsPerSec;
  while (t.in_flight() > 0 && monotonic_now_ns() < limit) {
    t.poll(monotonic_now_ns() + 100 * kNsPerMs, fin);
    account(true);
  }
  r.cpu_ns = thread_cpu_ns() - cpu0;
  r.wall_ns = monotonic_now_ns() - wall0;
  return r;
}

void print_run(const char* name, const RunResult& r) {
  std::printf("%-34s requests=%zu failed=%zu chunks=%zu wall=%.2fs client_cpu=%.3fs "
              "cpu/request=%.2fus cpu/chunk=%.3fus\n",
              name, r.requests, r.failed, r.chunks, ns_to_s(r.wall_ns), ns_to_s(r.cpu_ns),
              r.requests ? static_cast<double>(r.cpu_ns) / 1e3 / static_cast<double>(r.requests) : 0.0,
              r.chunks ? static_cast<double>(r.cpu_ns) / 1e3 / static_cast<double>(r.chunks) : 0.0);
}

// Paced: every token arrives in its own read (1 ms apart per stream), as from an engine.
void bench_paced(std::size_t requests, std::size_t streams) {
  std::vector<RequestRecord> recs;
  testserver::ScriptServerOptions so;
  so.record_requests = false;
  ScriptServer srv(so);
  StreamSpec spec;
  spec.tokens = testserver::numbered_tokens(64);
  spec.gap_ns = kNsPerMs;
  srv.fallback(engine_stream(spec));
  auto t = make_http_target(target_options(srv), SteadyClock::instance());
  closed_loop(*t, streams, streams, recs);  // warm-up: open the connections
  const RunResult paced = closed_loop(*t, std::max(requests, 4 * streams), streams, recs);
  std::printf("paced: %zu streams x 64 tokens, 1 ms apart\n", streams);
  print_run("paced", paced);
  std::printf("=> client CPU per streamed token (paced, one read per token): %.3f us\n",
              static_cast<double>(paced.cpu_ns) / 1e3 / static_cast<double>(paced.chunks));
}

void bench_cpu(std::size_t requests, std::size_t concurrency) {
  std::vector<RequestRecord> recs;
  auto null_run = [&](int tokens) {
    testserver::ScriptServerOptions so;
    so.record_requests = false;
    ScriptServer srv(so);
    srv.fallback(testserver::null_target(EngineFormat::openai_completions, tokens));
    auto t = make_http_target(target_options(srv), SteadyClock::instance());
    closed_loop(*t, std::min<std::size_t>(requests, 200), concurrency, recs);  // warm-up
    return closed_loop(*t, requests, concurrency, recs);
  };
  // Per request: a 1-token null-target stream; per token: the slope between 1 and 256.
  const RunResult one = null_run(1);
  const RunResult many = null_run(256);
  print_run("null target, 1 token/request", one);
  print_run("null target, 256 tokens/request", many);
  const double per_req_us = static_cast<double>(one.cpu_ns) / 1e3 / static_cast<double>(one.requests);
  const double per_req_256_us = static_cast<double>(many.cpu_ns) / 1e3 / static_cast<double>(many.requests);
  std::printf("=> client CPU per request (1 token): %.2f us; per streamed token (slope, burst): %.3f us\n",
              per_req_us, (per_req_256_us - per_req_us) / 255.0);
}

void raise_fd_limit() {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  getrlimit(RLIMIT_NOFILE, &rl);
  std::printf("RLIMIT_NOFILE soft=%llu\n", static_cast<unsigned long long>(rl.rlim_cur));
}

void bench_streams(std::size_t n) {
  raise_fd_limit();
  testserver::ScriptServerOptions so;
  so.record_requests = false;
  ScriptServer srv(so);
  // Long-lived: the first token at once, then one every 2 s; a stream lasts 10 s.
  StreamSpec spec;
  spec.tokens = testserver::numbered_tokens(6);
  spec.gap_ns = 2 * kNsPerSec;
  srv.fallback(engine_stream(spec));
  auto t = make_http_target(target_options(srv), SteadyClock::instance());
  std::vector<RequestRecord> recs(n);
  const Nanos cpu0 = thread_cpu_ns();
  const Nanos t0 = monotonic_now_ns();
  for (std::size_t i = 0; i < n; ++i) {
    recs[i].id = i;
    t->submit(gen(i), recs[i]);
  }
  std::vector<RequestRecord*> fin;
  std::size_t done = 0, ok = 0, peak_streaming = 0;
  Nanos all_streaming_at = -1;
  const Nanos limit = t0 + 120 * kNsPerSec;
  while (t->in_flight() > 0 && monotonic_now_ns() < limit) {
    fin.clear();
    t->poll(monotonic_now_ns() + 50 * kNsPerMs, fin);
    for (auto* r : fin) {
      ++done;
      ok += r->ok();
    }
    if (done == 0) {
      std::size_t streaming = 0;
      for (const auto& r : recs) streaming += r.t_first >= 0;
      peak_streaming = std::max(peak_streaming, streaming);
      if (streaming == n && all_streaming_at < 0) all_streaming_at = monotonic_now_ns();
    }
  }
  const Nanos cpu = thread_cpu_ns() - cpu0;
  std::size_t chunks = 0;
  for (const auto& r : recs) chunks += r.chunks.size();
  std::printf("streams=%zu peak_concurrently_streaming=%zu all_streaming_after=%.2fs "
              "completed_ok=%zu failed=%zu wall=%.2fs client_cpu=%.2fs chunks=%zu\n",
              n, peak_streaming, all_streaming_at < 0 ? -1.0 : ns_to_s(all_streaming_at - t0), ok,
              done - ok, ns_to_s(monotonic_now_ns() - t0), ns_to_s(cpu), chunks);
  std::map<std::string, int> errors;
  for (const auto& r : recs) {
    if (!r.ok()) ++errors[std::string(to_string(r.error)) + ": " + r.error_detail];
  }
  int shown = 0;
  for (const auto& [e, c] : errors) {
    if (shown++ < 5) std::printf("  %d x %s\n", c, e.c_str());
  }
}


double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(rank);
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

// The floor under any client's timestamp error on this machine at this moment: a writer
// thread sends its CLOCK_MONOTONIC time over a loopback TCP connection every 1 ms, a
// reader thread blocked in recv() stamps each arrival. What remains is the kernel's
// loopback path and the scheduler's wake-up latency.
std::vector<double> bare_recv_latency_us(int samples) {
  std::vector<double> out;
  const int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(lfd, 1) != 0 ||
      ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(lfd);
    return out;
  }
  const int cfd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  ::setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(cfd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(cfd);
    ::close(lfd);
    return out;
  }
  const int sfd = ::accept(lfd, nullptr, nullptr);
  std::thread writer([cfd, samples] {
    for (int i = 0; i < samples; ++i) {
      const Nanos t = monotonic_now_ns();
      if (::send(cfd, &t, sizeof t, 0) != sizeof t) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  for (int i = 0; i < samples; ++i) {
    Nanos sent = 0;
    if (::recv(sfd, &sent, sizeof sent, MSG_WAITALL) != sizeof sent) break;
    out.push_back(static_cast<double>(monotonic_now_ns() - sent) / 1e3);
  }
  writer.join();
  ::close(sfd);
  ::close(cfd);
  ::close(lfd);
  return out;
}

void print_latency(const char* what, const std::vector<double>& us) {
  std::printf("%s: n=%zu p50=%.1fus p90=%.1fus p99=%.1fus p99.9=%.1fus max=%.1fus\n", what,
              us.size(), percentile(us, 50), percentile(us, 90), percentile(us, 99),
              percentile(us, 99.9), us.empty() ? 0.0 : *std::max_element(us.begin(), us.end()));
}

void bench_timestamp(std::size_t concurrency, bool staggered) {
  testserver::ScriptServerOptions so;
  so.record_requests = false;
  ScriptServer srv(so);
  StreamSpec spec;
  const std::string token = fmt::format("S{};", testserver::kSendTimePlaceholder);
  spec.tokens.assign(50, token);
  spec.gap_ns = 2 * kNsPerMs;
  auto script = engine_stream(spec);
  script.stamp_send_time = true;
  srv.fallback(script);
  auto t = make_http_target(target_options(srv), SteadyClock::instance());
  std::vector<RequestRecord> recs;
  closed_loop(*t, concurrency, concurrency, recs, true);  // warm-up: connections open
  const Nanos stagger = staggered ? spec.gap_ns / static_cast<Nanos>(concurrency) : 0;
  const RunResult r = closed_loop(*t, concurrency * 8, concurrency, recs, true, stagger);
  std::vector<double> err_us;
  std::size_t mismatched = 0;
  for (const auto& rec : recs) {
    std::size_t i = 0;
    std::string_view text = rec.output_text;
    for (std::size_t p = text.find('S'); p != std::string_view::npos && i < rec.chunks.size();
         p = text.find('S', p + 1), ++i) {
      Nanos sent = 0;
      std::from_chars(text.data() + p + 1, text.data() + p + 20, sent);
      const Nanos e = rec.chunks[i].t_ns - sent;
      if (e < 0) ++mismatched;  // would mean an arrival stamp before the send: a bug
      err_us.push_back(static_cast<double>(e) / 1e3);
    }
  }
  print_run("timestamp run", r);
  const std::string what = fmt::format(
      "client arrival stamp - server send stamp, {} streams x 50 tokens 2 ms apart, {}",
      concurrency, staggered ? "staggered" : "lock-step");
  print_latency(what.c_str(), err_us);
  std::printf("arrival stamps before the send stamp (must be 0): %zu\n", mismatched);
}

std::size_t flag(int argc, char** argv, std::string_view name, std::size_t def) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (name == argv[i]) return static_cast<std::size_t>(std::strtoull(argv[i + 1], nullptr, 10));
  }
  return def;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 && argv[1][0] != '-' ? argv[1] : "all";
  const std::size_t requests = flag(argc, argv, "--requests", 20000);
  const std::size_t concurrency = flag(argc, argv, "--concurrency", 16);
  const std::size_t streams = flag(argc, argv, "--streams", 5000);
  if (mode == "cpu" || mode == "all") bench_cpu(requests, concurrency);
  if (mode == "paced" || mode == "cpu" || mode == "all") bench_paced(requests / 16, flag(argc, argv, "--paced-streams", 64));
  if (mode == "timestamp" || mode == "all") {
    print_latency("floor: bare blocking recv() on loopback, 1 ms apart", bare_recv_latency_us(2000));
    bench_timestamp(concurrency, true);
    bench_timestamp(concurrency, false);
  }
  if (mode == "streams" || mode == "all") bench_streams(streams);
  return 0;
}
