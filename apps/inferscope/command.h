#pragma once
// Subcommand registry. Each subcommand lives in its own cmd_<name>.cpp and registers
// itself with a static CommandRegistration; main() adds them to the CLI in `order`.
// A command's callback runs inside CLI::App::parse(); it throws InputError for bad
// input (main maps it to exit code 2) and reports any other non-zero status through
// set_exit_code().
#include <CLI/CLI.hpp>

namespace inferscope::app {

using RegisterFn = void (*)(CLI::App& root);

struct CommandRegistration {
  CommandRegistration(int order, RegisterFn fn);
};

void set_exit_code(int code);
int exit_code();

}  // namespace inferscope::app
