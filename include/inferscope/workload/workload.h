#pragma once
// The workload: what requests a run sends, built before the run from a seed.
//
// parse_workload() reads a spec (YAML file, inline YAML such as
// '{input: {dist: lognormal, median: 1024, sigma: 0.6}, output: 256}', or a trace file) into
// a WorkloadConfig value; make_session_source() turns it into the SessionSource the load
// generator pulls; describe() is its manifest entry; inspect() its traffic statistics.
// docs/workloads.md documents every key.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inferscope/core/session.h"
#include "inferscope/workload/distribution.h"
#include "inferscope/workload/tokenizer.h"
#include "inferscope/workload/trace.h"

namespace inferscope::workload {

// A request type: its label (every metric splits by it), share of traffic, and shape.
struct TypeSpec {
  std::string name;  // qa | long_doc | structured | tool_call, or any label (plain prompt)
  double weight = 1;
  std::optional<LengthDist> input, output;  // unset: the workload's, else the type's default
  std::string instruction;           // counted text after the marker (type default if empty)
  std::string response_format_json;  // structured: {"type":"json_schema",…}
  std::string tools_json;            // tool_call: [{"type":"function",…}]
  std::optional<bool> ignore_eos;    // unset: false for structured/tool_call, else the workload's
};

// Shared-prefix mode: a `share` fraction of requests start with one of `distinct` prefixes
// of exactly `tokens` tokens, so the prefix-cache hit rate is the user's choice
// (about share × tokens / mean input for the token hit rate).
struct PrefixSpec {
  std::int64_t tokens = 0;  // 0: off
  double share = 0;         // in [0, 1]
  std::int64_t distinct = 1;
};

// Multi-turn sessions (agents, chats). turns = 1 means plain requests.
struct SessionSpec {
  LengthDist turns = LengthDist::fixed_of(1);
  LengthDist followup_input = LengthDist::fixed_of(64);    // new user text per later turn
  double tool_fraction = 1.0;                              // later turns preceded by a tool call
  LengthDist tool_wait_ms = LengthDist::fixed_of(1000);    // tool execution time
  LengthDist tool_result_tokens = LengthDist::fixed_of(64);
  LengthDist think_ms = LengthDist::fixed_of(0);           // user think time otherwise
};

struct TraceSpec {
  std::string file;
  TraceFormat format = TraceFormat::inferscope;
  double speed = 1.0;           // 2.0 replays twice as fast
  Nanos window_start_ns = 0;    // trace time
  Nanos window_end_ns = -1;     // -1: to the end
  bool timestamps = true;       // false: lengths (and sessions) only, arrivals by the load generator
};

struct WorkloadConfig {
  std::string source = "fixed";  // the spec text or file it came from (for describe)
  LengthDist input = LengthDist::fixed_of(512);
  LengthDist output = LengthDist::fixed_of(128);
  bool input_set = false, output_set = false;  // given explicitly (they then beat type defaults)
  std::vector<TypeSpec> types;   // empty: one type "default" with input/output above
  PrefixSpec prefix;
  SessionSpec sessions;
  std::optional<TraceSpec> trace;
  std::shared_ptr<const Trace> trace_data;  // loaded and validated by parse_workload
  std::int64_t count = -1;   // sessions to produce; -1: unbounded (synthetic) or the whole trace
  bool ignore_eos = true;
  std::int64_t max_len = 131072;  // clamp for every length (the model's context)
};

struct WorkloadDefaults {
  std::int64_t input_len = 512;
  std::int64_t output_len = 128;
  std::int64_t max_len = 131072;
};

// --input-len N --output-len M without a spec: fixed lengths, one type, no sessions.
WorkloadConfig fixed_workload(std::int64_t input_len, std::int64_t output_len,
                              std::int64_t max_len = 131072);

// `spec_or_file`: an existing file (*.yaml / *.yml: a spec; anything else: a trace, format
// detected) or inline YAML. Keys not given take `d`. Throws InputError with file, line
// and field; loads and validates a referenced trace now, so a bad trace fails before a run.
WorkloadConfig parse_workload(const std::string& spec_or_file, const WorkloadDefaults& d = {});

// The sessions of `cfg` under `seed`, prompts built to exact token counts under `tok`
// (not owned; must outlive the source). Trace replay with timestamps sets arrival_ns.
// Throws InputError when `tok` cannot build exact prompts.
std::unique_ptr<SessionSource> make_session_source(const WorkloadConfig& cfg, std::uint64_t seed,
                                                   const Tokenizer& tok);

// Manifest entry: every parameter that shapes the traffic.
nlohmann::json describe(const WorkloadConfig& cfg);

// Traffic statistics (`inferscope workload inspect`).
struct WorkloadStats {
  std::int64_t count = 0;                // requests (turns)
  std::optional<double> duration_s;      // first to last arrival; nullopt without timestamps
  std::optional<double> rate_rps;        // count / duration
  std::optional<double> peak_rate_rpm;   // most arrivals in one calendar minute of the trace
  std::vector<double> input_tokens, output_tokens;
  double prefix_reuse_fraction = 0;      // prompt blocks seen earlier / all blocks (infinite cache)
  int block_tokens = 16;                 // block size used for prefix_reuse_fraction
};

// For a trace: its requests (after the window). For a synthetic spec: the first
// `synthetic_count` sessions (cfg.count if set), prompts tokenized with `tok`; later turns
// count the history the load generator would prepend (replies stand in as max_tokens of
// fresh tokens). 16-token blocks hashed by chain, or the trace's hash_ids when present.
WorkloadStats inspect(const WorkloadConfig& cfg, const Tokenizer& tok, std::uint64_t seed,
                      std::int64_t synthetic_count = 1000);
nlohmann::json to_json(const WorkloadStats& s);

// The input lengths a length scan should cover for this traffic: matrix_points() with the
// p95 of its input tokens (left out when there are none) and `model_max`.
std::vector<std::int64_t> input_matrix_points(const WorkloadStats& s, std::int64_t model_max);

}  // namespace inferscope::workload
