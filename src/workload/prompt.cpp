#include "inferscope/workload/prompt.h"

#include <algorithm>
#include <array>

#include "inferscope/core/errors.h"
#include "inferscope/workload/rng.h"

namespace inferscope::workload {
namespace {

// Common English words; those that are one token (with a leading space) under the
// tokenizer form its word set. Order matters: the first 2^k single-token words are used.
constexpr std::array<std::string_view, 176> kCandidates = {
    "the",    "model",  "time",   "load",   "user",   "text",   "block",  "page",   "step",
    "layer",  "head",   "weight", "memory", "peak",   "rate",   "trace",  "tail",   "fast",
    "slow",   "warm",   "cold",   "long",   "short",  "input",  "output", "scale",  "zero",
    "one",    "two",    "three",  "four",   "five",   "six",    "seven",  "eight",  "nine",
    "ten",    "alpha",  "beta",   "gamma",  "delta",  "water",  "river",  "stone",  "light",
    "house",  "green",  "blue",   "red",    "black",  "white",  "small",  "large",  "early",
    "late",   "north",  "south",  "east",   "west",   "city",   "road",   "field",  "world",
    "night",  "day",    "year",   "week",   "hour",   "game",   "book",   "paper",  "story",
    "music",  "food",   "table",  "chair",  "door",   "window", "glass",  "metal",  "wood",
    "fire",   "earth",  "air",    "cloud",  "rain",   "snow",   "wind",   "tree",   "flower",
    "bird",   "fish",   "horse",  "dog",    "cat",    "king",   "queen",  "power",  "energy",
    "money",  "market", "price",  "value",  "number", "point",  "line",   "group",  "system",
    "program", "data",  "file",   "code",   "test",   "result", "answer", "question", "reason",
    "state",  "place",  "school", "family", "friend", "child",  "woman",  "man",    "people",
    "hand",   "eye",    "face",   "body",   "heart",  "mind",   "voice",  "word",   "name",
    "life",   "work",   "part",   "case",   "fact",   "idea",   "plan",   "order",  "level",
    "form",   "view",   "sense",  "side",   "end",    "start",  "top",    "back",   "front",
    "high",   "low",    "old",    "new",    "good",   "great",  "little", "big",    "open",
    "close",  "free",   "true",   "full",   "clear",  "simple", "real",   "best",   "first",
    "last",   "next",   "other",  "same",   "own"};

constexpr int kMarkerBits = 40;  // 2^40 distinct markers per seed

}  // namespace

PromptSynth::PromptSynth(const Tokenizer& tok, std::uint64_t seed) : tok_(tok), seed_(seed) {
  std::vector<std::string> cand;
  for (auto w : kCandidates) cand.push_back(" " + std::string(w));
  std::vector<bool> single(cand.size(), false);
  // Counting a run of words at once and splitting only where the count exceeds the number
  // of words keeps this to a few calls: a server tokenizer pays one HTTP request per call.
  auto check = [&](auto&& self, std::size_t lo, std::size_t hi) -> void {
    std::string run;
    for (std::size_t i = lo; i < hi; ++i) run += cand[i];
    if (tok.count(run) == static_cast<int>(hi - lo)) {
      std::fill(single.begin() + static_cast<std::ptrdiff_t>(lo), single.begin() + static_cast<std::ptrdiff_t>(hi), true);
    } else if (hi - lo > 1) {
      self(self, lo, lo + (hi - lo) / 2);
      self(self, lo + (hi - lo) / 2, hi);
    }
  };
  check(check, 0, cand.size());
  std::vector<std::string> ok;
  for (std::size_t i = 0; i < cand.size(); ++i)
    if (single[i]) ok.push_back(std::move(cand[i]));
  std::size_t n = 128;
  while (n > ok.size()) n /= 2;
  if (n < 16)
    throw InputError(tok.name(), 0, "tokenizer",
                     "only " + std::to_string(ok.size()) +
                         " common words are single tokens; cannot build exact-length prompts");
  ok.resize(n);
  words_ = std::move(ok);
  while ((std::size_t{1} << bits_) < n) ++bits_;
  marker_words_ = (kMarkerBits + bits_ - 1) / bits_;
}

std::string PromptSynth::filler(std::uint64_t stream, int n) const {
  std::string out;
  const std::uint64_t s = derive_seed(seed_, stream);
  const std::uint64_t mask = words_.size() - 1;
  for (int i = 0; i < n; ++i) out += words_[mix64(s + static_cast<std::uint64_t>(i)) & mask];
  return out;
}

std::string PromptSynth::marker(std::uint64_t index, int max_tokens) const {
  // A bijection on B bits (add, multiply by odd, xorshift, multiply by odd): distinct
  // indices give distinct markers, and neighbours differ in their first word.
  const int B = marker_words_ * bits_;
  const std::uint64_t mask = B >= 64 ? ~0ULL : (1ULL << B) - 1;
  std::uint64_t x = (index + derive_seed(seed_, 0x6d61726bULL)) & mask;
  x = (x * 0x9e3779b97f4a7c15ULL) & mask;
  x ^= x >> (B / 2);
  x = (x * 0xd6e8feb86659fd93ULL) & mask;
  std::string out;
  const int n = std::min(marker_words_, max_tokens);
  const std::uint64_t wmask = words_.size() - 1;
  for (int i = 0; i < n; ++i) out += words_[(x >> (i * bits_)) & wmask];
  return out;
}

PromptSynth::Built PromptSynth::build(std::string_view head, std::uint64_t index,
                                      std::string_view instruction, int tokens) const {
  const int head_n = head.empty() ? 0 : tok_.count(head);
  const int room = std::max(0, tokens - head_n);
  const std::string mark = marker(index, room);
  std::string base(head);
  base += mark;
  int base_n = head_n + static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(marker_words_),
                                                               static_cast<std::size_t>(room)));
  if (!instruction.empty()) {
    std::string with = base;
    with += instruction;
    const int with_n = tok_.count(with);
    if (with_n <= tokens) {
      base = std::move(with);
      base_n = with_n;
    }
  }
  // The filler is additive (one token per word, each starting with a space), so one
  // measurement fixes n; the loop only absorbs a boundary merge a tokenizer might make.
  const std::uint64_t stream = 0x66696c6cULL ^ (index * 0x100000001b3ULL);
  int n = std::max(0, tokens - base_n);
  Built b;
  for (int attempt = 0; attempt < 4; ++attempt) {
    b.text = base + filler(stream, n);
    b.tokens = tok_.count(b.text);
    if (b.tokens == tokens || (n == 0 && b.tokens > tokens)) return b;
    n = std::max(0, n + tokens - b.tokens);
  }
  throw InputError(tok_.name(), 0, "tokenizer",
                   "cannot build a prompt of exactly " + std::to_string(tokens) + " tokens (got " +
                       std::to_string(b.tokens) + ")");
}

std::string PromptSynth::block(std::uint64_t block_id, int tokens) const {
  return filler(0x626c6f636bULL ^ mix64(block_id), tokens);
}

}  // namespace inferscope::workload
