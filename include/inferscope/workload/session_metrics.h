#pragma once
// Per-session timing of multi-turn (agent) sessions from finished records. Pure function.
//
// For a session with turns 0..n-1 (records grouped by session_id, ordered by turn):
//   e2e   = t_last(last turn) - t_send(turn 0)
//   model = sum over turns of (t_last - t_send)          the model's share
//   tool  = sum over turns k > 0 with wait_is_tool of (t_send(k) - t_last(k-1))
//   think = the same gaps for turns whose wait is not a tool (user time, generator lag)
// so e2e = model + tool + think exactly. A session with a failed or missing turn is
// reported with ok = false and its times over the turns that completed in order.
#include <cstdint>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "inferscope/core/timeline.h"

namespace inferscope::workload {

struct SessionTiming {
  std::uint64_t session_id = 0;
  std::int32_t turns = 0;      // records seen for the session
  bool ok = true;              // every turn completed and turns are 0..n-1 without gaps
  Nanos e2e_ns = 0, model_ns = 0, tool_ns = 0, think_ns = 0;
};

// Records with session_id 0 (single requests) and warm-up records are ignored. Result is
// ordered by session_id.
std::vector<SessionTiming> session_timings(std::span<const RequestRecord> records);

// {"sessions": n, "ok": n_ok, "e2e_ms": Summary, "model_ms", "tool_ms", "think_ms",
//  "tool_share": mean of tool/e2e over ok sessions} over the ok sessions.
nlohmann::json session_summary_json(std::span<const SessionTiming> timings);

}  // namespace inferscope::workload
