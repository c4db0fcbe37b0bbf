#pragma once
// Small text helpers shared by the parsers and the HTTP code.
#include <cstddef>
#include <string_view>

namespace inferscope {

// Case-insensitive equality for ASCII letters only (HTTP header names, "NaN"/"Inf"):
// independent of the C locale, which protocol text must be.
constexpr bool ascii_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace inferscope
