// Stream decoders: SSE events -> RequestRecord timeline, one class per API family.
//
// Every decoder shares the same bookkeeping (DecoderBase): an event that carries
// generated output becomes one Chunk at the arrival time of the read that completed it;
// its token count comes from the server's cumulative completion-token count when the
// server streams one with every content chunk (vLLM/SGLang continuous usage, llama.cpp
// tokens_predicted, SGLang meta_info, TGI's one-token events), else from the token
// counter. See docs/protocols.md.
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "client/json_write.h"
#include "client/utf8.h"
#include "inferscope/client/protocol.h"
#include "inferscope/client/sse.h"

namespace inferscope {
namespace {

namespace dom = simdjson::dom;
using simdjson::error_code;
using simdjson::SUCCESS;

// One DOM parser per thread, reused by every decoder on it: decoders parse and consume
// each event synchronously, so sharing is safe and saves a parser allocation per request.
// (The DOM API picks the fastest kernel for the CPU at run time; simdjson's On-Demand API
// would use the one the compiler flags allow, the scalar fallback in a portable build.)
dom::parser& thread_parser() {
  thread_local dom::parser parser;
  return parser;
}

// A string or null (null reads as empty).
error_code string_or_null(dom::element v, std::string_view& out) {
  if (v.is_null()) {
    out = {};
    return SUCCESS;
  }
  return v.get_string().get(out);
}

// A token count: an integer or a double that fits an int32 (records hold int32), or null
// (-1). A negative count reads as "not reported" downstream.
error_code count_or_null(dom::element v, std::int64_t& out) {
  if (v.is_null()) {
    out = -1;
    return SUCCESS;
  }
  constexpr auto kMax = std::numeric_limits<std::int32_t>::max();
  if (v.is_int64()) {
    if (auto e = v.get_int64().get(out)) return e;
    return out <= kMax ? SUCCESS : simdjson::NUMBER_OUT_OF_RANGE;
  }
  double d = 0;
  if (auto e = v.get_double().get(d)) return e;
  if (!(d >= -1 && d <= kMax)) return simdjson::NUMBER_OUT_OF_RANGE;
  out = static_cast<std::int64_t>(d);
  return SUCCESS;
}

// Generated output of one event, collected while its JSON is walked and applied after
// (keys come in any order: usage may follow choices).
struct Piece {
  std::string_view text;       // content / text delta (kept in output_text)
  std::string_view reasoning;  // reasoning_content delta (counted, not kept)
  std::string_view tool_text;  // tool-call names and argument fragments (counted, not kept)
  bool tool_calls = false;     // the event carries tool-call deltas
  std::int64_t cum = -1;       // cumulative completion tokens reported with it, -1 none
};

// Held-back bytes of a character split across chunks' text, for one text field.
class TextChannel {
 public:
  // The part of (held-back bytes + text) that ends on a character boundary; the
  // incomplete tail is kept for the next call. The view is valid until the next call.
  std::string_view take(std::string_view text) {
    if (tail_.empty()) {
      const std::size_t cut = utf8::incomplete_tail(text);
      if (cut == 0) return text;
      tail_.assign(text.substr(text.size() - cut));
      return text.substr(0, text.size() - cut);
    }
    joined_.assign(tail_);
    joined_.append(text);
    const std::size_t cut = utf8::incomplete_tail(joined_);
    tail_.assign(joined_, joined_.size() - cut, cut);
    joined_.resize(joined_.size() - cut);
    return joined_;
  }
  // Releases the held-back bytes (the stream ended: they will never complete).
  std::string release() { return std::exchange(tail_, {}); }

 private:
  std::string tail_;
  std::string joined_;
};

class DecoderBase : public StreamDecoder {
 public:
  DecoderBase(const TokenCounter* counter, bool keep_text)
      : counter_(counter), keep_text_(keep_text), sse_([this](const SseEvent& ev) { on_event(ev); }) {}

  void on_body(std::string_view bytes, Nanos t, RequestRecord& rec) override {
    if (state_ != State::streaming) return;
    rec_ = &rec;
    t_ = t;
    sse_.feed(bytes);
    if (sse_.failed()) fail(ErrorClass::bad_payload, "SSE line or event over 16 MiB");
    rec_ = nullptr;
  }

  void on_end(Nanos t, RequestRecord& rec) override {
    if (state_ != State::streaming) return;
    rec_ = &rec;
    t_ = t;
    sse_.finish();
    if (sse_.failed()) fail(ErrorClass::bad_payload, "SSE line or event over 16 MiB");
    if (state_ == State::streaming) {
      // A stream that delivered its finish_reason and then closed without the marker
      // ([DONE] omitted) is complete; anything else was cut short.
      if (saw_finish_) {
        end_marker();
      } else {
        fail(ErrorClass::truncated, "stream ended before its end marker");
      }
    }
    rec_ = nullptr;
  }

  bool finished() const override { return state_ != State::streaming; }

  // Decodes a whole non-streamed response body as one event.
  void decode_full(std::string_view body, Nanos t, RequestRecord& rec) {
    full_ = true;
    rec_ = &rec;
    t_ = t;
    parse_json(body);
    if (state_ == State::streaming) end_marker();
    const bool any = !rec.chunks.empty();
    rec.chunks.clear();
    rec.usage_streamed = false;
    rec.t_first = rec.t_last = -1;
    const std::int32_t tokens = rec.output_tokens();
    if (rec.ok() && (any || tokens > 0)) {
      rec.chunks.push_back({t, tokens});
      rec.t_first = rec.t_last = t;
    }
    rec_ = nullptr;
  }

 protected:
  // Applies one parsed JSON event with the helpers below. Returns an error for JSON of
  // an unexpected shape (the request then fails as bad_payload).
  virtual error_code apply(dom::object root) = 0;

  RequestRecord& rec() { return *rec_; }

  // A string from the document, with bytes restored when the event had to be re-encoded
  // to parse (see utf8::escape_invalid). `scratch` holds the restored copy.
  std::string_view text_of(std::string_view raw, std::string& scratch) const {
    if (!restored_) return raw;
    scratch.clear();
    utf8::restore_bytes(raw, scratch);
    return scratch;
  }

  void content(const Piece& p) {
    if (p.text.empty() && p.reasoning.empty() && !p.tool_calls) return;  // role-only / empty
    RequestRecord& r = rec();
    const std::string_view text = text_.take(p.text);
    const std::string_view reasoning = reasoning_.take(p.reasoning);
    int counted = 1;
    if (counter_) {
      counted = counter_->count(text);
      if (!reasoning.empty()) counted += counter_->count(reasoning);
      if (!p.tool_text.empty()) counted += counter_->count(p.tool_text);
    }
    r.tokenizer_output_tokens += counted;
    int tokens = counted;
    // The first content chunk decides whether the server streams usage with every chunk;
    // a cumulative count that only appears later (the final chunk) is not per-chunk.
    if (usage_mode_ == UsageMode::unknown)
      usage_mode_ = p.cum >= 0 ? UsageMode::streamed : UsageMode::counted;
    if (usage_mode_ == UsageMode::streamed && p.cum >= 0) {
      tokens = static_cast<int>(std::max<std::int64_t>(0, p.cum - prev_cum_));
      prev_cum_ = std::max(prev_cum_, p.cum);
      r.usage_streamed = true;
    }
    if (keep_text_) r.output_text.append(text);
    r.chunks.push_back({t_, tokens});
    if (r.t_first < 0) r.t_first = t_;
    r.t_last = t_;
  }

  void usage(std::int64_t prompt, std::int64_t completion, std::int64_t cached) {
    RequestRecord& r = rec();
    if (prompt >= 0) r.prompt_tokens = static_cast<std::int32_t>(prompt);
    if (completion >= 0) r.completion_tokens = static_cast<std::int32_t>(completion);
    if (cached >= 0) r.cached_tokens = static_cast<std::int32_t>(cached);
  }

  void finish_reason(std::string_view reason) {
    if (reason.empty()) return;
    rec().finish_reason.assign(reason);
    saw_finish_ = true;
  }

  void server_error(std::string_view message) {
    fail(ErrorClass::server_error_event,
         message.empty() ? std::string("error event in stream") : std::string(message));
  }

  // The protocol's end marker: the stream is complete.
  void end_marker() {
    RequestRecord& r = rec();
    // Bytes of a character that never completed were still generated: count and keep
    // them rather than lose them.
    for (TextChannel* ch : {&text_, &reasoning_}) {
      const std::string tail = ch->release();
      if (tail.empty()) continue;
      if (counter_) r.tokenizer_output_tokens += counter_->count(tail);
      if (keep_text_ && ch == &text_) r.output_text += tail;
    }
    state_ = State::done;
  }

  bool full_ = false;  // decoding a non-streamed body
  bool keep_text() const { return keep_text_; }

 private:
  enum class State : std::uint8_t { streaming, done, failed };
  enum class UsageMode : std::uint8_t { unknown, streamed, counted };

  void on_event(const SseEvent& ev) {
    if (state_ != State::streaming) return;
    if (ev.field == "error" || ev.event == "error") {
      server_error(error_message_from_body(ev.data));
    } else if (ev.data == "[DONE]") {
      end_marker();
    } else if (!ev.data.empty()) {
      parse_json(ev.data);
    }
  }

  void parse_json(std::string_view data) {
    dom::parser& parser = thread_parser();
    restored_ = false;
    dom::element root;
    // parse() copies into the parser's padded buffer when the input lacks padding.
    error_code err = parser.parse(data.data(), data.size()).get(root);
    if (err == simdjson::UTF8_ERROR) {
      // Raw partial UTF-8 bytes inside a string: re-encode them so the JSON parses and
      // restore them in text_of().
      buf_.clear();
      utf8::escape_invalid(data, buf_);
      restored_ = true;
      err = parser.parse(buf_.data(), buf_.size()).get(root);
    }
    dom::object obj;
    if (!err) err = root.get_object().get(obj);
    if (!err) err = apply(obj);
    if (err)
      fail(ErrorClass::bad_payload,
           std::string("malformed JSON event: ") + simdjson::error_message(err));
  }

  void fail(ErrorClass cls, std::string detail) {
    RequestRecord& r = rec();
    if (r.error == ErrorClass::none) {
      r.error = cls;
      r.error_detail = std::move(detail);
    }
    state_ = State::failed;
  }

  const TokenCounter* counter_;
  bool keep_text_;
  SseParser sse_;
  RequestRecord* rec_ = nullptr;  // valid during on_body/on_end/decode_full only
  Nanos t_ = 0;                   // arrival time of the bytes being decoded
  State state_ = State::streaming;
  UsageMode usage_mode_ = UsageMode::unknown;
  bool saw_finish_ = false;
  bool restored_ = false;
  std::int64_t prev_cum_ = 0;
  std::string buf_;  // the event re-encoded by utf8::escape_invalid
  TextChannel text_, reasoning_;
};

// Reads an {"error": …} value: an object with "message", or a string.
std::string error_value(dom::element v) {
  std::string_view s;
  if (!v.get_string().get(s)) return std::string(s);
  if (!v["message"].get_string().get(s)) return std::string(s);
  return simdjson::minify(v);
}

// prompt_tokens, completion_tokens and cached tokens of an OpenAI `usage` object.
struct Usage {
  std::int64_t prompt = -1, completion = -1, cached = -1;
};
error_code usage_value(dom::element v, Usage& u) {
  if (v.is_null()) return SUCCESS;
  dom::object o;
  if (auto e = v.get_object().get(o)) return e;
  for (dom::key_value_pair kv : o) {
    if (kv.key == "prompt_tokens") {
      if (auto e = count_or_null(kv.value, u.prompt)) return e;
    } else if (kv.key == "completion_tokens") {
      if (auto e = count_or_null(kv.value, u.completion)) return e;
    } else if (kv.key == "prompt_tokens_details" && kv.value.is_object()) {
      dom::element c;
      if (!kv.value["cached_tokens"].get(c))
        if (auto e = count_or_null(c, u.cached)) return e;
    }
  }
  return SUCCESS;
}

// OpenAI /v1/completions and /v1/chat/completions, every engine's variant.
class OpenAiDecoder final : public DecoderBase {
 public:
  using DecoderBase::DecoderBase;

 private:
  error_code apply(dom::object root) override {
    Piece p;
    Usage u;
    std::string_view finish, flat_message;
    bool flat_error = false;
    tool_text_.clear();
    for (dom::key_value_pair kv : root) {
      if (kv.key == "choices") {
        if (auto e = choices(kv.value, p, finish)) return e;
      } else if (kv.key == "usage") {
        if (auto e = usage_value(kv.value, u)) return e;
      } else if (kv.key == "error") {
        server_error(error_value(kv.value));
        return SUCCESS;
      } else if (kv.key == "object") {
        std::string_view s;
        flat_error = !kv.value.get_string().get(s) && s == "error";  // older vLLM
      } else if (kv.key == "message") {
        if (kv.value.get_string().get(flat_message)) flat_message = {};
      } else if (kv.key == "timings" && kv.value.is_object()) {
        rec().server_timings_json = simdjson::minify(kv.value);  // llama.cpp's routes
      }
    }
    if (flat_error) {
      server_error(flat_message);
      return SUCCESS;
    }
    if (!tool_text_.empty()) p.tool_text = tool_text_;
    p.cum = u.completion;
    content(p);
    usage(u.prompt, u.completion, u.cached);
    // SGLang ends a request the server aborted (out of memory, prompt too long) with
    // finish_reason "abort": it did not complete.
    if (finish == "abort") {
      server_error("request aborted by the server (finish_reason \"abort\")");
      return SUCCESS;
    }
    finish_reason(finish);
    return SUCCESS;
  }

  error_code choices(dom::element v, Piece& p, std::string_view& finish) {
    dom::array arr;
    if (auto e = v.get_array().get(arr)) return e;
    for (dom::element c : arr) {
      dom::object choice;
      if (auto e = c.get_object().get(choice)) return e;
      for (dom::key_value_pair kv : choice) {
        if (kv.key == "text") {
          std::string_view s;
          if (auto e = string_or_null(kv.value, s)) return e;
          p.text = text_of(s, text_scratch_);
        } else if (kv.key == "delta" || kv.key == "message") {
          if (auto e = delta(kv.value, p)) return e;
        } else if (kv.key == "finish_reason") {
          if (auto e = string_or_null(kv.value, finish)) return e;
        }
      }
    }
    return SUCCESS;
  }

  error_code delta(dom::element v, Piece& p) {
    if (v.is_null()) return SUCCESS;
    dom::object o;
    if (auto e = v.get_object().get(o)) return e;
    for (dom::key_value_pair kv : o) {
      if (kv.key == "content") {
        std::string_view s;
        if (auto e = string_or_null(kv.value, s)) return e;
        p.text = text_of(s, text_scratch_);
      } else if (kv.key == "reasoning_content" || kv.key == "reasoning") {
        std::string_view s;
        if (auto e = string_or_null(kv.value, s)) return e;
        if (!s.empty()) p.reasoning = text_of(s, reasoning_scratch_);
      } else if (kv.key == "tool_calls") {
        if (auto e = tool_calls(kv.value, p)) return e;
      }
    }
    return SUCCESS;
  }

  // Collects the function names and argument fragments of tool-call deltas. With
  // keep_text the calls are also rebuilt (fragments joined per `index`) into
  // rec.tool_calls_json, so the reply's tool call can be validated.
  error_code tool_calls(dom::element v, Piece& p) {
    if (v.is_null()) return SUCCESS;
    dom::array arr;
    if (auto e = v.get_array().get(arr)) return e;
    std::size_t position = 0;
    for (dom::element call : arr) {
      p.tool_calls = true;
      std::size_t index = position++;
      if (std::int64_t i = 0; !call["index"].get_int64().get(i) && i >= 0 && i < 1024) index = static_cast<std::size_t>(i);
      dom::element fn;
      if (call["function"].get(fn) || !fn.is_object()) continue;
      if (keep_text() && calls_.size() <= index) calls_.resize(index + 1);
      for (const char* field : {"name", "arguments"}) {
        std::string_view s;
        if (fn[field].get_string().get(s)) continue;
        const std::string_view text = text_of(s, tool_scratch_);
        tool_text_ += text;
        if (keep_text()) (field[0] == 'n' ? calls_[index].first : calls_[index].second) += text;
      }
    }
    if (keep_text() && !calls_.empty()) write_tool_calls();
    return SUCCESS;
  }

  void write_tool_calls() {
    std::string& out = rec().tool_calls_json;
    out = "{\"tool_calls\":[";
    for (std::size_t i = 0; i < calls_.size(); ++i) {
      if (i) out += ',';
      out += "{\"function\":{\"name\":";
      jsonw::append_string(out, calls_[i].first);
      out += ",\"arguments\":";
      jsonw::append_string(out, calls_[i].second);
      out += "}}";
    }
    out += "]}";
  }

  std::vector<std::pair<std::string, std::string>> calls_;  // (name, arguments) per index
  std::string text_scratch_, reasoning_scratch_, tool_scratch_, tool_text_;
};

// SGLang native /generate: each event repeats the whole text so far.
class SglangDecoder final : public DecoderBase {
 public:
  using DecoderBase::DecoderBase;

 private:
  error_code apply(dom::object root) override {
    std::string_view text;
    bool has_text = false;
    Usage u;
    std::string_view finish;
    for (dom::key_value_pair kv : root) {
      if (kv.key == "text") {
        std::string_view s;
        if (auto e = string_or_null(kv.value, s)) return e;
        text = text_of(s, text_scratch_);
        has_text = true;
      } else if (kv.key == "meta_info") {
        std::string abort_message;
        if (auto e = meta_info(kv.value, u, finish, abort_message)) return e;
        if (finish == "abort") {  // prompt too long, cancelled by the server, …
          server_error(abort_message.empty() ? "request aborted by the server" : abort_message);
          return SUCCESS;
        }
      } else if (kv.key == "error") {
        server_error(error_value(kv.value));
        return SUCCESS;
      }
    }
    Piece p;
    if (has_text) {
      // Delta = what follows the longest common prefix with the previous text (a
      // rewritten tail, which a detokenizer may produce, counts as new output).
      const auto common = static_cast<std::size_t>(
          std::mismatch(prev_.begin(), prev_.end(), text.begin(), text.end()).first -
          prev_.begin());
      if (common == prev_.size()) {
        prev_.append(text.substr(common));
      } else {
        prev_.assign(text);
      }
      p.text = std::string_view(prev_).substr(common);
    }
    p.cum = u.completion;
    content(p);
    usage(u.prompt, u.completion, u.cached);
    finish_reason(finish);
    return SUCCESS;
  }

  static error_code meta_info(dom::element v, Usage& u, std::string_view& finish,
                              std::string& abort_message) {
    dom::object o;
    if (auto e = v.get_object().get(o)) return e;
    for (dom::key_value_pair kv : o) {
      if (kv.key == "prompt_tokens") {
        if (auto e = count_or_null(kv.value, u.prompt)) return e;
      } else if (kv.key == "completion_tokens") {
        if (auto e = count_or_null(kv.value, u.completion)) return e;
      } else if (kv.key == "cached_tokens") {
        if (auto e = count_or_null(kv.value, u.cached)) return e;
      } else if (kv.key == "finish_reason") {
        // null, {"type": "length"|"stop"|"abort", …}, or a plain string.
        if (kv.value.is_string()) {
          finish = kv.value.get_string().value_unsafe();
        } else if (kv.value.is_object()) {
          if (kv.value["type"].get_string().get(finish)) finish = {};
          std::string_view m;
          if (!kv.value["message"].get_string().get(m)) abort_message.assign(m);
        }
      }
    }
    return SUCCESS;
  }

  std::string prev_;  // the cumulative text so far
  std::string text_scratch_;
};

// llama.cpp native /completion: `content` deltas, `stop: true` on the last event.
class LlamacppDecoder final : public DecoderBase {
 public:
  using DecoderBase::DecoderBase;

 private:
  error_code apply(dom::object root) override {
    Piece p;
    bool stop = false;
    std::int64_t predicted = -1, evaluated = -1, cache_n = -1;
    std::string_view stop_type;
    for (dom::key_value_pair kv : root) {
      if (kv.key == "content") {
        std::string_view s;
        if (auto e = string_or_null(kv.value, s)) return e;
        p.text = text_of(s, text_scratch_);
      } else if (kv.key == "stop") {
        if (auto e = kv.value.get_bool().get(stop)) return e;
      } else if (kv.key == "tokens_predicted") {
        if (auto e = count_or_null(kv.value, predicted)) return e;
      } else if (kv.key == "tokens_evaluated") {
        if (auto e = count_or_null(kv.value, evaluated)) return e;
      } else if (kv.key == "stop_type") {
        if (auto e = string_or_null(kv.value, stop_type)) return e;
      } else if (kv.key == "timings" && kv.value.is_object()) {
        rec().server_timings_json = simdjson::minify(kv.value);
        dom::element c;
        if (!kv.value["cache_n"].get(c))
          if (auto e = count_or_null(c, cache_n)) return e;
      } else if (kv.key == "error") {
        server_error(error_value(kv.value));
        return SUCCESS;
      }
    }
    p.cum = predicted;
    content(p);
    if (stop) {
      usage(evaluated, predicted, cache_n);
      // OpenAI's vocabulary, as llama.cpp's own OpenAI routes map it.
      if (stop_type == "limit") {
        finish_reason("length");
      } else if (stop_type == "eos" || stop_type == "word") {
        finish_reason("stop");
      } else {
        finish_reason(stop_type);
      }
      end_marker();
    }
    return SUCCESS;
  }

  std::string text_scratch_;
};

// TGI /generate_stream: one token per event, `data:{…}` without a space; the last event
// also carries generated_text and details.
class TgiDecoder final : public DecoderBase {
 public:
  using DecoderBase::DecoderBase;

 private:
  error_code apply(dom::object root) override {
    Piece p;
    bool has_token = false, special = false, final_event = false;
    std::string_view generated, finish;
    std::int64_t generated_tokens = -1, input_length = -1;
    for (dom::key_value_pair kv : root) {
      if (kv.key == "token") {
        dom::object tok;
        if (auto e = kv.value.get_object().get(tok)) return e;
        has_token = true;
        for (dom::key_value_pair t : tok) {
          if (t.key == "text") {
            std::string_view s;
            if (auto e = string_or_null(t.value, s)) return e;
            p.text = text_of(s, text_scratch_);
          } else if (t.key == "special") {
            if (auto e = t.value.get_bool().get(special)) return e;
          }
        }
      } else if (kv.key == "generated_text" && !kv.value.is_null()) {
        std::string_view s;
        if (auto e = kv.value.get_string().get(s)) return e;
        generated = text_of(s, generated_scratch_);
        final_event = true;
      } else if (kv.key == "details" && !kv.value.is_null()) {
        dom::object d;
        if (auto e = kv.value.get_object().get(d)) return e;
        final_event = true;
        for (dom::key_value_pair dk : d) {
          if (dk.key == "finish_reason") {
            if (auto e = string_or_null(dk.value, finish)) return e;
          } else if (dk.key == "generated_tokens") {
            if (auto e = count_or_null(dk.value, generated_tokens)) return e;
          } else if (dk.key == "input_length") {
            if (auto e = count_or_null(dk.value, input_length)) return e;
          }
        }
      } else if (kv.key == "error") {
        server_error(error_value(kv.value));
        return SUCCESS;
      }
    }
    if (has_token) {
      ++tokens_seen_;
      p.cum = tokens_seen_;
      if (special) p.text = {};  // EOS and other special tokens are not output text
    }
    if (full_) p.text = generated;  // /generate (not streamed) has no token events
    content(p);
    if (final_event) {
      usage(input_length, generated_tokens, -1);
      finish_reason(finish);
      end_marker();
    }
    return SUCCESS;
  }

  std::int64_t tokens_seen_ = 0;
  std::string text_scratch_, generated_scratch_;
};

std::unique_ptr<DecoderBase> make_decoder(ApiKind api, const TokenCounter* counter,
                                          bool keep_text) {
  switch (api) {
    case ApiKind::sglang: return std::make_unique<SglangDecoder>(counter, keep_text);
    case ApiKind::llamacpp: return std::make_unique<LlamacppDecoder>(counter, keep_text);
    case ApiKind::tgi: return std::make_unique<TgiDecoder>(counter, keep_text);
    case ApiKind::completions:
    case ApiKind::chat: break;
  }
  return std::make_unique<OpenAiDecoder>(counter, keep_text);
}

}  // namespace

std::unique_ptr<StreamDecoder> make_stream_decoder(ApiKind api, const TokenCounter* counter,
                                                   bool keep_text) {
  return make_decoder(api, counter, keep_text);
}

void decode_full_response(ApiKind api, std::string_view body, Nanos t, RequestRecord& rec,
                          const TokenCounter* counter, bool keep_text) {
  make_decoder(api, counter, keep_text)->decode_full(body, t, rec);
}

}  // namespace inferscope
