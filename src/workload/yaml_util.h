#pragma once
// Private helpers for reading workload YAML with InputError(file, line, field).
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>

#include "inferscope/core/errors.h"

namespace inferscope::workload::detail {

inline int line_of(const YAML::Node& n) {
  const auto m = n.Mark();
  return m.line >= 0 ? m.line + 1 : 0;
}

[[noreturn]] inline void fail(const std::string& where, const YAML::Node& n, const std::string& field,
                              const std::string& msg) {
  throw InputError(where, line_of(n), field, msg);
}

inline double as_double(const YAML::Node& n, const std::string& where, const std::string& field) {
  if (!n.IsScalar()) fail(where, n, field, "expected a number");
  try {
    return n.as<double>();
  } catch (const YAML::Exception&) {
    fail(where, n, field, "expected a number, got '" + n.Scalar() + "'");
  }
}

inline std::int64_t as_int(const YAML::Node& n, const std::string& where, const std::string& field) {
  if (!n.IsScalar()) fail(where, n, field, "expected an integer");
  try {
    return n.as<std::int64_t>();
  } catch (const YAML::Exception&) {
    fail(where, n, field, "expected an integer, got '" + n.Scalar() + "'");
  }
}

inline std::string as_string(const YAML::Node& n, const std::string& where, const std::string& field) {
  if (!n.IsScalar()) fail(where, n, field, "expected a string");
  return n.Scalar();
}

inline bool as_bool(const YAML::Node& n, const std::string& where, const std::string& field) {
  if (!n.IsScalar()) fail(where, n, field, "expected true or false");
  try {
    return n.as<bool>();
  } catch (const YAML::Exception&) {
    fail(where, n, field, "expected true or false, got '" + n.Scalar() + "'");
  }
}

// Rejects keys not in `allowed` (a typo must not silently fall back to a default).
template <std::size_t N>
void check_keys(const YAML::Node& map, const std::string& where, const std::string& field,
                const char* const (&allowed)[N]) {
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    bool ok = false;
    for (const char* a : allowed) ok = ok || key == a;
    if (!ok) fail(where, kv.first, field.empty() ? key : field + "." + key, "unknown key");
  }
}

}  // namespace inferscope::workload::detail
