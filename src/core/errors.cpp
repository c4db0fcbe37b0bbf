#include "inferscope/core/errors.h"

#include <fmt/format.h>

namespace inferscope {
namespace {
std::string compose(const std::string& where, int line, const std::string& field,
                    const std::string& message) {
  std::string out = where;
  if (line > 0) out += fmt::format(":{}", line);
  if (!field.empty()) out += fmt::format(": field '{}'", field);
  out += ": " + message;
  return out;
}
}  // namespace

InputError::InputError(std::string where, int line, std::string field, const std::string& message)
    : std::runtime_error(compose(where, line, field, message)),
      where_(std::move(where)),
      line_(line),
      field_(std::move(field)) {}

}  // namespace inferscope
