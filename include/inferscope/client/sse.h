#pragma once
// Incremental Server-Sent Events parser (WHATWG EventSource rules, plus the engines'
// deviations: `data:` with or without a space (TGI), a bare `error: {…}` line (older
// llama.cpp), CRLF or LF line ends, comments, missing final blank line).
//
// Feed bytes in any split; each complete event is delivered to the callback.
// Single-threaded; owns its buffer.
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
  void feed(std::string_view bytes);
  // End of body: dispatches an event still pending without its blank line.
  void finish();
  // Bytes buffered and not yet part of a complete line (bounded: see kMaxLine).
  std::size_t buffered() const { return line_.size(); }
  static constexpr std::size_t kMaxLine = 16 * 1024 * 1024;

 private:
  void line(std::string_view l);
  void dispatch();
  Callback cb_;
  std::string line_;
  SseEvent pending_;
  bool has_data_ = false;
  bool last_was_cr_ = false;
};

}  // namespace inferscope
