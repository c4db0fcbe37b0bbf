#pragma once
// Trace readers: recorded traffic turned into one value type. Readers validate every line
// and throw InputError(file, line, field, …) on the first bad one, so nothing runs on a
// half-read trace. Pure functions: no I/O except read_trace()'s one read of the file.
//
// Formats (docs/workloads.md has examples):
//   azure     Azure LLM inference trace CSV (2023): TIMESTAMP,ContextTokens,GeneratedTokens
//   mooncake  Mooncake JSONL: {"timestamp": ms, "input_length", "output_length", "hash_ids"}
//   burstgpt  BurstGPT CSV: Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
//   sharegpt  ShareGPT JSON: [{"id", "conversations": [{"from": "human"|"gpt", "value"}…]}…]
//   inferscope inferscope JSONL (see TraceRequest for the fields)
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/core/clock.h"

namespace inferscope::workload {

enum class TraceFormat { azure, mooncake, burstgpt, sharegpt, inferscope };

// One recorded request. Lengths are tokens; -1 means "from the text" (ShareGPT).
struct TraceRequest {
  std::optional<Nanos> t_ns;          // arrival, offset from the trace's first request
  std::int64_t input_tokens = -1;
  std::int64_t output_tokens = -1;
  std::vector<std::uint64_t> hash_ids;  // reuse blocks of Trace::block_tokens tokens each
  std::string prompt;                 // real prompt text when the trace has it
  std::string reply;                  // recorded reply (ShareGPT): output length from its tokens
  std::string type;                   // request type label; empty: the workload's default
  std::string session;                // session key; requests with one key form a session
  std::int32_t turn = 0;              // order within the session
  Nanos wait_ns = 0;                  // wait before this turn (replayed tool / think time)
  bool wait_is_tool = false;
  int line = 0;                       // 1-based source line (for messages)
};

struct Trace {
  std::string where;  // file name
  TraceFormat format = TraceFormat::inferscope;
  int block_tokens = 512;  // tokens per hash id (Mooncake's block size)
  std::vector<TraceRequest> requests;  // in file order; t_ns non-decreasing when present
};

std::string_view to_string(TraceFormat f);
// Accepts the names above; nullopt otherwise.
std::optional<TraceFormat> trace_format_from_string(std::string_view s);
// From the file name and its first bytes: *.csv with "ContextTokens" -> azure, with
// "Request tokens" -> burstgpt; *.jsonl with "hash_ids" -> mooncake, else inferscope;
// *.json -> sharegpt. nullopt when undecidable.
std::optional<TraceFormat> detect_trace_format(std::string_view path, std::string_view head);

// Parses `content` (the whole file). Throws InputError(where, line, field, msg).
Trace parse_trace(std::string_view content, TraceFormat fmt, const std::string& where);
// Reads and parses a file; `fmt` nullopt: detect. Throws InputError.
Trace read_trace(const std::string& path, std::optional<TraceFormat> fmt = std::nullopt);

// Keeps requests with trace time in [start, end) (end < 0: open) and rescales arrival
// offsets so the first kept request's window starts at 0: t' = (t - start) / speed.
// speed > 0. Requests without a timestamp are kept as they are.
void apply_time_window(Trace& trace, double speed, Nanos start_ns, Nanos end_ns);

}  // namespace inferscope::workload
