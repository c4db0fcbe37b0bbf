#pragma once
// Simulated-engine flags shared by `sim predict`, `sim serve` and `run` (named as vLLM
// names them where it has a name), and the manifest entry describing an engine config.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "inferscope/core/errors.h"
#include "inferscope/sim/config.h"
#include "inferscope/sim/profile.h"

namespace inferscope::app {

// Engine flags shared by predict and serve, named as vLLM names them where it has one.
struct EngineFlags {
  std::string gpu = "H200-SXM";
  std::string model = "Llama-3-8B";
  std::vector<std::string> profile_dirs;
  sim::EngineConfig cfg;  // scalar knobs are bound directly
  std::string kv_cache_dtype = "auto";
  std::string quantization = "none";
  std::string interconnect = "nvlink";

  void add(CLI::App* c) {
    c->add_option("--gpu", gpu, "GPU profile: name (A100-80G, H100-SXM, H200-SXM, L40S) or YAML file")->capture_default_str();
    c->add_option("--model-profile", model, "Model profile: name (Llama-3-8B, Llama-3-70B, Qwen2.5-7B, Mixtral-8x7B) or YAML file")
        ->capture_default_str();
    c->add_option("--profile-dir", profile_dirs, "Extra folder(s) with gpus/*.yaml and models/*.yaml, searched first");
    c->add_option("--served-model-name", cfg.served_model_name, "Model name in the API and metrics (default: the profile's)");
    c->add_option("--max-num-seqs", cfg.max_num_seqs, "Most sequences in one step")->capture_default_str();
    c->add_option("--max-num-batched-tokens", cfg.max_num_batched_tokens, "Token budget per step")->capture_default_str();
    c->add_option("--max-model-len", cfg.max_model_len, "Context length limit (default: the model's)");
    c->add_flag("--enable-chunked-prefill,!--no-enable-chunked-prefill", cfg.enable_chunked_prefill,
                "Split long prompts over steps (default on)");
    c->add_option("--gpu-memory-utilization", cfg.gpu_memory_utilization, "Fraction of GPU memory the engine may use")
        ->capture_default_str();
    c->add_option("--kv-cache-dtype", kv_cache_dtype, "auto (bf16) | fp8")->capture_default_str();
    c->add_option("--num-gpu-blocks-override", cfg.num_gpu_blocks_override, "KV blocks per replica, ignoring memory");
    c->add_option("--quantization", quantization, "none | fp8 | int8 | awq | gptq")->capture_default_str();
    c->add_option("--kernel-efficiency", cfg.kernel_efficiency,
                  "Achieved fraction of the dtype's roofline (1 = fast kernel active)")->capture_default_str();
    c->add_option("--mfu", cfg.mfu, "Achieved fraction of peak FLOP/s")->capture_default_str();
    c->add_option("--bandwidth-efficiency", cfg.bandwidth_efficiency, "Achieved fraction of peak memory bandwidth")
        ->capture_default_str();
    c->add_option("--tensor-parallel-size,--tp", cfg.tensor_parallel_size, "GPUs per replica")->capture_default_str();
    c->add_option("--interconnect", interconnect, "nvlink | pcie (tensor-parallel all-reduces)")->capture_default_str();
    c->add_option("--data-parallel-size,--dp", cfg.data_parallel_size, "Replicas behind a least-loaded router")
        ->capture_default_str();
    c->add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", cfg.enable_prefix_caching,
                "Reuse KV blocks of shared prefixes (default on)");
    c->add_option("--speculative-k", cfg.speculative_k, "Draft tokens per step (0 = off)")->capture_default_str();
    c->add_option("--speculative-alpha", cfg.speculative_alpha, "Draft token acceptance rate")->capture_default_str();
    c->add_option("--draft-cost-ratio", cfg.draft_cost_ratio, "Draft step cost / target step cost")->capture_default_str();
    c->add_flag("--cuda-graphs,!--enforce-eager", cfg.cuda_graphs, "CUDA graphs on (default) or eager mode");
    c->add_option("--long-prefill-threshold", cfg.long_prefill_threshold,
                  "Prompts this long go to a separate long queue (0 = one queue)");
    c->add_option("--long-prefill-max-tokens", cfg.long_prefill_max_tokens, "Long-prefill tokens per step (0 = budget/4)");
    c->add_option("--frontend-workers", cfg.frontend_workers, "API-server CPU workers")->capture_default_str();
    c->add_option("--frontend-request-us", cfg.frontend_request_us, "Front-end CPU per request (µs)")->capture_default_str();
    c->add_option("--frontend-chunk-us", cfg.frontend_chunk_us, "Front-end CPU per streamed chunk (µs)")->capture_default_str();
    c->add_option("--early-stop-fraction", cfg.early_stop_fraction,
                  "Share of replies that stop early when ignore_eos is off")->capture_default_str();
  }

  sim::EngineConfig build(std::uint64_t seed) const {
    sim::EngineConfig c = cfg;
    c.gpu = sim::load_gpu_profile(gpu, profile_dirs, "--gpu");
    c.model = sim::load_model_profile(model, profile_dirs, "--model-profile");
    if (kv_cache_dtype != "auto" && kv_cache_dtype != "fp8")
      throw InputError("--kv-cache-dtype", fmt::format("unknown KV cache dtype '{}' (auto, fp8)", kv_cache_dtype));
    c.kv_cache_fp8 = kv_cache_dtype == "fp8";
    c.quantization = sim::quantization_from_string(quantization);
    c.interconnect = sim::link_from_string(interconnect);
    // A PCIe-only GPU with TP over the default link: use what it has.
    if (!c.gpu.nvlink && c.interconnect == sim::LinkKind::nvlink && interconnect == "nvlink" && c.tensor_parallel_size > 1)
      c.interconnect = sim::LinkKind::pcie;
    c.seed = seed;
    sim::validate(c);
    return c;
  }
};

inline nlohmann::json engine_manifest(const sim::EngineConfig& c, std::int64_t kv_blocks) {
  return {{"target", "sim-in-process"},
          {"gpu", c.gpu.name},
          {"gpu_profile", c.gpu.source},
          {"model", c.model_name()},
          {"model_profile", c.model.source},
          {"quantization", std::string(to_string(c.quantization))},
          {"kv_cache_dtype", c.kv_cache_fp8 ? "fp8" : "auto"},
          {"tensor_parallel_size", c.tensor_parallel_size},
          {"interconnect", std::string(to_string(c.interconnect))},
          {"data_parallel_size", c.data_parallel_size},
          {"max_num_seqs", c.max_num_seqs},
          {"max_num_batched_tokens", c.max_num_batched_tokens},
          {"enable_chunked_prefill", c.enable_chunked_prefill},
          {"enable_prefix_caching", c.enable_prefix_caching},
          {"gpu_memory_utilization", c.gpu_memory_utilization},
          {"kv_blocks_per_replica", kv_blocks},
          {"speculative_k", c.speculative_k},
          {"speculative_alpha", c.speculative_alpha},
          {"cuda_graphs", c.cuda_graphs},
          {"mfu", c.mfu},
          {"bandwidth_efficiency", c.bandwidth_efficiency},
          {"kernel_efficiency", c.kernel_efficiency},
          {"frontend_workers", c.frontend_workers}};
}

}  // namespace inferscope::app
