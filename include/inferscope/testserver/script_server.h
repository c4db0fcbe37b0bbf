#pragma once
// A scripted loopback HTTP server for tests and benchmarks: it plays exactly the bytes,
// at exactly the times, and with exactly the faults a test asks for, and records every
// request it received. Also the "null target" (MLPerf LoadGen's idea): a server that
// answers instantly, to measure the client's own overhead.
//
//   ScriptServer srv;
//   srv.route("/v1/completions",
//             engine_stream({.format = EngineFormat::openai_completions,
//                            .tokens = numbered_tokens(8), .first_delay_ns = 20 * kNsPerMs,
//                            .gap_ns = 10 * kNsPerMs}));
//   ... point a client at srv.base_url() ...
//   auto reqs = srv.requests();  // method, path, headers, body, step send times
//
// Threading: the server runs one io thread of its own (started by the constructor).
// Every public method is thread-safe and may be called while requests are served.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/core/clock.h"
#include "inferscope/net/http_server.h"

namespace inferscope::testserver {

// How a scripted response ends after its last step.
enum class Ending : std::uint8_t {
  finish,             // clean end (terminating chunk / full Content-Length)
  reset,              // TCP RST after the bytes sent so far ("reset mid-stream")
  close_without_end,  // FIN without the terminating chunk: truncated stream
  stall,              // keep the connection open and never send another byte
  close_immediately,  // close right after reading the request: no status, no bytes
};

struct Step {
  Nanos delay_ns = 0;  // after the previous step (or after the headers for the first)
  std::string bytes;   // body bytes; one HTTP chunk when the script is chunked
};

// Replaced, in a step's bytes, by the CLOCK_MONOTONIC time (19 digits, zero-padded) at
// which the step is handed to the socket, when Script::stamp_send_time is set. Lets a
// benchmark compare the server's send time with the client's arrival time per chunk.
inline constexpr std::string_view kSendTimePlaceholder = "{{send_ns}}";

struct Script {
  int status = 200;
  net::Headers headers{{"Content-Type", "text/event-stream"}};
  bool chunked = true;  // false: raw body, Content-Length added when ending == finish
  Nanos headers_delay_ns = 0;  // before the status line (queueing, cold start)
  std::vector<Step> steps;
  Ending ending = Ending::finish;
  Nanos ending_delay_ns = 0;  // after the last step, before the ending
  bool stamp_send_time = false;  // substitute kSendTimePlaceholder in steps
};

// Step times are scheduled from the time the request was received: step i is sent at
// t_received + headers_delay + sum(delay_0..delay_i) (no drift from timer lateness), or
// as soon as possible after it.

// One request as the server received it (method, target, headers, body, arrival time and
// their look-ups come from net::HttpRequest), with what the server did about it.
struct ReceivedRequest : net::HttpRequest {
  Nanos t_headers_sent_ns = -1;      // status line handed to the socket (-1: never)
  std::vector<Nanos> step_sent_ns;   // when each step was handed to the socket
};

struct ScriptServerOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;       // 0 = ephemeral
  bool record_requests = true;  // false for benchmarks (millions of requests)
};

namespace detail {
struct ScriptServerState;
}

class ScriptServer {
 public:
  // Binds and starts serving. A request whose path has no script gets 404.
  explicit ScriptServer(ScriptServerOptions opt = {});
  ~ScriptServer();
  ScriptServer(const ScriptServer&) = delete;
  ScriptServer& operator=(const ScriptServer&) = delete;

  std::uint16_t port() const;
  std::string base_url() const;  // "http://127.0.0.1:PORT"

  // The script every request to `path` (without query; any method) gets, unless one was
  // enqueued for it.
  void route(const std::string& path, Script script);
  // A one-shot script for the next request to `path`; several are played in FIFO order,
  // then the route() script applies again.
  void enqueue(const std::string& path, Script script);
  // The script for any path without a route or queued script (e.g. the null target).
  void fallback(Script script);

  // Requests received so far, in arrival order (empty when record_requests is false).
  std::vector<ReceivedRequest> requests() const;
  std::size_t request_count() const;  // counted even when not recorded
  std::size_t open_connections() const;

  // Closes every connection and stops. Called by the destructor.
  void stop();

 private:
  std::shared_ptr<detail::ScriptServerState> impl_;
};

// ---- canned engine streams ----------------------------------------------------------

enum class EngineFormat : std::uint8_t {
  openai_completions,   // vLLM/SGLang/TRT-LLM /v1/completions: data: {...}\n\n, [DONE]
  openai_chat,          // /v1/chat/completions: role-only first chunk, delta.content
  sglang_generate,      // SGLang /generate: cumulative text + meta_info, [DONE]
  llamacpp_completion,  // llama.cpp /completion: content/stop, final timings, no [DONE]
  tgi_generate_stream,  // TGI /generate_stream: data:{...} (no space), no [DONE]
};

struct StreamSpec {
  EngineFormat format = EngineFormat::openai_completions;
  std::vector<std::string> tokens;  // one element per streamed content chunk
  // Tokens each chunk carries (for usage counts); empty = 1 each.
  std::vector<int> chunk_tokens;
  Nanos first_delay_ns = 0;  // from the headers to the first content chunk
  Nanos gap_ns = 0;          // between consecutive content chunks
  // Overrides first_delay_ns/gap_ns when non-empty: delay before each content chunk.
  std::vector<Nanos> delays_ns;
  std::string model = "test-model";
  int prompt_tokens = 10;
  bool usage = true;             // OpenAI: final usage chunk (include_usage)
  bool continuous_usage = false; // OpenAI: cumulative usage in every chunk
  bool end_marker = true;        // OpenAI/SGLang: data: [DONE]; llama.cpp/TGI: final event
  std::string finish_reason = "length";
};

// The full stream for `spec` (status 200, text/event-stream, chunked, one step per event;
// the role chunk, final usage chunk and [DONE] go out with no extra delay).
Script engine_stream(const StreamSpec& spec);
// "t0 ", "t1 ", … (n tokens).
std::vector<std::string> numbered_tokens(int n);
// A non-streamed JSON reply (errors, /tokenize, /v1/models): Content-Length, keep-alive.
Script json_response(int status, std::string body, net::Headers extra_headers = {});
// The null target: `tokens` content chunks of format `format`, all sent at once.
Script null_target(EngineFormat format, int tokens);

}  // namespace inferscope::testserver
