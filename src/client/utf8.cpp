#include "client/utf8.h"

#include <cstdint>

namespace inferscope::utf8 {
namespace {

// Expected sequence length for a lead byte, 0 when the byte cannot start a character.
int sequence_length(unsigned char b) {
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return 2;
  if (b >= 0xE0 && b <= 0xEF) return 3;
  if (b >= 0xF0 && b <= 0xF4) return 4;
  return 0;
}

// Valid range of the second byte for a lead byte (RFC 3629 table: rules out overlongs,
// surrogates and code points past U+10FFFF); later bytes are plain 80..BF.
bool second_ok(unsigned char lead, unsigned char b) {
  switch (lead) {
    case 0xE0: return b >= 0xA0 && b <= 0xBF;
    case 0xED: return b >= 0x80 && b <= 0x9F;
    case 0xF0: return b >= 0x90 && b <= 0xBF;
    case 0xF4: return b >= 0x80 && b <= 0x8F;
    default: return b >= 0x80 && b <= 0xBF;
  }
}

bool cont(unsigned char b) { return b >= 0x80 && b <= 0xBF; }

// Length of the well-formed character at s[i], or 0 when it is not one (including a
// truncated one at the end of s).
std::size_t char_at(std::string_view s, std::size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  const int n = sequence_length(lead);
  if (n == 0 || i + static_cast<std::size_t>(n) > s.size()) return 0;
  if (n == 1) return 1;
  if (!second_ok(lead, static_cast<unsigned char>(s[i + 1]))) return 0;
  for (int k = 2; k < n; ++k)
    if (!cont(static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]))) return 0;
  return static_cast<std::size_t>(n);
}

constexpr unsigned char kEsc0 = 0xF4, kEsc1 = 0x8F;  // U+10FF80..U+10FFFF prefix

}  // namespace

std::size_t incomplete_tail(std::string_view s) {
  // Walk back over at most 3 continuation bytes to the candidate lead byte.
  const std::size_t n = s.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto b = static_cast<unsigned char>(s[n - back]);
    if (cont(b)) continue;
    const int need = sequence_length(b);
    if (need <= 1 || static_cast<std::size_t>(need) <= back) return 0;
    // The bytes present must be a valid prefix, else they never complete.
    if (back >= 2 && !second_ok(b, static_cast<unsigned char>(s[n - back + 1]))) return 0;
    return back;
  }
  return 0;
}

bool valid(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = char_at(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void escape_invalid(std::string_view in, std::string& out) {
  std::size_t i = 0;
  while (i < in.size()) {
    const std::size_t n = static_cast<unsigned char>(in[i]) < 0x80 ? 1 : char_at(in, i);
    if (n > 0) {
      out.append(in.substr(i, n));
      i += n;
      continue;
    }
    const auto b = static_cast<unsigned char>(in[i]);  // 0x80..0xFF
    out.push_back(static_cast<char>(kEsc0));
    out.push_back(static_cast<char>(kEsc1));
    out.push_back(static_cast<char>(0xBC | (b >> 6)));    // BE or BF
    out.push_back(static_cast<char>(0x80 | (b & 0x3F)));
    ++i;
  }
}

void restore_bytes(std::string_view in, std::string& out) {
  std::size_t i = 0;
  while (i < in.size()) {
    if (i + 3 < in.size() && static_cast<unsigned char>(in[i]) == kEsc0 &&
        static_cast<unsigned char>(in[i + 1]) == kEsc1) {
      const auto b2 = static_cast<unsigned char>(in[i + 2]);
      if (b2 == 0xBE || b2 == 0xBF) {
        const auto b3 = static_cast<unsigned char>(in[i + 3]);
        out.push_back(static_cast<char>(((b2 & 0x03) << 6) | (b3 & 0x3F)));
        i += 4;
        continue;
      }
    }
    out.push_back(in[i]);
    ++i;
  }
}

}  // namespace inferscope::utf8
