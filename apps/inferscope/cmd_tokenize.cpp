// `inferscope tokenize --tokenizer FILE|URL (TEXT... | --file F)`: token ids, one line of
// space-separated ids per input, so a tokenizer can be checked against the server's.
#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "command.h"
#include "inferscope/core/errors.h"
#include "inferscope/workload/tokenizer.h"

namespace inferscope::app {
namespace {

struct TokenizeCommand {
  std::string tokenizer;
  std::vector<std::string> texts;
  std::string file;
  bool lines = false;
  bool count = false;

  void run() const {
    if (texts.empty() == file.empty()) throw InputError("tokenize", "give either TEXT arguments or --file");
    std::vector<std::string> inputs = texts;
    if (!file.empty()) {
      std::ifstream f(file, std::ios::binary);
      if (!f) throw InputError(file, "cannot read file");
      std::stringstream ss;
      ss << f.rdbuf();
      if (lines) {
        std::string l;
        while (std::getline(ss, l)) inputs.push_back(l);
      } else {
        inputs.push_back(ss.str());
      }
    }
    const auto tok = workload::load_tokenizer(tokenizer);
    for (const auto& t : inputs) {
      const auto ids = tok->encode(t);
      if (count) {
        fmt::print("{}\n", ids.size());
      } else {
        fmt::print("{}\n", fmt::join(ids, " "));
      }
    }
  }
};

void register_tokenize(CLI::App& root) {
  auto cmd = std::make_shared<TokenizeCommand>();
  auto* c = root.add_subcommand("tokenize", "Print token ids of text under a tokenizer (one line per input)");
  c->add_option("--tokenizer", cmd->tokenizer,
                "tokenizer.json, tokenizer.model, a folder holding one, a server URL (/tokenize), or 'sim'")
      ->required();
  c->add_option("text", cmd->texts, "Texts to tokenize, one output line each");
  c->add_option("--file", cmd->file, "Tokenize this file's content (one input)");
  c->add_flag("--lines", cmd->lines, "With --file: each line is one input");
  c->add_flag("--count", cmd->count, "Print the number of tokens instead of the ids");
  c->callback([cmd] { cmd->run(); });
}

const CommandRegistration reg{71, &register_tokenize};

}  // namespace
}  // namespace inferscope::app
