// libFuzzer target: byte-level BPE must encode any bytes, including invalid UTF-8, and
// decode them back unchanged. The tokenizer is built in memory (256 byte tokens, GPT-2's
// byte-to-unicode map, a few merges and an added token) so the target needs no files.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "inferscope/workload/tokenizer.h"

namespace {
std::string utf8(std::uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

std::unique_ptr<inferscope::workload::Tokenizer> make() {
  nlohmann::json vocab = nlohmann::json::object();
  std::string sym[256];
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    const bool keep = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    sym[b] = utf8(keep ? static_cast<std::uint32_t>(b) : static_cast<std::uint32_t>(256 + n++));
    vocab[sym[b]] = b;
  }
  const std::string sp = sym[' '];
  vocab[sp + "t"] = 256;
  vocab["he"] = 257;
  vocab[sp + "the"] = 258;
  nlohmann::json j = {
      {"added_tokens", {{{"id", 259}, {"content", "<|eot|>"}, {"special", true}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {sp + " t", "h e", sp + "t he"}}}}};
  return inferscope::workload::load_hf_tokenizer_from_json(j.dump(), "fuzz");
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto tok = make();
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const auto back = tok->decode(tok->encode(in));
  if (!back || *back != in) std::abort();
  return 0;
}
