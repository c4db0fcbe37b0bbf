// libFuzzer target for the stream decoders: random bytes, split into reads at random
// positions, fed to every ApiKind's decoder (with and without a token counter). Checks
// the record's invariants; crashes and sanitizer reports are the findings.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "inferscope/client/protocol.h"
#include "inferscope/core/sim_tokenizer.h"

namespace {

// Invariants of any decoded record, whatever the bytes.
void check(const inferscope::RequestRecord& r) {
  using inferscope::ErrorClass;
  if (r.t_first >= 0 && (r.chunks.empty() || r.t_first != r.chunks.front().t_ns)) std::abort();
  if (!r.chunks.empty() && r.t_last != r.chunks.back().t_ns) std::abort();
  for (std::size_t i = 1; i < r.chunks.size(); ++i)
    if (r.chunks[i].t_ns < r.chunks[i - 1].t_ns) std::abort();
  for (const auto& c : r.chunks)
    if (c.tokens < 0) std::abort();
  if (r.error != ErrorClass::none && r.error != ErrorClass::bad_payload &&
      r.error != ErrorClass::server_error_event && r.error != ErrorClass::truncated)
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static const inferscope::SimTokenizer counter;
  const std::uint8_t seed = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  for (auto api : {inferscope::ApiKind::completions, inferscope::ApiKind::chat,
                   inferscope::ApiKind::sglang, inferscope::ApiKind::llamacpp,
                   inferscope::ApiKind::tgi}) {
    for (const inferscope::TokenCounter* c : {static_cast<const inferscope::TokenCounter*>(nullptr),
                                              static_cast<const inferscope::TokenCounter*>(&counter)}) {
      inferscope::RequestRecord rec;
      auto dec = inferscope::make_stream_decoder(api, c, true);
      // Read sizes from a small LCG seeded by the first byte: 1..64 bytes per read.
      std::uint32_t state = seed * 2654435761u + 1;
      std::size_t pos = 0;
      inferscope::Nanos t = 0;
      while (pos < body.size()) {
        state = state * 1664525u + 1013904223u;
        const std::size_t n = 1 + (state >> 24) % 64;
        dec->on_body(body.substr(pos, n), ++t, rec);
        pos += n;
      }
      dec->on_end(++t, rec);
      if (!dec->finished()) std::abort();  // on_end always settles the outcome
      check(rec);
      inferscope::RequestRecord full;
      inferscope::decode_full_response(api, body, 1, full, c, true);
      check(full);
    }
  }
  return 0;
}
