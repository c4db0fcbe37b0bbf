#include "inferscope/core/timeline.h"

#include <array>

namespace inferscope {
namespace {
constexpr std::array<std::string_view, kErrorClassCount> kNames = {
    "none",  "http_4xx", "http_5xx",    "rate_limited",       "reset",  "truncated",
    "timeout", "bad_payload", "server_error_event", "connect", "cancelled"};
}  // namespace

std::string_view to_string(ErrorClass e) { return kNames[static_cast<std::size_t>(e)]; }

std::optional<ErrorClass> error_class_from_string(std::string_view s) {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == s) return static_cast<ErrorClass>(i);
  return std::nullopt;
}

}  // namespace inferscope
