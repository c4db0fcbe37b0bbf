#pragma once
// The per-request timeline: the one record type that flows from the client (or the
// simulator) to the analysis and the report. Nothing downstream re-parses text.
//
// All t_* fields are nanoseconds on the run's Clock (CLOCK_MONOTONIC for real runs,
// virtual time for in-process simulation); -1 means "did not happen".
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/core/clock.h"

namespace inferscope {

// Why a request failed. `none` means it completed.
enum class ErrorClass : std::uint8_t {
  none,
  http_4xx,            // HTTP 4xx other than 429
  http_5xx,            // HTTP 5xx
  rate_limited,        // HTTP 429
  reset,               // connection reset / closed mid-stream
  truncated,           // stream ended without its end marker
  timeout,             // no byte for longer than the request timeout
  bad_payload,         // malformed JSON / SSE
  server_error_event,  // error event inside a 200 stream
  connect,             // DNS / TCP / TLS failure before any response
  cancelled,           // the run was interrupted (Ctrl-C) while in flight
};
inline constexpr int kErrorClassCount = 11;

std::string_view to_string(ErrorClass e);
// Returns nullopt for an unknown name.
std::optional<ErrorClass> error_class_from_string(std::string_view s);

// One streamed chunk that carried generated content.
struct Chunk {
  Nanos t_ns = 0;           // arrival time of the bytes that completed this chunk
  std::int32_t tokens = 0;  // generated tokens in this chunk (usage delta or tokenizer count)
};

// Network phase durations from the transport (0 when unknown or reused connection).
struct NetTimings {
  Nanos dns_ns = 0;
  Nanos connect_ns = 0;   // TCP connect, after DNS
  Nanos tls_ns = 0;       // TLS handshake, after connect
  Nanos first_byte_ns = 0;  // from send to first response byte
  bool reused_connection = false;
};

struct RequestRecord {
  std::uint64_t id = 0;
  std::string type = "default";
  std::uint64_t session_id = 0;
  std::int32_t turn = 0;
  bool warmup = false;
  Nanos wait_before_ns = 0;  // tool / think wait before this turn (sessions)
  bool wait_is_tool = false;

  Nanos t_sched = -1;    // when the schedule said to send it
  Nanos t_send = -1;     // handed to the transport
  Nanos t_headers = -1;  // response headers received
  Nanos t_first = -1;    // first content chunk
  Nanos t_last = -1;     // last content chunk
  Nanos t_done = -1;     // end of stream
  std::vector<Chunk> chunks;

  std::int32_t input_tokens_requested = -1;  // what the workload built
  std::int32_t max_tokens = -1;
  std::int32_t prompt_tokens = -1;       // server usage.prompt_tokens (-1 not reported)
  std::int32_t completion_tokens = -1;   // server usage.completion_tokens (-1 not reported)
  std::int32_t cached_tokens = -1;       // server-reported prefix-cache hit tokens
  std::int32_t tokenizer_output_tokens = 0;  // client-side count over the streamed text
  bool usage_streamed = false;           // chunk token counts came from streamed usage

  int http_status = 0;
  ErrorClass error = ErrorClass::none;
  std::string error_detail;  // short, never contains credentials
  std::string finish_reason;
  NetTimings net;
  std::string server_timings_json;  // engine-reported timings (llama.cpp `timings`), raw JSON
  std::string output_text;          // only when GenRequest::keep_text
  // Tool calls the model made (chat), as {"tool_calls":[{"function":{"name","arguments"}}]}
  // with streamed fragments joined; only when GenRequest::keep_text. Empty: none.
  std::string tool_calls_json;
  // Output check for structured-output and tool-calling requests: -1 not checked, 0
  // failed (output_check_detail says why), 1 passed.
  std::int8_t output_check = -1;
  std::string output_check_detail;

  bool ok() const { return error == ErrorClass::none; }
  // Output tokens as DESIGN.md defines them: server usage, else the client's count.
  std::int32_t output_tokens() const {
    return completion_tokens >= 0 ? completion_tokens : tokenizer_output_tokens;
  }
};

}  // namespace inferscope
