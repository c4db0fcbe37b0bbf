#pragma once
// Errors that reach the user. Configuration and input errors are exceptions (thrown while
// loading, before anything runs) and are mapped to a message and exit code 2 at one
// boundary in apps/. Expected runtime failures (a server error, a broken stream) are
// values in RequestRecord, never exceptions.
#include <stdexcept>
#include <string>

namespace inferscope {

// Bad user input: a file, a flag, a profile. `where` names the file (or flag), `line` the
// 1-based line (0 when not applicable) and `field` the offending key.
class InputError : public std::runtime_error {
 public:
  InputError(std::string where, int line, std::string field, const std::string& message);
  InputError(std::string where, const std::string& message)
      : InputError(std::move(where), 0, "", message) {}
  const std::string& where() const { return where_; }
  int line() const { return line_; }
  const std::string& field() const { return field_; }

 private:
  std::string where_;
  int line_;
  std::string field_;
};

inline constexpr int kExitInputError = 2;

}  // namespace inferscope
