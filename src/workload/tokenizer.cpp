#include "inferscope/workload/tokenizer.h"

#include <sentencepiece_processor.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "inferscope/core/errors.h"
#include "inferscope/core/sim_tokenizer.h"

#if INFERSCOPE_WORKLOAD_HAS_HTTP
#include "inferscope/client/http_target.h"
#endif

namespace inferscope::workload {

// ---- SimTextTokenizer ----

std::vector<TokenId> SimTextTokenizer::encode(std::string_view text) const {
  std::vector<TokenId> out;
  std::size_t start = 0;  // start of the current token (its leading spaces included)
  bool in_word = false;
  auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool sp = is_space(text[i]);
    if (sp && in_word) {
      out.push_back(SimTokenizer::token_id(text.substr(start, i - start)));
      start = i;
    }
    in_word = !sp;
  }
  if (in_word) out.push_back(SimTokenizer::token_id(text.substr(start)));
  return out;
}

int SimTextTokenizer::count(std::string_view text) const { return SimTokenizer{}.count(text); }

std::expected<std::string, std::string> SimTextTokenizer::decode(std::span<const TokenId>) const {
  return std::unexpected("the sim tokenizer's ids are hashes and cannot be decoded");
}

// ---- SentencePiece ----

namespace {
class SentencePieceTokenizer final : public Tokenizer {
 public:
  SentencePieceTokenizer(std::unique_ptr<sentencepiece::SentencePieceProcessor> sp, std::string where)
      : sp_(std::move(sp)), where_(std::move(where)) {}
  std::vector<TokenId> encode(std::string_view text) const override {
    std::vector<int> ids;
    // Encode on a loaded model only fails for internal errors; an empty result then.
    if (!sp_->Encode(text, &ids).ok()) return {};
    return {ids.begin(), ids.end()};
  }
  std::expected<std::string, std::string> decode(std::span<const TokenId> ids) const override {
    const int n = sp_->GetPieceSize();
    for (TokenId id : ids)
      if (id < 0 || id >= n) return std::unexpected("token id " + std::to_string(id) + " out of range");
    std::string out;
    const auto st = sp_->Decode(std::vector<int>(ids.begin(), ids.end()), &out);
    if (!st.ok()) return std::unexpected(st.ToString());
    return out;
  }
  std::string name() const override { return "sentencepiece:" + where_; }

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  std::string where_;
};

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path, "cannot open tokenizer file");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

std::unique_ptr<Tokenizer> load_sentencepiece_from_bytes(std::string_view bytes, const std::string& where) {
  auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto st = sp->LoadFromSerializedProto(bytes);
  if (!st.ok()) throw InputError(where, 0, "", "not a SentencePiece model: " + st.ToString());
  return std::make_unique<SentencePieceTokenizer>(std::move(sp), where);
}

std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& path) {
  return load_sentencepiece_from_bytes(read_file(path), path);
}

// ---- server /tokenize ----

std::string tokenize_request_body(std::string_view text, TokenizeDialect dialect) {
  nlohmann::json j;
  const std::string t(text);
  switch (dialect) {
    case TokenizeDialect::vllm:
    case TokenizeDialect::sglang: j = {{"prompt", t}, {"add_special_tokens", false}}; break;
    case TokenizeDialect::llamacpp: j = {{"content", t}, {"add_special", false}}; break;
    case TokenizeDialect::tgi: j = {{"inputs", t}}; break;
    case TokenizeDialect::automatic:
      j = {{"prompt", t}, {"content", t}, {"inputs", t}, {"add_special_tokens", false}, {"add_special", false}};
      break;
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::expected<std::vector<TokenId>, std::string> parse_tokenize_response(std::string_view body) {
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) return std::unexpected("response is not JSON");
  auto id_of = [](const nlohmann::json& e) -> std::optional<TokenId> {
    if (e.is_number_integer()) return e.get<TokenId>();
    if (e.is_object() && e.contains("id") && e["id"].is_number_integer()) return e["id"].get<TokenId>();
    return std::nullopt;
  };
  const nlohmann::json* arr = nullptr;
  if (j.is_array()) {
    arr = &j;  // TGI
  } else if (j.is_object() && j.contains("tokens") && j["tokens"].is_array()) {
    arr = &j["tokens"];  // vLLM, SGLang, llama.cpp
  } else if (j.is_object() && j.contains("error")) {
    return std::unexpected("server error: " + j["error"].dump());
  } else {
    return std::unexpected("no 'tokens' array in response");
  }
  std::vector<TokenId> ids;
  for (const auto& e : *arr) {
    const auto id = id_of(e);
    if (!id) return std::unexpected("token entry is neither an id nor {\"id\":…}: " + e.dump());
    ids.push_back(*id);
  }
  if (j.is_object() && j.contains("count") && j["count"].is_number_integer() &&
      j["count"].get<std::size_t>() != ids.size())
    return std::unexpected("'count' disagrees with the number of tokens");
  return ids;
}

namespace {
class ServerTokenizer final : public Tokenizer {
 public:
  ServerTokenizer(std::string url, HttpPostFn post, TokenizeDialect d)
      : url_(std::move(url)), post_(std::move(post)), dialect_(d) {}
  std::vector<TokenId> encode(std::string_view text) const override {
    const auto r = post_(url_, tokenize_request_body(text, dialect_));
    if (!r) throw InputError(url_, "tokenize request failed: " + r.error());
    if (r->status != 200)
      throw InputError(url_, "tokenize returned HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 200));
    auto ids = parse_tokenize_response(r->body);
    if (!ids) throw InputError(url_, ids.error());
    return std::move(*ids);
  }
  std::expected<std::string, std::string> decode(std::span<const TokenId>) const override {
    return std::unexpected("decoding through a server is not supported");
  }
  std::string name() const override { return "server:" + url_; }

 private:
  std::string url_;
  HttpPostFn post_;
  TokenizeDialect dialect_;
};

bool is_url(const std::string& s) { return s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0; }
bool ends_with(const std::string& s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

#if INFERSCOPE_WORKLOAD_HAS_HTTP
HttpPostFn default_post() {
  return [](const std::string& url, const std::string& body) -> std::expected<HttpReply, std::string> {
    const auto r = http_post_json(url, body);
    if (r.status == 0) return std::unexpected(r.error);
    return HttpReply{r.status, r.body};
  };
}
HttpGetFn default_get() {
  return [](const std::string& url) -> std::expected<HttpReply, std::string> {
    const auto r = http_get(url, 60.0);
    if (r.status == 0) return std::unexpected(r.error);
    return HttpReply{r.status, r.body};
  };
}
#else
HttpPostFn default_post() { return {}; }
HttpGetFn default_get() { return {}; }
#endif
}  // namespace

std::unique_ptr<Tokenizer> make_server_tokenizer(std::string url, HttpPostFn post, TokenizeDialect dialect) {
  if (!post) throw InputError(url, "this build has no HTTP client for a server tokenizer");
  return std::make_unique<ServerTokenizer>(std::move(url), std::move(post), dialect);
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& spec, const TokenizerLoadOptions& opt) {
  if (spec.empty() || spec == "sim") return std::make_unique<SimTextTokenizer>();
  if (is_url(spec)) {
    if (ends_with(spec, ".json") || ends_with(spec, ".model")) {
      const HttpGetFn get = opt.get ? opt.get : default_get();
      if (!get) throw InputError(spec, "this build has no HTTP client to download a tokenizer");
      const auto r = get(spec);
      if (!r) throw InputError(spec, "download failed: " + r.error());
      if (r->status != 200) throw InputError(spec, "download returned HTTP " + std::to_string(r->status));
      return ends_with(spec, ".json") ? load_hf_tokenizer_from_json(r->body, spec)
                                      : load_sentencepiece_from_bytes(r->body, spec);
    }
    std::string url = spec;
    const auto scheme_end = url.find("://") + 3;
    if (url.find('/', scheme_end) == std::string::npos) url += "/tokenize";
    return make_server_tokenizer(url, opt.post ? opt.post : default_post(), opt.dialect);
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(spec, ec)) {
    if (fs::exists(fs::path(spec) / "tokenizer.json")) return load_hf_tokenizer((fs::path(spec) / "tokenizer.json").string());
    if (fs::exists(fs::path(spec) / "tokenizer.model")) return load_sentencepiece((fs::path(spec) / "tokenizer.model").string());
    throw InputError(spec, "directory has neither tokenizer.json nor tokenizer.model");
  }
  if (!fs::exists(spec, ec)) throw InputError(spec, "no such tokenizer file (expected sim, a path or a URL)");
  if (ends_with(spec, ".model")) return load_sentencepiece(spec);
  return load_hf_tokenizer(spec);
}

}  // namespace inferscope::workload
