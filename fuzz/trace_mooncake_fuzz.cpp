// libFuzzer target: the mooncake trace reader must either parse or throw InputError, never
// crash, hang or throw anything else.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "inferscope/core/errors.h"
#include "inferscope/workload/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    (void)inferscope::workload::parse_trace(in, inferscope::workload::TraceFormat::mooncake, "fuzz");
  } catch (const inferscope::InputError&) {
  }
  return 0;
}
