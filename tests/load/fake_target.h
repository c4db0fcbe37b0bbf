#pragma once
// A virtual-time target for load-generator tests: every request takes `ttft` to its
// first token, then one token every `tpot`, and finishes at its last token.
#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "inferscope/core/target.h"

namespace inferscope::testing {

class FakeTarget final : public Target {
 public:
  FakeTarget(Nanos ttft, Nanos tpot) : ttft_(ttft), tpot_(tpot) {}
  const Clock& clock() const override { return clock_; }
  ManualClock& manual_clock() { return clock_; }

  void submit(const GenRequest& req, RequestRecord& rec) override {
    sent.push_back(req);
    const Nanos now = clock_.now_ns();
    rec.t_send = now;
    const int n = std::max(1, req.max_tokens);
    rec.t_headers = now;
    rec.t_first = now + ttft_;
    for (int i = 0; i < n; ++i) rec.chunks.push_back({rec.t_first + i * tpot_, 1});
    rec.t_last = rec.chunks.back().t_ns;
    rec.t_done = rec.t_last;
    rec.completion_tokens = n;
    rec.prompt_tokens = std::max(0, req.input_tokens);
    if (req.keep_text) rec.output_text = " reply" + std::to_string(req.id);
    if (fail_ids.count(req.id)) rec.error = ErrorClass::http_5xx;
    flight_.push_back(&rec);
    max_in_flight_seen = std::max(max_in_flight_seen, flight_.size());
  }

  void poll(Nanos deadline, std::vector<RequestRecord*>& finished) override {
    Nanos next = std::numeric_limits<Nanos>::max();
    for (auto* r : flight_) next = std::min(next, r->t_done);
    if (next > deadline) {
      clock_.set(std::max(clock_.now_ns(), deadline));
      return;
    }
    clock_.set(std::max(clock_.now_ns(), next));
    for (auto it = flight_.begin(); it != flight_.end();) {
      if ((*it)->t_done <= next) {
        finished.push_back(*it);
        it = flight_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::size_t in_flight() const override { return flight_.size(); }
  void cancel_all() override {
    for (auto* r : flight_) {
      r->error = ErrorClass::cancelled;
      r->t_done = clock_.now_ns();
    }
  }

  std::vector<GenRequest> sent;
  std::set<std::uint64_t> fail_ids;
  std::size_t max_in_flight_seen = 0;

 private:
  ManualClock clock_{1'000'000};
  Nanos ttft_, tpot_;
  std::vector<RequestRecord*> flight_;
};

}  // namespace inferscope::testing
