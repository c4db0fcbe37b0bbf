#pragma once
// Engine protocols: how a GenRequest becomes an HTTP request for each API, and how the
// streamed response body becomes a timeline. Pure: no sockets, no clocks (the caller
// passes arrival times). See docs/protocols.md and DESIGN.md "Protocol facts".
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "inferscope/core/clock.h"
#include "inferscope/core/request.h"
#include "inferscope/core/timeline.h"
#include "inferscope/core/token_counter.h"

namespace inferscope {

enum class ApiKind : std::uint8_t {
  completions,  // OpenAI /v1/completions (vLLM, SGLang, TensorRT-LLM, llama.cpp, Ollama)
  chat,         // OpenAI /v1/chat/completions
  sglang,       // SGLang native /generate (cumulative text)
  llamacpp,     // llama.cpp native /completion
  tgi,          // TGI /generate_stream
};
std::string_view to_string(ApiKind k);
// Throws InputError("--api", ...) on an unknown name.
ApiKind api_kind_from_string(std::string_view s);

// The engine family behind an OpenAI-compatible route, for request options that only
// some engines accept (ignore_eos, min_tokens, continuous_usage_stats).
enum class EngineFlavor : std::uint8_t { vllm, sglang, trtllm, llamacpp, ollama, tgi, generic };
std::string_view to_string(EngineFlavor f);
EngineFlavor engine_flavor_from_string(std::string_view s);  // throws InputError("--engine")

struct ProtocolOptions {
  std::string model;
  EngineFlavor flavor = EngineFlavor::vllm;
  bool stream = true;
  bool include_usage = true;           // stream_options.include_usage where accepted
  bool continuous_usage_stats = true;  // stream_options.continuous_usage_stats where accepted
};

struct HttpRequestSpec {
  std::string method = "POST";
  std::string path;  // e.g. "/v1/completions"
  std::string body;  // JSON
};

// Builds the request for `api`. Options an engine does not accept are not sent.
HttpRequestSpec build_request(ApiKind api, const GenRequest& req, const ProtocolOptions& opt);

// Turns the response body of one streamed request into the record's timeline.
//
// Feed it the bytes as they arrive (any split, including inside a UTF-8 character or an
// SSE line) with the arrival time of each read. It fills rec.t_first, rec.t_last,
// rec.chunks, token usage, finish_reason, server timings, and on a protocol-level
// failure rec.error (server_error_event, bad_payload). It never touches t_sched/t_send/
// t_headers/t_done or HTTP-level errors: the transport owns those.
//
// Single-threaded; one instance per request.
class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  virtual void on_body(std::string_view bytes, Nanos t, RequestRecord& rec) = 0;
  // The body ended (clean close / end of chunked body) at time t. Sets rec.error =
  // truncated when the protocol's end marker was never seen.
  virtual void on_end(Nanos t, RequestRecord& rec) = 0;
  // The end marker has been seen ([DONE], final event, stop:true, …): the transport may
  // finish the request without waiting for the connection to close.
  virtual bool finished() const = 0;
};

// `counter` may be null: then a content chunk without streamed usage counts as 1 token
// (what vLLM, SGLang and llama.cpp send without speculative decoding). Not owned; must
// outlive the decoder. `keep_text` stores the generated text in rec.output_text.
std::unique_ptr<StreamDecoder> make_stream_decoder(ApiKind api, const TokenCounter* counter,
                                                   bool keep_text);

// Decodes a non-streamed response body (stream=false) into the record: text, usage,
// finish reason, and one chunk at `t` carrying all output tokens.
void decode_full_response(ApiKind api, std::string_view body, Nanos t, RequestRecord& rec,
                          const TokenCounter* counter, bool keep_text);

// The message of an HTTP error body ({"error":{"message":…}}, {"object":"error",
// "message":…}, {"error":"…"}, or plain text), shortened to 200 bytes.
std::string error_message_from_body(std::string_view body);

}  // namespace inferscope
