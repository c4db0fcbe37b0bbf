#pragma once
// Prompt text of an exact token count under a given tokenizer.
//
// Text is built from a "word set": 2^k common English words that each encode, with their
// leading space, to exactly one token under the tokenizer, so appending words adds tokens
// one for one (every supported tokenizer splits before a space). Each prompt starts with a
// marker of `marker_words` words spelling a bijective hash of (seed, request index): two
// requests never share their first block by accident, so a prefix cache only hits where
// the workload says so. The count is then verified through the tokenizer and corrected;
// a prompt that cannot be made exact throws (a tokenizer this scheme does not suit).
//
// Threading: const methods are safe concurrently when the tokenizer's are.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/workload/tokenizer.h"

namespace inferscope::workload {

class PromptSynth {
 public:
  // `tok` is not owned and must outlive the synth. Throws InputError if the tokenizer has
  // fewer than 16 single-token words from the candidate list.
  PromptSynth(const Tokenizer& tok, std::uint64_t seed);

  const std::vector<std::string>& words() const { return words_; }  // each " word"
  int marker_words() const { return marker_words_; }

  // Deterministic filler of exactly `n` tokens (n words) from stream `stream`: the same
  // (stream, n) gives the same text, and a shorter one is a prefix of a longer one.
  std::string filler(std::uint64_t stream, int n) const;

  // The unique marker for request `index` (marker_words() words; fewer if `max_tokens` is
  // smaller).
  std::string marker(std::uint64_t index, int max_tokens) const;

  // `head` (counted, may be empty: a shared prefix), then the marker of `index`, then
  // `instruction` (may be empty), then filler, so the whole has exactly `tokens` tokens.
  // When `tokens` is smaller than head + marker + instruction, the instruction is dropped,
  // then the marker shortened; the head is never cut (the result is then longer: its count
  // is returned in `actual`).
  struct Built {
    std::string text;
    int tokens = 0;  // the verified count
  };
  Built build(std::string_view head, std::uint64_t index, std::string_view instruction,
              int tokens) const;

  // Exactly `tokens` tokens of text for reuse block `block_id` (Mooncake hash ids): the
  // same id always gives the same text, a shorter block is a prefix of the full one.
  std::string block(std::uint64_t block_id, int tokens) const;

  const Tokenizer& tokenizer() const { return tok_; }

 private:
  const Tokenizer& tok_;
  std::uint64_t seed_;
  std::vector<std::string> words_;
  int bits_ = 0;          // log2(words_.size())
  int marker_words_ = 0;  // ceil(40 / bits_): 2^40 distinct markers
};

}  // namespace inferscope::workload
