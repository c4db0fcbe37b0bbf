#pragma once
// Shared helpers for the simulator tests: configs from the shipped profiles.
#include <string>

#include "inferscope/sim/config.h"
#include "inferscope/sim/profile.h"

namespace inferscope::sim::testing {

inline EngineConfig make_config(const std::string& gpu = "H200-SXM", const std::string& model = "Llama-3-8B") {
  EngineConfig c;
  c.gpu = load_gpu_profile(gpu, {INFERSCOPE_PROFILES_DIR});
  c.model = load_model_profile(model, {INFERSCOPE_PROFILES_DIR});
  return c;
}

}  // namespace inferscope::sim::testing
