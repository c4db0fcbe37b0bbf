#pragma once
#include <fstream>
#include <sstream>
#include <string>

namespace inferscope::workload::testing {

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::string data_path(const std::string& name) { return std::string(INFERSCOPE_TEST_DATA) + "/workload/" + name; }
inline std::string shared_path(const std::string& name) { return std::string(INFERSCOPE_SHARED_DIR) + "/data/" + name; }

}  // namespace inferscope::workload::testing
