#pragma once
// Counts tokens in text, for the chunks of a stream whose server does not report usage.
// Implementations must be thread-safe for count() (const, no shared mutable state).
#include <string_view>

namespace inferscope {

class TokenCounter {
 public:
  virtual ~TokenCounter() = default;
  virtual int count(std::string_view text) const = 0;
};

}  // namespace inferscope
