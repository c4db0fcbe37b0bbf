#include "inferscope/core/sim_tokenizer.h"

#include <array>

namespace inferscope {
namespace {
// 64 short English words: readable filler, all distinct so prefixes don't collide.
constexpr std::array<std::string_view, 64> kWords = {
    " the",   " model", " token",  " batch", " cache", " queue",  " prefill", " decode",
    " time",  " load",  " serve",  " user",  " reply", " text",   " block",   " page",
    " graph", " step",  " tensor", " layer", " head",  " weight", " memory",  " band",
    " width", " peak",  " flop",   " rate",  " burst", " trace",  " tail",    " median",
    " fast",  " slow",  " warm",   " cold",  " long",  " short",  " prompt",  " output",
    " input", " draft", " accept", " verify", " spec",  " quant", " scale",   " zero",
    " one",   " two",   " three",  " four",  " five",  " six",    " seven",   " eight",
    " nine",  " ten",   " alpha",  " beta",  " gamma", " delta",  " omega",   " sigma"};

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
}  // namespace

int SimTokenizer::count(std::string_view text) const {
  int n = 0;
  bool in_word = false;
  for (char c : text) {
    const bool sp = is_space(c);
    if (!sp && !in_word) ++n;
    in_word = !sp;
  }
  return n;
}

std::string_view SimTokenizer::filler_token(std::uint64_t seed, std::uint64_t i) {
  return kWords[mix(seed * 0x100000001b3ULL + i) % kWords.size()];
}

std::string SimTokenizer::filler(std::uint64_t seed, int n) {
  std::string out;
  out.reserve(static_cast<std::size_t>(n) * 7);
  for (int i = 0; i < n; ++i) out += filler_token(seed, static_cast<std::uint64_t>(i));
  return out;
}

std::int32_t SimTokenizer::token_id(std::string_view token) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (char c : token) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return static_cast<std::int32_t>(h % 32000);
}

}  // namespace inferscope
