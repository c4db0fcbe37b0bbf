#pragma once
// The request a workload produces and a Target sends. Value type, no behaviour.
#include <cstdint>
#include <string>
#include <vector>

namespace inferscope {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant", "tool"
  std::string content;
};

struct GenRequest {
  std::uint64_t id = 0;              // unique within a run, assigned by the schedule
  std::string type = "default";      // request type label; every metric splits by it
  std::string prompt;                // completion-style prompt text
  std::vector<ChatMessage> messages; // chat history; empty => one user message = prompt
  std::int32_t input_tokens = -1;    // tokens the workload built the prompt to (-1 unknown)
  std::int32_t max_tokens = 128;     // output cap sent to the server
  bool ignore_eos = true;            // ask the server to generate exactly max_tokens
  std::int32_t min_tokens = -1;      // -1: not sent
  std::string response_format_json; // raw JSON for `response_format`; empty: none
  std::string tools_json;           // raw JSON array for `tools`; empty: none
  std::uint64_t session_id = 0;     // multi-turn session; 0 for single requests
  std::int32_t turn = 0;            // 0-based turn within the session
  bool warmup = false;              // recorded, excluded from statistics
  bool keep_text = false;           // keep the generated text in the record
};

}  // namespace inferscope
