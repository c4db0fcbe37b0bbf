#pragma once
// The simulated engine: a discrete-event model of a vLLM-class continuous-batching server
// (one or more data-parallel replicas behind a least-loaded router, sharing one API front
// end). See DESIGN.md "The simulated engine" and docs/simulator.md.
//
// Time: the engine keeps no clock of its own. The caller passes event times explicitly
// (submit(t), run_until(t)); virtual time for `sim predict` (SimTarget), a scaled steady
// clock for `sim serve`. Every callback happens inside run_until() on the caller's thread,
// in non-decreasing time order.
//
// Threading: not thread-safe; one owner thread drives it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/core/clock.h"
#include "inferscope/core/request.h"
#include "inferscope/sim/config.h"
#include "inferscope/sim/cost_model.h"
#include "inferscope/sim/metrics.h"

namespace inferscope::sim {

// Submission ordinal, 1-based, unique per Simulator (so the same sequence of submissions
// gives the same ids, output text and random draws on every run).
using ReqId = std::uint64_t;

struct SimRequestSpec {
  std::string prompt;               // tokenized with SimTokenizer; block hashes of its tokens
                                    // drive prefix caching. Empty: a synthetic prompt
  int synthetic_prompt_tokens = 0;  // of this many tokens unique to the request
  int max_tokens = 16;
  bool ignore_eos = true;           // false: some replies meet a stop early (see config)
  int min_tokens = 0;
};

enum class FinishReason : std::uint8_t { stop, length, abort };
std::string_view to_string(FinishReason r);

struct FinishInfo {
  FinishReason reason = FinishReason::length;
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int cached_tokens = 0;  // prefix-cache hit tokens at first scheduling
};

// Receives the engine's outputs. Called inside Simulator::run_until().
class EngineListener {
 public:
  virtual ~EngineListener() = default;
  // The front end has processed the request and handed it to a replica (response headers
  // would go out now).
  virtual void on_accepted(ReqId /*id*/, Nanos /*t*/) {}
  // Refused by the front end (prompt + max_tokens over max_model_len, or more KV than the
  // cache holds). No further callbacks for this id.
  virtual void on_rejected(ReqId id, Nanos t, const std::string& message) = 0;
  // First placed in a batch; `cached_tokens` were found in the prefix cache.
  virtual void on_scheduled(ReqId /*id*/, Nanos /*t*/, int /*cached_tokens*/) {}
  // Output tokens [first_index, first_index + n) left the front end at t. `last`: these
  // are the reply's final tokens; on_finished follows at once, same t.
  virtual void on_tokens(ReqId id, Nanos t, int first_index, int n, bool last) = 0;
  // The request is complete (right after its last on_tokens, same t).
  virtual void on_finished(ReqId id, Nanos t, const FinishInfo& info) = 0;
};

// One engine step of one replica (a row of engine.jsonl).
struct StepRecord {
  Nanos t_start = 0, t_end = 0;
  int replica = 0;
  int running = 0;         // sequences running after scheduling
  int waiting = 0;         // left waiting
  double kv_usage = 0;     // fraction of blocks referenced, after scheduling
  int num_seqs = 0;        // sequences in the batch
  int batch_tokens = 0, prefill_tokens = 0, decode_tokens = 0;
  int preempted = 0;       // preemptions while scheduling this step
  double compute_ms = 0, memory_ms = 0, comm_ms = 0, overhead_ms = 0;
  double frontend_backlog_ms = 0;  // queued front-end CPU work at step start
};

class Simulator {
 public:
  // Validates the config; throws InputError when the model does not fit in memory.
  explicit Simulator(EngineConfig cfg);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // The listener must outlive the simulator's use of it; nullptr drops outputs.
  void set_listener(EngineListener* listener);

  // A request arrives at the front end at t (≥ now()). Returns its id.
  ReqId submit(Nanos t, SimRequestSpec spec);
  // Drops a request at t wherever it is; no further callbacks for it. Unknown or
  // finished ids are ignored.
  void abort(ReqId id, Nanos t);

  // Time of the next pending event, if any.
  std::optional<Nanos> next_event_time() const;
  // Processes every event with time ≤ t in order; now() is t afterwards.
  void run_until(Nanos t);
  Nanos now() const;
  // Requests submitted and not yet finished, rejected or aborted.
  std::size_t active() const;

  const EngineConfig& config() const;
  const CostModel& cost() const;
  std::int64_t kv_blocks_per_replica() const;
  const EngineMetrics& metrics() const;
  EngineGauges gauges() const;
  // Busy time of the front-end CPU pool so far (all workers), seconds.
  double frontend_busy_s() const;
  // Engine steps so far (empty unless config().record_steps).
  const std::vector<StepRecord>& steps() const;
  std::string render_metrics() const;  // Prometheus text page

  // The deterministic output text: token i of request `id` is
  // SimTokenizer::filler_token(output_seed(id), i).
  std::uint64_t output_seed(ReqId id) const;
  std::string output_text(ReqId id, int first_index, int n) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The prompt text the sim's chat template makes of a message list: " <|role|>" then the
// content, for each message, then " <|assistant|>". Each marker is one token.
std::string render_chat_prompt(const std::vector<ChatMessage>& messages);

}  // namespace inferscope::sim
