#pragma once
// The simulated engine's tokenizer, shared by the simulator (to emit text whose token
// count equals the tokens it generated) and by workloads (to build prompts of exact
// length for it). A token is a maximal run of non-space bytes together with the spaces
// before it: " alpha", " beta" … so counting is a word count and any concatenation of
// tokens that each start with a space re-tokenizes to the same count.
#include <cstdint>
#include <string>
#include <string_view>

#include "inferscope/core/token_counter.h"

namespace inferscope {

class SimTokenizer final : public TokenCounter {
 public:
  int count(std::string_view text) const override;
  // The text of token `i` of a deterministic filler sequence seeded by `seed`: a space
  // followed by a word from a fixed vocabulary. Appending `n` of them yields exactly n
  // tokens.
  static std::string_view filler_token(std::uint64_t seed, std::uint64_t i);
  static std::string filler(std::uint64_t seed, int n);
  // Stable token id of a token's text (hash into a 32k vocabulary), for /tokenize.
  static std::int32_t token_id(std::string_view token);
};

}  // namespace inferscope
