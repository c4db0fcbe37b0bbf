#include "inferscope/sim/config.h"

#include <fmt/format.h>

#include "inferscope/core/errors.h"

namespace inferscope::sim {

std::string_view to_string(Quantization q) {
  switch (q) {
    case Quantization::none: return "none";
    case Quantization::fp8: return "fp8";
    case Quantization::int8: return "int8";
    case Quantization::awq: return "awq";
    case Quantization::gptq: return "gptq";
  }
  return "none";
}

Quantization quantization_from_string(std::string_view s) {
  for (auto q : {Quantization::none, Quantization::fp8, Quantization::int8, Quantization::awq, Quantization::gptq})
    if (to_string(q) == s) return q;
  throw InputError("--quantization", fmt::format("unknown quantization '{}' (none, fp8, int8, awq, gptq)", s));
}

std::string_view to_string(LinkKind l) { return l == LinkKind::nvlink ? "nvlink" : "pcie"; }

LinkKind link_from_string(std::string_view s) {
  if (s == "nvlink") return LinkKind::nvlink;
  if (s == "pcie") return LinkKind::pcie;
  throw InputError("--interconnect", fmt::format("unknown interconnect '{}' (nvlink, pcie)", s));
}

namespace {
void require(bool ok, const char* flag, const std::string& msg) {
  if (!ok) throw InputError(flag, msg);
}
}  // namespace

void validate(const EngineConfig& c) {
  require(c.max_num_seqs >= 1, "--max-num-seqs", "must be at least 1");
  require(c.max_num_batched_tokens >= 1, "--max-num-batched-tokens", "must be at least 1");
  require(c.enable_chunked_prefill || c.max_num_batched_tokens >= c.effective_max_model_len(),
          "--max-num-batched-tokens",
          "must be at least max_model_len when chunked prefill is off (a prompt must fit one step)");
  require(c.max_model_len >= 0, "--max-model-len", "must not be negative");
  require(c.gpu_memory_utilization > 0 && c.gpu_memory_utilization <= 1, "--gpu-memory-utilization",
          "must be in (0, 1]");
  require(c.kernel_efficiency > 0 && c.kernel_efficiency <= 1, "--kernel-efficiency", "must be in (0, 1]");
  require(c.mfu > 0 && c.mfu <= 1, "--mfu", "must be in (0, 1]");
  require(c.bandwidth_efficiency > 0 && c.bandwidth_efficiency <= 1, "--bandwidth-efficiency", "must be in (0, 1]");
  require(c.tensor_parallel_size >= 1 && c.tensor_parallel_size <= 64, "--tensor-parallel-size", "must be in [1, 64]");
  require(c.model.kv_heads % c.tensor_parallel_size == 0 || c.tensor_parallel_size % c.model.kv_heads == 0,
          "--tensor-parallel-size", fmt::format("must divide the model's {} KV heads (or be a multiple)", c.model.kv_heads));
  require(c.interconnect != LinkKind::nvlink || c.tensor_parallel_size == 1 || c.gpu.nvlink.has_value(),
          "--interconnect", fmt::format("GPU {} has no NVLink; use --interconnect pcie", c.gpu.name));
  require(c.data_parallel_size >= 1 && c.data_parallel_size <= 1024, "--data-parallel-size", "must be in [1, 1024]");
  require(c.speculative_k >= 0 && c.speculative_k <= 32, "--speculative-k", "must be in [0, 32]");
  require(c.speculative_alpha >= 0 && c.speculative_alpha <= 1, "--speculative-alpha", "must be in [0, 1]");
  require(c.draft_cost_ratio >= 0 && c.draft_cost_ratio <= 1, "--draft-cost-ratio", "must be in [0, 1]");
  require(c.frontend_workers >= 1 && c.frontend_workers <= 1024, "--frontend-workers", "must be in [1, 1024]");
  require(c.frontend_request_us >= 0 && c.frontend_token_us >= 0 && c.frontend_step_us >= 0 && c.frontend_chunk_us >= 0,
          "--frontend-*", "front-end costs must not be negative");
  require(c.step_overhead_us >= 0 && c.eager_overhead_per_layer_us >= 0 && c.per_seq_overhead_us >= 0,
          "--step-overhead-us", "overheads must not be negative");
  require(c.num_gpu_blocks_override >= 0, "--num-gpu-blocks-override", "must not be negative");
  require(c.activation_reserve_gib >= 0, "--activation-reserve-gib", "must not be negative");
  require(c.long_prefill_threshold >= 0, "--long-prefill-threshold", "must not be negative");
  require(c.long_prefill_max_tokens >= 0, "--long-prefill-max-tokens", "must not be negative");
  require(c.early_stop_fraction >= 0 && c.early_stop_fraction <= 1, "--early-stop-fraction", "must be in [0, 1]");
}

}  // namespace inferscope::sim
