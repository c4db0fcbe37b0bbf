#include "inferscope/client/sse.h"

#include <cstring>

namespace inferscope {
namespace {

// First CR or LF in [p, end), or end. Most lines end in LF: find that with the
// vectorised memchr, then look for a CR only in the span before it.
const char* find_eol(const char* p, const char* end) {
  const void* lf = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
  const char* stop = lf ? static_cast<const char*>(lf) : end;
  const void* cr = std::memchr(p, '\r', static_cast<std::size_t>(stop - p));
  return cr ? static_cast<const char*>(cr) : stop;
}

}  // namespace

void SseParser::feed(std::string_view bytes) {
  if (failed_) return;
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  if (last_was_cr_ && p < end) {
    last_was_cr_ = false;
    if (*p == '\n') ++p;  // the LF of a CRLF split across reads
  }
  while (p < end) {
    const char* eol = find_eol(p, end);
    if (eol == end) {
      if (line_.size() + static_cast<std::size_t>(end - p) > kMaxLine) {
        failed_ = true;
        line_.clear();
        return;
      }
      line_.append(p, end);
      return;
    }
    if (line_.size() + static_cast<std::size_t>(eol - p) > kMaxLine) {
      failed_ = true;
      line_.clear();
      return;
    }
    if (line_.empty()) {
      line(std::string_view(p, static_cast<std::size_t>(eol - p)));  // no copy
    } else {
      line_.append(p, eol);
      line(line_);
      line_.clear();
    }
    if (failed_) return;
    p = eol + 1;
    if (*eol == '\r') {
      if (p == end) {
        last_was_cr_ = true;
      } else if (*p == '\n') {
        ++p;
      }
    }
  }
}

void SseParser::finish() {
  if (failed_) return;
  if (!line_.empty()) {
    std::string last = std::move(line_);
    line_.clear();
    line(last);
  }
  last_was_cr_ = false;
  if (!failed_) dispatch();
}

void SseParser::line(std::string_view l) {
  if (l.empty()) {
    dispatch();
    return;
  }
  if (l.front() == ':') return;  // comment (keep-alive)
  std::string_view name = l, value;
  if (const auto colon = l.find(':'); colon != std::string_view::npos) {
    name = l.substr(0, colon);
    value = l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (name == "data") {
    if (pending_.field == "error") dispatch();  // an error line ends its own event
    if (pending_.data.size() + value.size() + 1 > kMaxLine) {
      failed_ = true;
      return;
    }
    if (has_data_) pending_.data.push_back('\n');
    pending_.data.append(value);
    if (pending_.field.empty()) pending_.field = "data";
    has_data_ = true;
  } else if (name == "event") {
    pending_.event.assign(value);
  } else if (name == "error") {
    // Older llama.cpp writes `error: {json}` instead of a data line: its own event.
    if (has_data_) dispatch();
    pending_.field = "error";
    pending_.data.assign(value);
    has_data_ = true;
  }
  // id, retry and unknown fields: ignored.
}

void SseParser::dispatch() {
  if (has_data_) cb_(pending_);
  // Per WHATWG the event type also resets at a blank line even without data.
  pending_.field.clear();
  pending_.event.clear();
  pending_.data.clear();
  has_data_ = false;
}

}  // namespace inferscope
