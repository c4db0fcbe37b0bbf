#pragma once
// Hardware and model profiles for the simulated engine: plain data loaded from YAML files
// (profiles/gpus/*.yaml, profiles/models/*.yaml, or a user's own file). See
// docs/simulator.md for the fields and their units.
//
// Loading throws InputError(file, line, field, message) for a missing, mistyped or
// out-of-range field; nothing else in the simulator reads files.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferscope::sim {

// One GPU-to-GPU link as seen by one GPU.
struct Link {
  double bandwidth_gbps = 0;  // GB/s (1e9 bytes) each way
  double latency_us = 0;      // fixed cost of one collective on this link
};

struct GpuProfile {
  std::string name;
  double memory_gb = 0;              // device memory, 1e9 bytes
  double memory_bandwidth_gbps = 0;  // GB/s
  double bf16_tflops = 0;            // dense peaks
  double fp8_tflops = 0;             // 0: no FP8 tensor cores
  double int8_tops = 0;              // 0: no INT8 tensor cores
  std::optional<Link> nvlink;        // absent on PCIe-only parts
  Link pcie;
  std::string source;  // file it was loaded from
};

struct ModelProfile {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int intermediate_size = 0;  // FFN width (per expert for MoE)
  int vocab = 0;
  double parameters = 0;      // total, embeddings included
  int experts = 0;            // 0: dense
  int experts_per_token = 0;
  bool tied_embeddings = false;
  int max_model_len = 0;      // context length the server allows by default
  std::string source;
};

// Parse a profile from YAML text; `where` names the file in errors.
GpuProfile parse_gpu_profile(const std::string& yaml_text, const std::string& where);
ModelProfile parse_model_profile(const std::string& yaml_text, const std::string& where);

// Directories searched for a profile given by name, in order: `extra_dirs` (e.g.
// --profile-dir), $INFERSCOPE_PROFILE_DIR, ~/.config/inferscope/profiles, then the
// profiles shipped with the source tree.
std::vector<std::string> profile_search_dirs(const std::vector<std::string>& extra_dirs);

// `name_or_path`: a path to a .yaml file (contains '/' or ends in .yaml/.yml), or a name
// matched case-insensitively against <dir>/gpus/<name>.yaml (models: <dir>/models/) and
// then against each file's `name:` field. Throws InputError(`flag`, …) when not found,
// listing what is available.
GpuProfile load_gpu_profile(std::string_view name_or_path, const std::vector<std::string>& extra_dirs,
                            const std::string& flag = "--gpu");
ModelProfile load_model_profile(std::string_view name_or_path,
                                const std::vector<std::string>& extra_dirs,
                                const std::string& flag = "--model-profile");

// Names of the profiles found in the search path (for --help and error messages).
std::vector<std::string> list_profiles(std::string_view kind /* "gpus" or "models" */,
                                       const std::vector<std::string>& extra_dirs);

}  // namespace inferscope::sim
