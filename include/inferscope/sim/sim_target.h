#pragma once
// The in-process simulated target: the simulated engine behind the Target interface, on
// a virtual clock. `sim predict` drives it with the same load generator that drives a real
// server, so its summary.json means the same thing.
//
// Request mapping: GenRequest::messages non-empty → render_chat_prompt(messages); else
// GenRequest::prompt as completion text; both empty → a synthetic prompt of
// input_tokens tokens. max_tokens, ignore_eos and min_tokens are honoured. The engine
// streams usage, so every chunk's token count is exact (usage_streamed = true).
//
// Threading: one thread (the load loop), like every Target.
#include <cstddef>
#include <ostream>
#include <unordered_map>
#include <vector>

#include "inferscope/core/clock.h"
#include "inferscope/core/target.h"
#include "inferscope/sim/engine.h"

namespace inferscope::sim {

class SimTarget final : public Target, private EngineListener {
 public:
  // The clock starts at `start_ns` and moves only inside poll().
  explicit SimTarget(EngineConfig cfg, Nanos start_ns = 0);

  const Clock& clock() const override { return clock_; }
  void submit(const GenRequest& req, RequestRecord& rec) override;
  // Advances virtual time event by event up to `deadline_ns`, returning as soon as a
  // request finishes. A deadline at or beyond kNoDeadline never moves the clock past the
  // last event (nothing to wait for).
  void poll(Nanos deadline_ns, std::vector<RequestRecord*>& finished) override;
  std::size_t in_flight() const override { return live_.size() + done_.size(); }
  void cancel_all() override;

  Simulator& engine() { return sim_; }
  const Simulator& engine() const { return sim_; }

  static constexpr Nanos kNoDeadline = Nanos{1} << 62;

 private:
  void on_accepted(ReqId id, Nanos t) override;
  void on_rejected(ReqId id, Nanos t, const std::string& message) override;
  void on_tokens(ReqId id, Nanos t, int first_index, int n, bool last) override;
  void on_finished(ReqId id, Nanos t, const FinishInfo& info) override;

  struct Live {
    RequestRecord* rec;
    bool keep_text;
  };
  ManualClock clock_;
  Simulator sim_;
  std::unordered_map<ReqId, Live> live_;
  std::vector<RequestRecord*> done_;
};

// engine.jsonl: one JSON object per engine step, times in ns relative to `origin`:
// {"t_ns","t_end_ns","replica","running","waiting","kv_usage","num_seqs","batch_tokens",
//  "prefill_tokens","decode_tokens","preempted","step_ms","compute_ms","memory_ms",
//  "comm_ms","overhead_ms","frontend_backlog_ms"}.
void write_engine_series(std::ostream& out, const std::vector<StepRecord>& steps, Nanos origin);

}  // namespace inferscope::sim
