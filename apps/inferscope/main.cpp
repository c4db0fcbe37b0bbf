// inferscope: one binary, one subcommand per file (cmd_*.cpp). This file is the single
// boundary where configuration errors become a message and exit code 2.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <vector>

#include "command.h"
#include "inferscope/core/errors.h"
#include "inferscope/core/version.h"

namespace inferscope::app {
namespace {
std::vector<std::pair<int, RegisterFn>>& registry() {
  static std::vector<std::pair<int, RegisterFn>> r;
  return r;
}
int g_exit_code = 0;
}  // namespace

CommandRegistration::CommandRegistration(int order, RegisterFn fn) { registry().emplace_back(order, fn); }
void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

}  // namespace inferscope::app

int main(int argc, char** argv) {
  using namespace inferscope;
  CLI::App root{"inferscope: measure what users of an LLM serving endpoint feel, and why", "inferscope"};
  root.set_version_flag("--version", kVersion);
  root.require_subcommand(1);
  auto regs = app::registry();
  std::stable_sort(regs.begin(), regs.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [order, fn] : regs) fn(root);
  try {
    root.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = root.exit(e);
    return rc == 0 ? 0 : kExitInputError;
  } catch (const InputError& e) {
    fmt::print(stderr, "inferscope: error: {}\n", e.what());
    return kExitInputError;
  }
  return app::exit_code();
}
