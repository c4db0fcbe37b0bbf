// inferscope: one binary, one subcommand per file. This file is the single boundary
// where configuration errors become a message and exit code 2.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "inferscope/core/errors.h"
#include "inferscope/core/version.h"

int main(int argc, char** argv) {
  CLI::App app{"inferscope: LLM inference performance lab"};
  app.set_version_flag("--version", inferscope::kVersion);
  app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : inferscope::kExitInputError;
  } catch (const inferscope::InputError& e) {
    fmt::print(stderr, "inferscope: error: {}\n", e.what());
    return inferscope::kExitInputError;
  }
  return 0;
}
