#pragma once
// `sim serve`: the simulated engine in real time behind vLLM's OpenAI-compatible HTTP API
// (net::HttpServer). Tokens leave at their simulated times: simulated time runs at
// `time_scale` × wall time from the moment the server starts, and an asio timer wakes the
// engine at the wall time of its next event.
//
// Routes: POST /v1/completions, POST /v1/chat/completions (streaming and not, vLLM's chunk
// format, role-only first chat chunk, usage and continuous usage stats, max_tokens /
// max_completion_tokens, ignore_eos, min_tokens), GET /v1/models, /health, /version,
// /metrics (Prometheus text, vLLM names), POST /tokenize. Faults on demand (FaultOptions).
//
// Threading: the engine and every response run on the server's single io thread; the
// public methods may be called from any thread (not concurrently with each other).
#include <cstdint>
#include <memory>
#include <string>

#include "inferscope/sim/config.h"

namespace inferscope::sim {

// Each rate is a per-request probability in [0, 1]. Pre-stream faults (500, 503, 429) are
// drawn first; a request that passes may then draw one mid-stream fault, triggered after
// a random number of tokens in [1, max(1, max_tokens / 2)].
struct FaultOptions {
  double http_500_rate = 0;
  double http_503_rate = 0;
  double http_429_rate = 0;
  int retry_after_s = 1;          // Retry-After header of a 429
  double error_event_rate = 0;    // `data: {"error":…}` then [DONE] mid-stream
  double reset_rate = 0;          // TCP RST mid-stream
  double stall_rate = 0;          // the stream pauses mid-way
  double stall_s = 30;            // for this long (wall seconds); 0 = forever
  double malformed_rate = 0;      // one chunk of broken JSON mid-stream
  int cold_start_requests = 0;    // the first N requests wait cold_start_s before the engine
  double cold_start_s = 2.0;      // sees them (model loading)
  std::uint64_t seed = 0;
};

struct ServeOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = 8000;  // 0: ephemeral (read port())
  double time_scale = 1.0;    // simulated seconds per wall second
  std::string ground_truth_path;  // JSONL per request: arrival, scheduled, first token,
                                  // every token's emission (CLOCK_MONOTONIC ns); empty = off
  FaultOptions faults;
};

class SimServer {
 public:
  // Binds at once (port() is valid). Throws InputError for bad options and
  // std::runtime_error when it cannot bind.
  SimServer(EngineConfig cfg, ServeOptions opt);
  ~SimServer();
  SimServer(const SimServer&) = delete;
  SimServer& operator=(const SimServer&) = delete;

  std::uint16_t port() const;
  std::string base_url() const;  // "http://127.0.0.1:PORT"
  // Starts serving on a background thread and returns.
  void start();
  // Serves on the calling thread until stop() is called from another thread.
  void run();
  // Stops serving, ends open streams, flushes the ground-truth file. Idempotent.
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace inferscope::sim
