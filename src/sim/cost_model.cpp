#include "inferscope/sim/cost_model.h"

#include <algorithm>
#include <cmath>

namespace inferscope::sim {
namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// AWQ/GPTQ: 4-bit weights plus, per group of 128, an fp16 scale and a 4-bit zero point.
constexpr double kInt4Bytes = 0.5 + 2.5 / 128.0;

double quant_weight_bytes(Quantization q) {
  switch (q) {
    case Quantization::none: return 2.0;
    case Quantization::fp8:
    case Quantization::int8: return 1.0;
    case Quantization::awq:
    case Quantization::gptq: return kInt4Bytes;
  }
  return 2.0;
}

// Peak FLOP/s of the dtype the matmuls run in. Weight-only schemes (AWQ/GPTQ, and FP8 or
// INT8 on a part without those tensor cores) dequantise and compute in bf16.
double compute_peak(const GpuProfile& g, Quantization q) {
  switch (q) {
    case Quantization::fp8: return (g.fp8_tflops > 0 ? g.fp8_tflops : g.bf16_tflops) * 1e12;
    case Quantization::int8: return (g.int8_tops > 0 ? g.int8_tops : g.bf16_tflops) * 1e12;
    default: return g.bf16_tflops * 1e12;
  }
}
}  // namespace

CostModel::CostModel(const EngineConfig& cfg) : cfg_(cfg) {
  const auto& m = cfg.model;
  kv_bytes_per_token_ = 2.0 * m.layers * m.kv_heads * m.head_dim * (cfg.kv_cache_fp8 ? 1.0 : 2.0);
  quant_bytes_ = quant_weight_bytes(cfg.quantization);
  const double table = static_cast<double>(m.vocab) * m.hidden;  // one embedding table
  // Read per step: everything but the input embedding (tied: the LM head is that table).
  const double read_params = m.tied_embeddings ? m.parameters : m.parameters - table;
  expert_params_per_expert_ = m.experts > 0 ? 3.0 * m.hidden * m.intermediate_size * m.layers : 0.0;
  shared_read_params_ = read_params - m.experts * expert_params_per_expert_;
  active_params_ = shared_read_params_ + m.experts_per_token * expert_params_per_expert_;
  const double linear_params = m.parameters - (m.tied_embeddings ? 1.0 : 2.0) * table;
  weight_bytes_resident_ = linear_params * quant_bytes_ + (m.tied_embeddings ? 1.0 : 2.0) * table * 2.0;
  peak_flops_ = compute_peak(cfg.gpu, cfg.quantization);
  efficiency_ = cfg.kernel_efficiency;
}

double CostModel::weight_bytes_read(std::int64_t tokens) const {
  const auto& m = cfg_.model;
  const double lm_head = static_cast<double>(m.vocab) * m.hidden;
  double bytes = (shared_read_params_ - lm_head) * quant_bytes_ + lm_head * 2.0;
  if (m.experts > 0) {
    const double e = m.experts;
    const double touched =
        e * (1.0 - std::pow(1.0 - m.experts_per_token / e, static_cast<double>(std::max<std::int64_t>(tokens, 1))));
    bytes += touched * expert_params_per_expert_ * quant_bytes_;
  }
  return bytes;
}

double CostModel::step_flops(const StepShape& s) const {
  const auto& m = cfg_.model;
  const double d = static_cast<double>(m.heads) * m.head_dim;
  return 2.0 * active_params_ * static_cast<double>(s.tokens) + 4.0 * m.layers * d * s.attn_pairs;
}

double CostModel::prefill_flops(std::int64_t prompt_tokens) const {
  StepShape s;
  s.add(prompt_tokens, 0);
  return step_flops(s);
}

std::int64_t CostModel::kv_capacity_tokens() const {
  const double tp = cfg_.tensor_parallel_size;
  const double per_gpu = cfg_.gpu.memory_gb * 1e9 * cfg_.gpu_memory_utilization - weight_bytes_resident_ / tp -
                         cfg_.activation_reserve_gib * kGiB;
  if (per_gpu <= 0) return 0;
  return static_cast<std::int64_t>(std::floor(tp * per_gpu / kv_bytes_per_token_));
}

StepTime CostModel::core_time(const StepShape& s) const {
  StepTime t;
  const double tp = cfg_.tensor_parallel_size;
  t.compute_s = step_flops(s) / tp / (peak_flops_ * cfg_.mfu * efficiency_);
  const double bytes = (weight_bytes_read(s.tokens) + static_cast<double>(s.kv_tokens_read) * kv_bytes_per_token_) / tp;
  t.memory_s = bytes / (cfg_.gpu.memory_bandwidth_gbps * 1e9 * cfg_.bandwidth_efficiency * efficiency_);
  return t;
}

StepTime CostModel::step_time(const StepShape& s, int spec_decode_seqs) const {
  StepTime t = core_time(s);
  const auto& m = cfg_.model;
  const int tp = cfg_.tensor_parallel_size;
  if (tp > 1) {
    const Link& link = cfg_.interconnect == LinkKind::nvlink && cfg_.gpu.nvlink ? *cfg_.gpu.nvlink : cfg_.gpu.pcie;
    // Ring all-reduce of the activations (bf16): each rank sends and receives 2(TP−1)/TP
    // of the buffer. Two per layer (after attention and after the MLP).
    const double bytes = static_cast<double>(s.tokens) * m.hidden * 2.0;
    const double one = link.latency_us * 1e-6 + 2.0 * (tp - 1) / tp * bytes / (link.bandwidth_gbps * 1e9);
    t.comm_s = 2.0 * m.layers * one;
  }
  t.overhead_s = (cfg_.step_overhead_us + (cfg_.cuda_graphs ? 0.0 : m.layers * cfg_.eager_overhead_per_layer_us) +
                  cfg_.per_seq_overhead_us * s.num_seqs) * 1e-6;
  if (cfg_.speculative_k > 0 && spec_decode_seqs > 0) {
    // k sequential draft steps of a batch of one token per sequence, each costing
    // draft_cost_ratio of the target model's step of that shape (weights only).
    StepShape d;
    d.tokens = spec_decode_seqs;
    d.num_seqs = spec_decode_seqs;
    const StepTime dt = core_time(d);
    t.draft_s = cfg_.speculative_k * cfg_.draft_cost_ratio * std::max(dt.compute_s, dt.memory_s);
  }
  t.total_s = std::max(t.compute_s, t.memory_s) + t.comm_s + t.overhead_s + t.draft_s;
  return t;
}

double CostModel::expected_tokens_per_step(int k, double alpha) {
  if (k <= 0) return 1.0;
  if (alpha >= 1.0) return k + 1.0;
  return (1.0 - std::pow(alpha, k + 1)) / (1.0 - alpha);
}

}  // namespace inferscope::sim
