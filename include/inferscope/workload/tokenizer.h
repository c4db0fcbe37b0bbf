#pragma once
// Tokenizers: text -> token ids, and a token count (TokenCounter) for the client.
//
// Implementations: SimTextTokenizer (the simulated engine's, the default), HfBpeTokenizer
// (Hugging Face tokenizer.json, byte-level BPE), SentencePieceTokenizer (tokenizer.model)
// and ServerTokenizer (the engine's own /tokenize endpoint). load_tokenizer() picks one
// from a path, a URL or "sim".
//
// Threading: encode(), decode() and count() are const and safe to call concurrently, except
// ServerTokenizer, whose calls block on HTTP (fine concurrently, slow; not for hot paths).
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/core/token_counter.h"

namespace inferscope::workload {

using TokenId = std::int32_t;

class Tokenizer : public TokenCounter {
 public:
  // Token ids of `text`, with no special tokens added (no BOS/EOS): the prompt's own tokens.
  virtual std::vector<TokenId> encode(std::string_view text) const = 0;
  // Text of `ids`; an error when the tokenizer cannot invert (the sim's hashed ids, a
  // server without /detokenize) or an id is out of range.
  virtual std::expected<std::string, std::string> decode(std::span<const TokenId> ids) const = 0;
  int count(std::string_view text) const override { return static_cast<int>(encode(text).size()); }
  // Short description for manifests: "sim", "hf-bpe:/path/tokenizer.json", …
  virtual std::string name() const = 0;
};

// The simulated engine's tokenizer (core/sim_tokenizer.h): a token is a run of non-space
// bytes with the spaces before it; ids are SimTokenizer::token_id. decode is unsupported.
class SimTextTokenizer final : public Tokenizer {
 public:
  std::vector<TokenId> encode(std::string_view text) const override;
  std::expected<std::string, std::string> decode(std::span<const TokenId> ids) const override;
  int count(std::string_view text) const override;
  std::string name() const override { return "sim"; }
};

// Hugging Face tokenizer.json with a byte-level BPE model (GPT-2, Llama 3, Qwen2, …):
// added tokens split out first (literal match, longest first), then the pre-tokenizer
// regex (PCRE2, UTF + UCP), the byte-to-unicode map, and merges applied by rank.
// Normalizers other than null are not applied (see docs/workloads.md).
// Throws InputError(path, …) when the file is missing, not JSON, or not byte-level BPE.
std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& path);
// Same, from the file's bytes; `where` names it in errors.
std::unique_ptr<Tokenizer> load_hf_tokenizer_from_json(std::string_view json, const std::string& where);

// SentencePiece model file (libsentencepiece). Throws InputError if it cannot be loaded.
std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& path);
std::unique_ptr<Tokenizer> load_sentencepiece_from_bytes(std::string_view bytes, const std::string& where);

// HTTP POST of a JSON body; returns (status, body) or a transport error. Injected so the
// server tokenizer is testable without a network and the workload module stays free of
// the transport.
struct HttpReply {
  int status = 0;
  std::string body;
};
using HttpPostFn = std::function<std::expected<HttpReply, std::string>(const std::string& url,
                                                                      const std::string& body)>;
using HttpGetFn = std::function<std::expected<HttpReply, std::string>(const std::string& url)>;

// Which engine's /tokenize dialect to speak. `automatic` sends one body every engine
// accepts ({"prompt","content","inputs","add_special_tokens":false}) and reads any of the
// response shapes below.
enum class TokenizeDialect { automatic, vllm, sglang, llamacpp, tgi };

// Reads a /tokenize response: vLLM/SGLang {"count":N,"tokens":[ids…]}, llama.cpp
// {"tokens":[ids…]} or {"tokens":[{"id":…,"piece":…}…]}, TGI [{"id":…,"text":…}…].
std::expected<std::vector<TokenId>, std::string> parse_tokenize_response(std::string_view body);
// The request body for `dialect`.
std::string tokenize_request_body(std::string_view text, TokenizeDialect dialect);

// The engine's /tokenize. `url` is the endpoint ("http://host:8000/tokenize"). Every call
// is one HTTP request; a failure throws InputError naming the URL (the tokenizer is
// configuration: a run must not start against a tokenizer it cannot reach).
std::unique_ptr<Tokenizer> make_server_tokenizer(std::string url, HttpPostFn post,
                                                 TokenizeDialect dialect = TokenizeDialect::automatic);

struct TokenizerLoadOptions {
  HttpPostFn post;  // empty: the built-in HTTP client when the build has one
  HttpGetFn get;    // for downloading tokenizer.json / tokenizer.model by URL
  TokenizeDialect dialect = TokenizeDialect::automatic;
};

// "sim" (or empty) -> SimTextTokenizer; a directory -> its tokenizer.json or
// tokenizer.model; "*.json" -> HF; "*.model" -> SentencePiece; "http(s)://…/tokenizer.json"
// or ".model" -> downloaded and loaded; any other http(s) URL -> ServerTokenizer (the path
// "/tokenize" is appended when the URL has no path). Throws InputError.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& spec, const TokenizerLoadOptions& opt = {});

}  // namespace inferscope::workload
