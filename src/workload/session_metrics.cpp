#include "inferscope/workload/session_metrics.h"

#include <algorithm>
#include <map>

#include "inferscope/stats/summary.h"

namespace inferscope::workload {

std::vector<SessionTiming> session_timings(std::span<const RequestRecord> records) {
  std::map<std::uint64_t, std::vector<const RequestRecord*>> by_session;
  for (const auto& r : records)
    if (r.session_id != 0 && !r.warmup) by_session[r.session_id].push_back(&r);
  std::vector<SessionTiming> out;
  for (auto& [sid, recs] : by_session) {
    std::sort(recs.begin(), recs.end(), [](auto* a, auto* b) { return a->turn < b->turn; });
    SessionTiming s;
    s.session_id = sid;
    s.turns = static_cast<std::int32_t>(recs.size());
    const RequestRecord* prev = nullptr;
    for (std::size_t k = 0; k < recs.size(); ++k) {
      const RequestRecord& r = *recs[k];
      if (r.turn != static_cast<std::int32_t>(k) || !r.ok() || r.t_send < 0 || r.t_last < r.t_send) {
        s.ok = false;
        break;
      }
      s.model_ns += r.t_last - r.t_send;
      if (prev) {
        const Nanos gap = r.t_send - prev->t_last;
        (r.wait_is_tool ? s.tool_ns : s.think_ns) += gap;
      }
      s.e2e_ns = r.t_last - recs.front()->t_send;
      prev = &r;
    }
    out.push_back(s);
  }
  return out;
}

nlohmann::json session_summary_json(std::span<const SessionTiming> timings) {
  std::vector<double> e2e, model, tool, think, share;
  for (const auto& s : timings) {
    if (!s.ok) continue;
    e2e.push_back(ns_to_ms(s.e2e_ns));
    model.push_back(ns_to_ms(s.model_ns));
    tool.push_back(ns_to_ms(s.tool_ns));
    think.push_back(ns_to_ms(s.think_ns));
    if (s.e2e_ns > 0) share.push_back(static_cast<double>(s.tool_ns) / static_cast<double>(s.e2e_ns));
  }
  nlohmann::json j;
  j["sessions"] = timings.size();
  j["ok"] = e2e.size();
  j["e2e_ms"] = to_json(summarize(e2e));
  j["model_ms"] = to_json(summarize(model));
  j["tool_ms"] = to_json(summarize(tool));
  j["think_ms"] = to_json(summarize(think));
  j["tool_share"] = share.empty() ? nlohmann::json(nullptr) : nlohmann::json(summarize(share).mean);
  return j;
}

}  // namespace inferscope::workload
