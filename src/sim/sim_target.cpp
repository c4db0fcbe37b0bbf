#include "inferscope/sim/sim_target.h"

#include <nlohmann/json.hpp>

namespace inferscope::sim {

SimTarget::SimTarget(EngineConfig cfg, Nanos start_ns) : clock_(start_ns), sim_(std::move(cfg)) {
  sim_.set_listener(this);
  sim_.run_until(start_ns);
}

void SimTarget::submit(const GenRequest& req, RequestRecord& rec) {
  SimRequestSpec spec;
  if (!req.messages.empty())
    spec.prompt = render_chat_prompt(req.messages);
  else if (!req.prompt.empty())
    spec.prompt = req.prompt;
  else
    spec.synthetic_prompt_tokens = std::max(req.input_tokens, 1);
  spec.max_tokens = req.max_tokens > 0 ? req.max_tokens : 16;
  spec.ignore_eos = req.ignore_eos;
  spec.min_tokens = std::max(req.min_tokens, 0);
  rec.t_send = clock_.now_ns();
  rec.max_tokens = spec.max_tokens;
  const ReqId id = sim_.submit(rec.t_send, std::move(spec));
  live_.emplace(id, Live{&rec, req.keep_text});
}

void SimTarget::poll(Nanos deadline_ns, std::vector<RequestRecord*>& finished) {
  while (done_.empty()) {
    const auto next = sim_.next_event_time();
    if (!next || *next > deadline_ns) {
      if (deadline_ns < kNoDeadline && deadline_ns > clock_.now_ns()) {
        clock_.set(deadline_ns);
        sim_.run_until(deadline_ns);
      }
      break;
    }
    clock_.set(std::max(clock_.now_ns(), *next));
    sim_.run_until(*next);
  }
  finished.insert(finished.end(), done_.begin(), done_.end());
  done_.clear();
}

void SimTarget::cancel_all() {
  const Nanos now = clock_.now_ns();
  for (auto& [id, live] : live_) {
    sim_.abort(id, now);
    live.rec->error = ErrorClass::cancelled;
    live.rec->error_detail = "cancelled";
    live.rec->t_done = now;
    done_.push_back(live.rec);
  }
  live_.clear();
}

void SimTarget::on_accepted(ReqId id, Nanos t) {
  auto it = live_.find(id);
  if (it == live_.end()) return;
  it->second.rec->t_headers = t;
  it->second.rec->http_status = 200;
}

void SimTarget::on_rejected(ReqId id, Nanos t, const std::string& message) {
  auto it = live_.find(id);
  if (it == live_.end()) return;
  RequestRecord& rec = *it->second.rec;
  rec.http_status = 400;
  rec.error = ErrorClass::http_4xx;
  rec.error_detail = message.substr(0, 200);
  rec.t_headers = t;
  rec.t_done = t;
  done_.push_back(&rec);
  live_.erase(it);
}

void SimTarget::on_tokens(ReqId id, Nanos t, int first_index, int n, bool /*last*/) {
  auto it = live_.find(id);
  if (it == live_.end()) return;
  RequestRecord& rec = *it->second.rec;
  rec.chunks.push_back(Chunk{t, n});
  if (rec.t_first < 0) rec.t_first = t;
  rec.t_last = t;
  rec.tokenizer_output_tokens += n;
  rec.usage_streamed = true;
  if (it->second.keep_text) rec.output_text += sim_.output_text(id, first_index, n);
}

void SimTarget::on_finished(ReqId id, Nanos t, const FinishInfo& info) {
  auto it = live_.find(id);
  if (it == live_.end()) return;
  RequestRecord& rec = *it->second.rec;
  rec.t_done = t;
  rec.prompt_tokens = info.prompt_tokens;
  rec.completion_tokens = info.completion_tokens;
  rec.cached_tokens = info.cached_tokens;
  rec.finish_reason = std::string(to_string(info.reason));
  done_.push_back(&rec);
  live_.erase(it);
}

void write_engine_series(std::ostream& out, const std::vector<StepRecord>& steps, Nanos origin) {
  for (const auto& s : steps) {
    const nlohmann::json j = {{"t_ns", s.t_start - origin},
                              {"t_end_ns", s.t_end - origin},
                              {"replica", s.replica},
                              {"running", s.running},
                              {"waiting", s.waiting},
                              {"kv_usage", s.kv_usage},
                              {"num_seqs", s.num_seqs},
                              {"batch_tokens", s.batch_tokens},
                              {"prefill_tokens", s.prefill_tokens},
                              {"decode_tokens", s.decode_tokens},
                              {"preempted", s.preempted},
                              {"step_ms", ns_to_ms(s.t_end - s.t_start)},
                              {"compute_ms", s.compute_ms},
                              {"memory_ms", s.memory_ms},
                              {"comm_ms", s.comm_ms},
                              {"overhead_ms", s.overhead_ms},
                              {"frontend_backlog_ms", s.frontend_backlog_ms}};
    out << j.dump() << '\n';
  }
}

}  // namespace inferscope::sim
