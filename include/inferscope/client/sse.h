#pragma once
// Incremental Server-Sent Events parser (WHATWG EventSource rules, plus the engines'
// deviations: `data:` with or without a space (TGI), a bare `error: {…}` line (older
// llama.cpp), CRLF, LF or CR line ends, comments, missing final blank line).
//
// Feed bytes in any split; each complete event is delivered to the callback, in order.
// `id:` and `retry:` lines and unknown fields are ignored. Single-threaded; owns its
// buffers. The callback must not call feed()/finish() on the same parser.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace inferscope {

struct SseEvent {
  std::string field;  // "data" for data events; "error" for a bare error line
  std::string event;  // value of a preceding `event:` line, or empty
  std::string data;   // joined data lines ("\n" between lines)
};

class SseParser {
 public:
  using Callback = std::function<void(const SseEvent&)>;
  explicit SseParser(Callback cb) : cb_(std::move(cb)) {}
  // Parses `bytes`. Ignored once failed().
  void feed(std::string_view bytes);
  // End of body: a last line without its line end is taken as complete, and an event
  // still pending without its blank line is dispatched.
  void finish();
  // Bytes buffered and not yet part of a complete line (bounded: see kMaxLine).
  std::size_t buffered() const { return line_.size(); }
  // A line, or the data of one event, grew past kMaxLine: the stream is malformed and the
  // parser stops (the stream decoder turns this into ErrorClass::bad_payload).
  bool failed() const { return failed_; }
  static constexpr std::size_t kMaxLine = 16 * 1024 * 1024;

 private:
  void line(std::string_view l);
  void dispatch();
  Callback cb_;
  std::string line_;  // partial line carried over between feed() calls
  SseEvent pending_;
  bool has_data_ = false;
  bool last_was_cr_ = false;  // previous byte was CR: a following LF belongs to it
  bool failed_ = false;
};

}  // namespace inferscope
