#include "target_flags.h"

#include "inferscope/core/errors.h"

namespace inferscope::app {

void add_target_flags(CLI::App* cmd, TargetFlags& f, bool url_required) {
  auto* url = cmd->add_option("--url", f.url, "Endpoint base URL, e.g. http://127.0.0.1:8000");
  if (url_required) url->required();
  cmd->add_option("--model", f.model, "Model name sent in each request");
  cmd->add_option("--api", f.api, "completions | chat | sglang | llamacpp | tgi")->capture_default_str();
  cmd->add_option("--engine", f.engine, "Engine behind the OpenAI routes: vllm | sglang | trtllm | llamacpp | ollama | tgi | generic")
      ->capture_default_str();
  cmd->add_option("--api-key-env", f.api_key_env, "Environment variable holding the API key")->capture_default_str();
  cmd->add_option("--api-key-file", f.api_key_file, "File whose first line is the API key");
  cmd->add_option("--request-timeout", f.request_timeout_s, "Seconds without a byte before a request times out")
      ->capture_default_str();
  cmd->add_flag("--insecure", f.insecure, "Do not verify the server's TLS certificate");
  cmd->add_option("--ca-file", f.ca_file, "Extra CA bundle for TLS verification");
  cmd->add_option("--tokenizer", f.tokenizer,
                  "Tokenizer for exact prompt lengths and chunk counts: tokenizer.json, tokenizer.model, a folder, "
                  "a URL, or the server's /tokenize URL");
}

std::unique_ptr<workload::Tokenizer> make_prompt_tokenizer(const TargetFlags& f) {
  workload::TokenizerLoadOptions opt;
  opt.post = [](const std::string& url, const std::string& body) -> std::expected<workload::HttpReply, std::string> {
    auto r = http_post_json(url, body);
    if (r.status == 0) return std::unexpected(r.error);
    return workload::HttpReply{r.status, r.body};
  };
  opt.get = [](const std::string& url) -> std::expected<workload::HttpReply, std::string> {
    auto r = http_get(url);
    if (r.status == 0) return std::unexpected(r.error);
    return workload::HttpReply{r.status, r.body};
  };
  return workload::load_tokenizer(f.tokenizer.empty() ? "sim" : f.tokenizer, opt);
}

std::unique_ptr<Target> make_target_from_flags(const TargetFlags& f, const TokenCounter* counter) {
  if (f.url.empty()) throw InputError("--url", "required");
  if (f.url.rfind("http://", 0) != 0 && f.url.rfind("https://", 0) != 0)
    throw InputError("--url", 0, f.url, "must start with http:// or https://");
  if (f.model.empty()) throw InputError("--model", "required: the model name the server serves");
  if (!(f.request_timeout_s > 0)) throw InputError("--request-timeout", "must be positive");
  HttpTargetOptions o;
  o.base_url = f.url;
  while (!o.base_url.empty() && o.base_url.back() == '/') o.base_url.pop_back();
  o.api = api_kind_from_string(f.api);
  o.protocol.model = f.model;
  o.protocol.flavor = engine_flavor_from_string(f.engine);
  o.api_key = load_api_key(f.api_key_env, f.api_key_file);
  o.idle_timeout_ns = s_to_ns(f.request_timeout_s);
  o.verify_tls = !f.insecure;
  o.ca_file = f.ca_file;
  o.counter = counter;
  return make_http_target(o, SteadyClock::instance());
}

nlohmann::json target_manifest(const TargetFlags& f) {
  // The URL without userinfo or query: neither may carry a credential into a report.
  std::string url = f.url;
  if (auto at = url.find('@'); at != std::string::npos) {
    auto scheme = url.find("://");
    if (scheme != std::string::npos && at > scheme) url = url.substr(0, scheme + 3) + url.substr(at + 1);
  }
  if (auto q = url.find('?'); q != std::string::npos) url.resize(q);
  return {{"url", url}, {"api", f.api}, {"engine", f.engine}, {"model", f.model},
          {"tls_verify", !f.insecure}, {"request_timeout_s", f.request_timeout_s}};
}

}  // namespace inferscope::app
