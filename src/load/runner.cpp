#include "inferscope/load/runner.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <optional>
#include <queue>
#include <unordered_map>

#include <fmt/format.h>

#include "inferscope/core/errors.h"
#include "inferscope/stats/summary.h"

namespace inferscope {
namespace {

constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

Nanos thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

// One session being played: its plan, the next turn, and the conversation so far.
struct ActiveSession {
  SessionPlan plan;
  std::size_t next_turn = 0;
  std::vector<ChatMessage> history;   // chat: every message sent and every reply
  std::string history_text;           // completions: the same as plain text
  std::vector<ChatMessage> last_new;  // what the in-flight turn added (history on success)
  std::string last_new_text;
};

struct PendingSend {
  Nanos t_sched;
  std::uint64_t seq;  // FIFO among equal times
  std::size_t session;
  bool operator>(const PendingSend& o) const { return t_sched != o.t_sched ? t_sched > o.t_sched : seq > o.seq; }
};

class LoadLoop {
 public:
  LoadLoop(Target& t, SessionSource& s, const LoadOptions& o, LoadResult& r)
      : target_(t), source_(s), opt_(o), result_(r), clock_(t.clock()) {}

  // Runs one phase to completion: `count` requests (0 = no cap) or `duration` (0 = no
  // cap); records are flagged `warmup`.
  void run_phase(std::size_t count, Nanos duration, bool warmup) {
    phase_start_ = clock_.now_ns();
    count_cap_ = count;
    duration_end_ = duration > 0 ? phase_start_ + duration : kNever;
    warmup_ = warmup;
    issued_ = 0;
    issuing_ = true;
    next_progress_ = phase_start_ + opt_.progress_interval_ns;
    arrivals_.reset();
    upcoming_.reset();
    if (opt_.mode == LoadMode::open) {
      arrivals_.emplace(opt_.arrival, opt_.rate_rps > 0 ? opt_.rate_rps : 1.0, opt_.burstiness,
                        opt_.seed + (warmup ? 0x5eed : 0));
      pull_upcoming();
    } else {
      for (int u = 0; u < opt_.concurrency; ++u) start_next_session(phase_start_);
    }
    std::vector<RequestRecord*> finished;
    Nanos drain_start = kNever;
    while (true) {
      Nanos now = clock_.now_ns();
      if (opt_.stop && opt_.stop->load(std::memory_order_relaxed)) {
        interrupt();
        return;
      }
      if (issuing_ && (now >= duration_end_ || (count_cap_ && issued_ >= count_cap_))) stop_issuing();
      if (issuing_ && opt_.mode == LoadMode::open) {
        while (upcoming_ && upcoming_time_ <= now) {
          schedule(*upcoming_, upcoming_time_);
          upcoming_.reset();
          pull_upcoming();
        }
      }
      while (issuing_ && !pending_.empty() && pending_.top().t_sched <= now && below_cap()) {
        PendingSend p = pending_.top();
        pending_.pop();
        submit(p);
        if (count_cap_ && issued_ >= count_cap_) stop_issuing();
      }
      const bool nothing_left = pending_.empty() && !upcoming_;
      if (!issuing_ || nothing_left) {
        if (target_.in_flight() == 0 && (!issuing_ || nothing_left)) break;
        if (drain_start == kNever) drain_start = now;
        if (opt_.drain_timeout_ns > 0 && now - drain_start > opt_.drain_timeout_ns) target_.cancel_all();
      }
      Nanos deadline = next_progress_;
      if (issuing_) {
        if (!pending_.empty() && below_cap()) deadline = std::min(deadline, pending_.top().t_sched);
        if (upcoming_) deadline = std::min(deadline, upcoming_time_);
        deadline = std::min(deadline, duration_end_);
      }
      if (drain_start != kNever && opt_.drain_timeout_ns > 0)
        deadline = std::min(deadline, drain_start + opt_.drain_timeout_ns + 1);
      finished.clear();
      target_.poll(deadline, finished);
      const Nanos after = clock_.now_ns();
      const Nanos lag = !clock_.is_virtual() && finished.empty() && after > deadline ? after - deadline : 0;
      if (lag > 0) lags_.push_back(ns_to_ms(lag));
      if (opt_.observer) opt_.observer->loop_turn(lag, target_.in_flight());
      for (RequestRecord* rec : finished) on_finished(*rec);
      if (after >= next_progress_) {
        report_progress(after);
        next_progress_ = after + opt_.progress_interval_ns;
      }
    }
    report_progress(clock_.now_ns());
  }

  bool interrupted() const { return interrupted_; }
  bool exhausted() const { return exhausted_; }
  const std::vector<double>& lags() const { return lags_; }

 private:
  bool below_cap() const {
    return opt_.mode != LoadMode::open || opt_.max_in_flight == 0 || target_.in_flight() < opt_.max_in_flight;
  }

  void stop_issuing() {
    issuing_ = false;
    pending_ = {};
    upcoming_.reset();
  }

  std::optional<SessionPlan> pull_session() {
    if (exhausted_) return std::nullopt;
    auto s = source_.next();
    if (!s || s->turns.empty()) {
      exhausted_ = !s.has_value() || exhausted_;
      if (s && s->turns.empty()) return pull_session();
      return std::nullopt;
    }
    return s;
  }

  void pull_upcoming() {
    upcoming_ = pull_session();
    if (!upcoming_) return;
    const bool trace_time = opt_.use_trace_times && upcoming_->arrival_ns.has_value();
    upcoming_time_ = phase_start_ + (trace_time ? *upcoming_->arrival_ns : arrivals_->next());
  }

  void start_next_session(Nanos t) {
    if (!issuing_) return;
    auto s = pull_session();
    if (!s) return;
    schedule(std::move(*s), t);
  }

  void schedule(SessionPlan plan, Nanos t) {
    ActiveSession& s = sessions_.emplace_back();
    s.plan = std::move(plan);
    pending_.push({t, seq_++, sessions_.size() - 1});
  }

  void submit(const PendingSend& p) {
    ActiveSession& s = sessions_[p.session];
    const Turn& turn = s.plan.turns[s.next_turn];
    GenRequest req = turn.req;
    // The turn's new content; history (earlier turns and the model's replies) goes first.
    s.last_new.clear();
    s.last_new_text.clear();
    if (s.next_turn > 0 && !turn.tool_result.empty()) {
      s.last_new.push_back({"tool", turn.tool_result});
      s.last_new_text += turn.tool_result;
    }
    if (!turn.req.messages.empty()) {
      s.last_new.insert(s.last_new.end(), turn.req.messages.begin(), turn.req.messages.end());
    } else {
      s.last_new.push_back({"user", turn.req.prompt});
    }
    s.last_new_text += turn.req.prompt;
    if (s.next_turn > 0) {
      req.messages = s.history;
      req.messages.insert(req.messages.end(), s.last_new.begin(), s.last_new.end());
      req.prompt = s.history_text + s.last_new_text;
      req.input_tokens = -1;  // grew by the replies; the server's usage says how much
    }
    const bool multi_turn = s.plan.turns.size() > 1;
    const bool checked = opt_.check_output && (!req.response_format_json.empty() || !req.tools_json.empty());
    req.keep_text = req.keep_text || multi_turn || checked;
    req.warmup = warmup_;
    req.id = next_id_++;
    req.session_id = multi_turn ? s.plan.session_id : 0;
    req.turn = static_cast<std::int32_t>(s.next_turn);

    RequestRecord& rec = result_.records.emplace_back();
    rec.id = req.id;
    rec.type = req.type;
    rec.session_id = req.session_id;
    rec.turn = req.turn;
    rec.warmup = warmup_;
    rec.t_sched = p.t_sched;
    rec.input_tokens_requested = req.input_tokens;
    rec.max_tokens = req.max_tokens;
    if (s.next_turn > 0) {
      rec.wait_before_ns = turn.wait_before_ns;
      rec.wait_is_tool = turn.wait_is_tool;
    }
    in_flight_session_[&rec] = p.session;
    ++issued_;
    if (!warmup_) ++progress_.issued;
    target_.submit(req, rec);
    // Targets copy what they send; the request itself is kept only to check the reply.
    if (checked) to_check_.emplace(&rec, std::move(req));
  }

  void on_finished(RequestRecord& rec) {
    auto it = in_flight_session_.find(&rec);
    if (it == in_flight_session_.end()) return;  // not ours: a target bug, ignore safely
    const std::size_t idx = it->second;
    in_flight_session_.erase(it);
    if (auto c = to_check_.find(&rec); c != to_check_.end()) {
      if (rec.ok()) opt_.check_output(c->second, rec);
      to_check_.erase(c);
    }
    if (!rec.warmup) {
      ++progress_.done;
      if (!rec.ok()) ++progress_.failed;
      else {
        out_tokens_ += rec.output_tokens();
        if (rec.t_first >= 0) ttfts_.push_back(ns_to_ms(rec.t_first - rec.t_send));
      }
    }
    ActiveSession& s = sessions_[idx];
    const Nanos t_free = std::max({rec.t_done, rec.t_last, rec.t_send, Nanos{0}});
    ++s.next_turn;
    if (rec.ok() && s.next_turn < s.plan.turns.size() && issuing_) {
      s.history.insert(s.history.end(), s.last_new.begin(), s.last_new.end());
      s.history.push_back({"assistant", rec.output_text});
      s.history_text += s.last_new_text + rec.output_text;
      pending_.push({t_free + s.plan.turns[s.next_turn].wait_before_ns, seq_++, idx});
      return;
    }
    // Session over (finished, failed, or no more issuing): free its memory.
    s = ActiveSession{};
    if (opt_.mode == LoadMode::closed) start_next_session(t_free);
  }

  void interrupt() {
    interrupted_ = true;
    stop_issuing();
    target_.cancel_all();
    std::vector<RequestRecord*> finished;
    // cancel_all() guarantees every request comes back on the next polls; bound the
    // wait anyway so a broken target cannot hang Ctrl-C.
    for (int i = 0; i < 1000 && target_.in_flight() > 0; ++i) {
      finished.clear();
      target_.poll(clock_.now_ns() + kNsPerMs, finished);
      for (RequestRecord* rec : finished) on_finished(*rec);
    }
  }

  void report_progress(Nanos now) {
    if (!opt_.on_progress) return;
    LoadProgress p = progress_;
    p.in_flight = target_.in_flight();
    p.total = warmup_ ? opt_.warmup : opt_.requests;
    p.duration_s = warmup_ ? 0 : ns_to_s(opt_.duration_ns);
    p.elapsed_s = ns_to_s(now - phase_start_);
    p.output_tokens_per_s = p.elapsed_s > 0 ? out_tokens_ / p.elapsed_s : 0;
    if (!ttfts_.empty()) {
      std::vector<double> v = ttfts_;  // selection, not a sort: this runs on the load thread
      p.ttft_p50_ms = percentile_select(v, 50);
    }
    p.warming_up = warmup_;
    opt_.on_progress(p);
  }

  Target& target_;
  SessionSource& source_;
  const LoadOptions& opt_;
  LoadResult& result_;
  const Clock& clock_;

  std::deque<ActiveSession> sessions_;
  std::priority_queue<PendingSend, std::vector<PendingSend>, std::greater<>> pending_;
  std::unordered_map<const RequestRecord*, std::size_t> in_flight_session_;
  std::unordered_map<const RequestRecord*, GenRequest> to_check_;  // requests whose output is checked
  std::optional<ArrivalProcess> arrivals_;
  std::optional<SessionPlan> upcoming_;
  Nanos upcoming_time_ = 0;
  Nanos phase_start_ = 0, duration_end_ = kNever, next_progress_ = 0;
  std::size_t count_cap_ = 0, issued_ = 0;
  std::uint64_t seq_ = 0, next_id_ = 1;
  bool issuing_ = true, warmup_ = false, interrupted_ = false, exhausted_ = false;
  LoadProgress progress_;
  double out_tokens_ = 0;
  std::vector<double> ttfts_, lags_;
};

}  // namespace

LoadResult run_load(Target& target, SessionSource& source, const LoadOptions& opt) {
  if (opt.mode == LoadMode::closed && opt.concurrency < 1)
    throw InputError("--concurrency", "must be at least 1");
  if (opt.mode == LoadMode::open && !(opt.rate_rps > 0) && !(opt.use_trace_times && source.has_arrival_times()))
    throw InputError("--rate", "open loop needs a positive rate (or a trace with timestamps)");
  if (opt.requests == 0 && opt.duration_ns <= 0 && !source.has_arrival_times())
    throw InputError("--requests", "give --requests or --duration: a synthetic workload never ends by itself");

  LoadResult result;
  LoadLoop loop(target, source, opt, result);
  const Clock& clock = target.clock();
  if (opt.observer) opt.observer->loop_started();
  if (opt.warmup > 0) loop.run_phase(opt.warmup, 0, /*warmup=*/true);
  if (!loop.interrupted()) {
    if (opt.on_measure_start) opt.on_measure_start();
    result.origin = clock.now_ns();
    const Nanos cpu0 = thread_cpu_ns();
    loop.run_phase(opt.requests, opt.duration_ns, /*warmup=*/false);
    result.end = clock.now_ns();
    if (!clock.is_virtual() && result.end > result.origin)
      result.client_cpu_utilization = static_cast<double>(thread_cpu_ns() - cpu0) / static_cast<double>(result.end - result.origin);
    if (opt.on_measure_end) opt.on_measure_end();
  } else {
    result.origin = result.end = clock.now_ns();
  }
  if (opt.observer) opt.observer->loop_stopped();
  result.interrupted = loop.interrupted();
  result.source_exhausted = loop.exhausted();
  if (!loop.lags().empty()) {
    auto s = summarize(loop.lags());
    result.loop_lag_p99_ms = s.p99;
    result.loop_lag_max_ms = s.max;
  }
  return result;
}

std::vector<std::string> check_load_validity(const LoadResult& r, double max_send_lag_p99_ms, double max_client_cpu) {
  std::vector<std::string> reasons;
  std::vector<double> lag;
  for (const auto& rec : r.records)
    if (!rec.warmup && rec.t_send >= 0) lag.push_back(ns_to_ms(rec.t_send - rec.t_sched));
  if (!lag.empty()) {
    auto s = summarize(std::move(lag));
    if (s.p99 > max_send_lag_p99_ms)
      reasons.push_back(fmt::format("generator fell behind: send lag p99 {:.2f} ms > {:.2f} ms", s.p99, max_send_lag_p99_ms));
  }
  if (r.client_cpu_utilization > max_client_cpu)
    reasons.push_back(fmt::format("client CPU saturated: load thread at {:.0f}% of one core (> {:.0f}%)",
                                  100 * r.client_cpu_utilization, 100 * max_client_cpu));
  if (r.interrupted) reasons.push_back("interrupted before the planned end");
  return reasons;
}

}  // namespace inferscope
