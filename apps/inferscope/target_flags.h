#pragma once
// Flags that name an HTTP target (shared by `bench` and `run --url`), and the target
// they build.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "inferscope/client/http_target.h"
#include "inferscope/workload/tokenizer.h"

namespace inferscope::app {

struct TargetFlags {
  std::string url;
  std::string model;
  std::string api = "completions";
  std::string engine = "vllm";
  std::string api_key_env = "OPENAI_API_KEY";
  std::string api_key_file;
  double request_timeout_s = 300;
  bool insecure = false;
  std::string ca_file;
  std::string tokenizer;  // empty: sim tokenizer for prompts, 1 token per chunk for counting
};

void add_target_flags(CLI::App* cmd, TargetFlags& f, bool url_required);

// The tokenizer prompts are built with: --tokenizer if given, else the sim tokenizer.
std::unique_ptr<workload::Tokenizer> make_prompt_tokenizer(const TargetFlags& f);

// Builds the HTTP target. `counter` counts chunk tokens when the server streams no usage
// (null: one token per content chunk). Throws InputError for bad flags.
std::unique_ptr<Target> make_target_from_flags(const TargetFlags& f, const TokenCounter* counter);

// The manifest entries describing the target (never the API key).
nlohmann::json target_manifest(const TargetFlags& f);

}  // namespace inferscope::app
