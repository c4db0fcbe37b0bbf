#pragma once
// What a workload hands the load generator: sessions of one or more turns. A single
// request is a session of one turn. Value types, no behaviour.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "inferscope/core/clock.h"
#include "inferscope/core/request.h"

namespace inferscope {

struct Turn {
  // The turn's own new content. For turn k > 0 the load generator prepends the session's
  // history (every earlier turn's messages and the model's actual replies), so the
  // prompt carries the conversation and a prefix cache sees real reuse.
  GenRequest req;
  // Wait between the previous turn's completion and this turn's send (tool execution or
  // user think time). Ignored for turn 0.
  Nanos wait_before_ns = 0;
  bool wait_is_tool = false;  // the wait is tool time (counts as tool time per session)
  // Text standing for the tool's result, appended to the history as a "tool" message
  // (chat) or plain text (completions) before this turn's content.
  std::string tool_result;
};

struct SessionPlan {
  std::uint64_t session_id = 0;       // 1-based; 0 is reserved for "no session"
  std::optional<Nanos> arrival_ns;    // offset from run start (trace replay); else the
                                      // load generator's arrival process decides
  std::vector<Turn> turns;
};

// Produces sessions in a fixed order, deterministic for a seed: the i-th call returns
// the same session on every run. Called only from the load-loop thread.
class SessionSource {
 public:
  virtual ~SessionSource() = default;
  // nullopt when the source is exhausted (a trace's end); synthetic sources never end.
  virtual std::optional<SessionPlan> next() = 0;
  // True when sessions carry arrival_ns (trace replay with timestamps).
  virtual bool has_arrival_times() const { return false; }
};

}  // namespace inferscope
