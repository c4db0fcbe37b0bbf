#pragma once
// Every knob of the simulated engine, with vLLM's names where vLLM has one. Plain value
// type; validate() throws InputError naming the CLI flag of a bad value.
#include <cstdint>
#include <string>
#include <string_view>

#include "inferscope/sim/profile.h"

namespace inferscope::sim {

enum class Quantization : std::uint8_t { none, fp8, int8, awq, gptq };
std::string_view to_string(Quantization q);
Quantization quantization_from_string(std::string_view s);  // throws InputError("--quantization")

enum class LinkKind : std::uint8_t { nvlink, pcie };
std::string_view to_string(LinkKind l);
LinkKind link_from_string(std::string_view s);  // throws InputError("--interconnect")

struct EngineConfig {
  GpuProfile gpu;
  ModelProfile model;
  std::string served_model_name;  // empty: model.name

  // Scheduler (vLLM V1 defaults for an H100-class online server).
  int max_num_seqs = 256;
  int max_num_batched_tokens = 8192;  // per-step token budget
  bool enable_chunked_prefill = true;
  int max_model_len = 0;              // 0: the model profile's
  // Short/long queues: prompts of at least this many tokens go to a separate long queue
  // that is served after the short one, one long prefill at a time, at most
  // long_prefill_max_tokens per step. 0 = one FCFS queue.
  int long_prefill_threshold = 0;
  int long_prefill_max_tokens = 0;  // 0: max_num_batched_tokens / 4

  // Memory.
  double gpu_memory_utilization = 0.9;
  bool kv_cache_fp8 = false;
  double activation_reserve_gib = 2.0;  // per GPU, peak activations + CUDA graph pools
  bool enable_prefix_caching = true;
  std::int64_t num_gpu_blocks_override = 0;  // > 0: KV blocks per replica, ignoring memory

  // Weights and kernels.
  Quantization quantization = Quantization::none;
  // Multiplies MFU and bandwidth efficiency: 1 when the fast kernel for the dtype is
  // active; < 1 models a fallback kernel (a quantised model that gets slower).
  double kernel_efficiency = 1.0;
  double mfu = 0.45;                   // achieved fraction of peak FLOP/s
  double bandwidth_efficiency = 0.7;   // achieved fraction of peak memory bandwidth

  // Parallelism.
  int tensor_parallel_size = 1;
  LinkKind interconnect = LinkKind::nvlink;
  int data_parallel_size = 1;  // replicas behind a least-loaded router

  // Speculative decoding (0 = off): k draft tokens per step, acceptance rate alpha, and a
  // draft model whose per-token step costs draft_cost_ratio of the target's decode step.
  int speculative_k = 0;
  double speculative_alpha = 0.7;
  double draft_cost_ratio = 0.05;

  // Fixed costs per engine step.
  bool cuda_graphs = true;
  double step_overhead_us = 300;          // scheduler + launch with CUDA graphs
  double eager_overhead_per_layer_us = 60;  // extra per layer without CUDA graphs
  double per_seq_overhead_us = 4;         // sampling and bookkeeping per sequence

  // Front end (API server): a pool of CPU workers shared by all replicas. Each request
  // costs frontend_request_us + frontend_token_us per prompt token before the engine
  // sees it; each step's output costs frontend_step_us + frontend_chunk_us per streamed
  // chunk before its tokens leave. A saturated pool delays both.
  int frontend_workers = 1;
  double frontend_request_us = 300;
  double frontend_token_us = 0.05;
  double frontend_step_us = 50;
  double frontend_chunk_us = 15;

  // Default stop: with ignore_eos off, this fraction of replies meets a stop token early,
  // at a length drawn uniformly from [max(min_tokens, 1), max_tokens].
  double early_stop_fraction = 0.3;

  std::uint64_t seed = 0;
  bool record_steps = true;  // keep one StepRecord per engine step (engine.jsonl)

  const std::string& model_name() const { return served_model_name.empty() ? model.name : served_model_name; }
  int effective_max_model_len() const { return max_model_len > 0 ? max_model_len : model.max_model_len; }
};

// Throws InputError naming the flag of the first bad value (e.g. "--tensor-parallel-size").
void validate(const EngineConfig& cfg);

}  // namespace inferscope::sim
