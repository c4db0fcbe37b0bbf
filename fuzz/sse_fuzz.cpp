// libFuzzer target for the SSE parser: the input is split into reads at positions taken
// from its first bytes; the events must not depend on the split.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/client/sse.h"

namespace {

struct Flat {
  std::string out;  // events serialised, to compare two parses
  void add(const inferscope::SseEvent& e) {
    out += e.field;
    out.push_back('\0');
    out += e.event;
    out.push_back('\0');
    out += e.data;
    out.push_back('\1');
  }
};

std::string parse(std::string_view body, const std::vector<std::size_t>& cuts, bool* failed) {
  Flat f;
  inferscope::SseParser p([&f](const inferscope::SseEvent& e) { f.add(e); });
  std::size_t prev = 0;
  for (std::size_t c : cuts) {
    p.feed(body.substr(prev, c - prev));
    prev = c;
  }
  p.feed(body.substr(prev));
  p.finish();
  *failed = p.failed();
  return f.out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t ncuts = data[0] % 8;
  if (size < 1 + ncuts) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data + 1 + ncuts), size - 1 - ncuts);
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < ncuts; ++i) {
    const std::size_t c = body.empty() ? 0 : data[1 + i] * body.size() / 256;
    cuts.push_back(cuts.empty() ? c : std::max(c, cuts.back()));
  }
  bool failed_whole = false, failed_split = false;
  const std::string whole = parse(body, {}, &failed_whole);
  const std::string split = parse(body, cuts, &failed_split);
  if (whole != split || failed_whole != failed_split) std::abort();
  return 0;
}
