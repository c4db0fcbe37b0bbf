// Hugging Face tokenizer.json, byte-level BPE. Follows tokenizers' pipeline: added tokens
// are split out first, each remaining piece is pre-tokenized by regex, mapped byte by byte
// through GPT-2's byte-to-unicode table and merged by rank (lowest first, leftmost first
// on ties, as the Rust implementation's heap does).
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <memory>
#include <queue>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "inferscope/core/errors.h"
#include "inferscope/workload/tokenizer.h"

namespace inferscope::workload {
namespace {

// GPT-2's pre-tokenizer regex, used by ByteLevel(use_regex = true).
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Length of the UTF-8 sequence starting with byte `c` (1 for stray bytes).
std::size_t utf8_len(unsigned char c) {
  if (c >= 0xF0) return 4;
  if (c >= 0xE0) return 3;
  if (c >= 0xC0) return 2;
  return 1;
}

struct PcreDeleter {
  void operator()(pcre2_code* c) const { pcre2_code_free(c); }
};

class HfBpeTokenizer final : public Tokenizer {
 public:
  HfBpeTokenizer(const nlohmann::json& j, const std::string& where) : where_(where) {
    init_byte_map();
    const auto& model = j.at("model");
    if (model.value("type", std::string("BPE")) != "BPE")
      throw InputError(where, 0, "model.type", "only BPE models are supported");
    ignore_merges_ = model.value("ignore_merges", false);
    const auto& vocab = model.at("vocab");
    if (!vocab.is_object()) throw InputError(where, 0, "model.vocab", "expected an object");
    for (const auto& [tok, id] : vocab.items()) add_token(tok, id.get<TokenId>());
    TokenId rank = 0;
    for (const auto& m : model.at("merges")) {
      std::string a, b;
      if (m.is_string()) {
        const std::string s = m.get<std::string>();
        const auto sp = s.find(' ');
        if (sp == std::string::npos) throw InputError(where, 0, "model.merges", "merge without a space: " + s);
        a = s.substr(0, sp);
        b = s.substr(sp + 1);
      } else if (m.is_array() && m.size() == 2) {
        a = m[0].get<std::string>();
        b = m[1].get<std::string>();
      } else {
        throw InputError(where, 0, "model.merges", "expected \"a b\" or [a, b]");
      }
      const auto ia = vocab_.find(a), ib = vocab_.find(b), im = vocab_.find(a + b);
      if (ia == vocab_.end() || ib == vocab_.end() || im == vocab_.end())
        throw InputError(where, 0, "model.merges", "merge of unknown tokens: " + a + " " + b);
      merges_.emplace(pair_key(ia->second, ib->second), Merge{rank++, im->second});
    }
    if (j.contains("added_tokens") && j["added_tokens"].is_array()) {
      for (const auto& t : j["added_tokens"]) {
        const std::string content = t.at("content").get<std::string>();
        const auto id = t.at("id").get<TokenId>();
        add_token(content, id);
        added_.push_back({content, id});
      }
      // Longest first, so "<|im_start|>" wins over any shorter token that prefixes it.
      std::stable_sort(added_.begin(), added_.end(),
                       [](const auto& x, const auto& y) { return x.first.size() > y.first.size(); });
    }
    if (j.contains("normalizer") && !j["normalizer"].is_null()) {
      // Byte-level BPE tokenizers in the wild use none or NFC; NFC is identity on the
      // (already composed) text we synthesise, so it is accepted and documented.
      const std::string t = j["normalizer"].value("type", "");
      if (t != "NFC") throw InputError(where, 0, "normalizer", "unsupported normalizer '" + t + "'");
    }
    configure_pre_tokenizer(j.contains("pre_tokenizer") ? j["pre_tokenizer"] : nlohmann::json());
  }

  std::vector<TokenId> encode(std::string_view text) const override {
    std::vector<TokenId> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
      // Find the earliest added token (longest at that position).
      std::size_t best = std::string_view::npos;
      const std::pair<std::string, TokenId>* hit = nullptr;
      for (const auto& a : added_) {
        if (a.first.empty()) continue;
        const auto f = text.find(a.first, pos);
        if (f != std::string_view::npos && f < best) {
          best = f;
          hit = &a;
        }
      }
      const std::size_t end = hit ? best : text.size();
      if (end > pos) encode_segment(text.substr(pos, end - pos), out);
      if (!hit) break;
      out.push_back(hit->second);
      pos = best + hit->first.size();
    }
    return out;
  }

  std::expected<std::string, std::string> decode(std::span<const TokenId> ids) const override {
    std::string out;
    for (TokenId id : ids) {
      if (id < 0 || static_cast<std::size_t>(id) >= id_to_token_.size() || !has_id_[static_cast<std::size_t>(id)])
        return std::unexpected("token id " + std::to_string(id) + " out of range");
      const std::string& t = id_to_token_[static_cast<std::size_t>(id)];
      if (is_added(id)) {
        out += t;
        continue;
      }
      for (std::size_t i = 0; i < t.size();) {
        const std::size_t n = std::min(utf8_len(static_cast<unsigned char>(t[i])), t.size() - i);
        const auto it = byte_dec_.find(t.substr(i, n));
        if (it == byte_dec_.end()) return std::unexpected("token " + std::to_string(id) + " is not byte-level");
        out += static_cast<char>(it->second);
        i += n;
      }
    }
    return out;
  }

  std::string name() const override { return "hf-bpe:" + where_; }

 private:
  struct Merge {
    TokenId rank;
    TokenId merged;
  };
  static std::uint64_t pair_key(TokenId a, TokenId b) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
  }

  void add_token(const std::string& tok, TokenId id) {
    if (id < 0 || id > 10'000'000) throw InputError(where_, 0, "vocab", "token id out of range: " + tok);
    vocab_[tok] = id;
    const auto i = static_cast<std::size_t>(id);
    if (id_to_token_.size() <= i) {
      id_to_token_.resize(i + 1);
      has_id_.resize(i + 1, false);
    }
    id_to_token_[i] = tok;
    has_id_[i] = true;
  }
  bool is_added(TokenId id) const {
    return std::any_of(added_.begin(), added_.end(), [&](const auto& a) { return a.second == id; });
  }

  void init_byte_map() {
    // GPT-2 bytes_to_unicode(): printable Latin-1 bytes map to themselves, the rest to 256+n.
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool keep = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      const std::uint32_t cp = keep ? static_cast<std::uint32_t>(b) : static_cast<std::uint32_t>(256 + n++);
      append_utf8(byte_enc_[static_cast<std::size_t>(b)], cp);
      byte_dec_[byte_enc_[static_cast<std::size_t>(b)]] = static_cast<unsigned char>(b);
    }
  }

  void compile(std::string_view pattern) {
    int err = 0;
    PCRE2_SIZE off = 0;
    pcre2_code* c = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                  PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &off, nullptr);
    if (!c) {
      std::array<PCRE2_UCHAR, 256> buf{};
      pcre2_get_error_message(err, buf.data(), buf.size());
      throw InputError(where_, 0, "pre_tokenizer", "bad regex at " + std::to_string(off) + ": " +
                                                       reinterpret_cast<const char*>(buf.data()));
    }
    pcre2_jit_compile(c, PCRE2_JIT_COMPLETE);  // best effort: falls back to the interpreter
    re_.reset(c);
  }

  void configure_pre_tokenizer(const nlohmann::json& pt) {
    if (pt.is_null()) throw InputError(where_, 0, "pre_tokenizer", "missing: byte-level BPE needs one");
    const std::string type = pt.value("type", "");
    if (type == "ByteLevel") {
      add_prefix_space_ = pt.value("add_prefix_space", false);
      if (pt.value("use_regex", true)) compile(kGpt2Pattern);
      byte_level_ = true;
    } else if (type == "Sequence") {
      for (const auto& p : pt.at("pretokenizers")) {
        const std::string t = p.value("type", "");
        if (t == "Split") {
          if (re_) throw InputError(where_, 0, "pre_tokenizer", "more than one regex split");
          const auto& pat = p.at("pattern");
          if (pat.contains("Regex")) {
            compile(pat["Regex"].get<std::string>());
          } else {
            throw InputError(where_, 0, "pre_tokenizer.pattern", "only Regex split patterns are supported");
          }
          if (p.value("behavior", "Isolated") != "Isolated" || p.value("invert", false))
            throw InputError(where_, 0, "pre_tokenizer.behavior", "only Isolated, non-inverted splits");
        } else if (t == "ByteLevel") {
          add_prefix_space_ = p.value("add_prefix_space", false);
          if (p.value("use_regex", true)) {
            if (re_) throw InputError(where_, 0, "pre_tokenizer", "more than one regex split");
            compile(kGpt2Pattern);
          }
          byte_level_ = true;
        } else {
          throw InputError(where_, 0, "pre_tokenizer", "unsupported pre-tokenizer '" + t + "'");
        }
      }
    } else {
      throw InputError(where_, 0, "pre_tokenizer", "unsupported pre-tokenizer '" + type + "'");
    }
    if (!byte_level_) throw InputError(where_, 0, "pre_tokenizer", "not a byte-level tokenizer");
  }

  // Pre-tokenizes a segment without added tokens and BPE-encodes each piece.
  void encode_segment(std::string_view seg, std::vector<TokenId>& out) const {
    std::string with_space;
    if (add_prefix_space_ && seg.front() != ' ') {
      with_space = " ";
      with_space += seg;
      seg = with_space;
    }
    if (!re_) {
      bpe(seg, out);
      return;
    }
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
        pcre2_match_data_create_from_pattern(re_.get(), nullptr), &pcre2_match_data_free);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(seg.data());
    std::size_t pos = 0;
    while (pos < seg.size()) {
      const int rc = pcre2_match(re_.get(), subject, seg.size(), pos, 0, md.get(), nullptr);
      if (rc < 0) {
        bpe(seg.substr(pos), out);  // no further match: the rest is one piece
        return;
      }
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
      std::size_t s = ov[0], e = ov[1];
      if (s > pos) bpe(seg.substr(pos, s - pos), out);  // bytes the regex skipped (invalid UTF-8)
      if (e == s) {  // empty match: step one character to make progress
        e = s + std::min(utf8_len(static_cast<unsigned char>(seg[s])), seg.size() - s);
      }
      bpe(seg.substr(s, e - s), out);
      pos = e;
    }
  }

  void bpe(std::string_view piece, std::vector<TokenId>& out) const {
    if (piece.empty()) return;
    std::string mapped;
    for (char c : piece) mapped += byte_enc_[static_cast<unsigned char>(c)];
    if (ignore_merges_) {
      if (const auto it = vocab_.find(mapped); it != vocab_.end()) {
        out.push_back(it->second);
        return;
      }
    }
    struct Sym {
      TokenId id;
      int prev, next;
    };
    std::vector<Sym> syms;
    for (std::size_t i = 0; i < mapped.size();) {
      const std::size_t n = utf8_len(static_cast<unsigned char>(mapped[i]));
      const auto it = vocab_.find(mapped.substr(i, n));
      // Byte-level vocabularies hold all 256 byte symbols; a file that lacks one is broken.
      syms.push_back({it == vocab_.end() ? 0 : it->second, static_cast<int>(syms.size()) - 1,
                      static_cast<int>(syms.size()) + 1});
      i += n;
    }
    syms.back().next = -1;
    struct Cand {
      TokenId rank;
      int left;
      TokenId a, b, merged;
      bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
    };
    std::priority_queue<Cand, std::vector<Cand>, std::greater<>> pq;
    auto push = [&](int l) {
      if (l < 0) return;
      const int r = syms[static_cast<std::size_t>(l)].next;
      if (r < 0) return;
      const TokenId a = syms[static_cast<std::size_t>(l)].id, b = syms[static_cast<std::size_t>(r)].id;
      if (const auto it = merges_.find(pair_key(a, b)); it != merges_.end())
        pq.push({it->second.rank, l, a, b, it->second.merged});
    };
    for (int i = 0; i + 1 < static_cast<int>(syms.size()); ++i) push(i);
    std::vector<bool> dead(syms.size(), false);
    while (!pq.empty()) {
      const Cand c = pq.top();
      pq.pop();
      auto& L = syms[static_cast<std::size_t>(c.left)];
      if (dead[static_cast<std::size_t>(c.left)] || L.id != c.a || L.next < 0) continue;
      auto& R = syms[static_cast<std::size_t>(L.next)];
      if (R.id != c.b) continue;
      L.id = c.merged;
      dead[static_cast<std::size_t>(L.next)] = true;
      L.next = R.next;
      if (R.next >= 0) syms[static_cast<std::size_t>(R.next)].prev = c.left;
      push(L.prev);
      push(c.left);
    }
    for (int i = 0; i >= 0; i = syms[static_cast<std::size_t>(i)].next) out.push_back(syms[static_cast<std::size_t>(i)].id);
  }

  std::string where_;
  std::unordered_map<std::string, TokenId> vocab_;
  std::vector<std::string> id_to_token_;
  std::vector<bool> has_id_;
  std::unordered_map<std::uint64_t, Merge> merges_;
  std::vector<std::pair<std::string, TokenId>> added_;
  std::array<std::string, 256> byte_enc_;
  std::unordered_map<std::string, unsigned char> byte_dec_;
  std::unique_ptr<pcre2_code, PcreDeleter> re_;
  bool byte_level_ = false;
  bool add_prefix_space_ = false;
  bool ignore_merges_ = false;
};

}  // namespace

std::unique_ptr<Tokenizer> load_hf_tokenizer_from_json(std::string_view json, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where, 0, "", std::string("not valid JSON: ") + e.what());
  }
  try {
    return std::make_unique<HfBpeTokenizer>(j, where);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where, 0, "", std::string("not a tokenizer.json: ") + e.what());
  }
}

std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path, "cannot open tokenizer file");
  std::stringstream ss;
  ss << f.rdbuf();
  return load_hf_tokenizer_from_json(ss.str(), path);
}

}  // namespace inferscope::workload
