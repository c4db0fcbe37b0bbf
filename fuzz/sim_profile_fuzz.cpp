// libFuzzer target: the simulator's YAML profile parsers. Any input must either parse or
// throw InputError; nothing else may escape, crash or hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "inferscope/core/errors.h"
#include "inferscope/sim/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)inferscope::sim::parse_gpu_profile(text, "fuzz.yaml");
  } catch (const inferscope::InputError&) {
  }
  try {
    (void)inferscope::sim::parse_model_profile(text, "fuzz.yaml");
  } catch (const inferscope::InputError&) {
  }
  return 0;
}
