#pragma once
// The analytic (roofline) cost model of one engine step and of memory. Pure functions of
// an EngineConfig; no state, thread-safe. Units: seconds, bytes, FLOPs. The formulas
// and worked numbers are in docs/simulator.md.
#include <cstdint>

#include "inferscope/sim/config.h"

namespace inferscope::sim {

inline constexpr int kBlockTokens = 16;  // paged-KV block size (vLLM default)

// What one step computes, aggregated over its sequences. Per sequence with `q` new tokens
// on top of `c` already cached: tokens += q, attn_pairs += q·c + q²/2 (query-key pairs,
// causal), kv_tokens_read += c + q.
struct StepShape {
  std::int64_t tokens = 0;
  double attn_pairs = 0;
  std::int64_t kv_tokens_read = 0;
  int num_seqs = 0;
  void add(std::int64_t q, std::int64_t c) {
    tokens += q;
    attn_pairs += static_cast<double>(q) * static_cast<double>(c) + 0.5 * static_cast<double>(q) * static_cast<double>(q);
    kv_tokens_read += c + q;
    ++num_seqs;
  }
};

struct StepTime {
  double compute_s = 0;   // FLOPs / (TP · peak · MFU · kernel efficiency)
  double memory_s = 0;    // bytes / (bandwidth · η · kernel efficiency), per GPU
  double comm_s = 0;      // TP all-reduces
  double overhead_s = 0;  // fixed per step + per sequence (+ eager launches)
  double draft_s = 0;     // speculative draft model
  double total_s = 0;     // max(compute, memory) + comm + overhead + draft
};

class CostModel {
 public:
  explicit CostModel(const EngineConfig& cfg);

  // 2 · layers · kv_heads · head_dim · bytes (2 bf16, 1 fp8).
  double kv_bytes_per_token() const { return kv_bytes_per_token_; }
  // Weights resident in memory over all TP ranks (quantised linear layers, bf16 embedding
  // and LM head).
  double weight_bytes_resident() const { return weight_bytes_resident_; }
  // Weight bytes read by a step of `tokens` tokens, all ranks together: the linear
  // layers and LM head, not the embedding table (a lookup reads one row). For MoE only
  // the experts touched: E·(1 − (1 − k/E)^tokens) per layer.
  double weight_bytes_read(std::int64_t tokens) const;
  // Parameters multiplied per token (N in 2·N·S): non-embedding, active experts only.
  double active_params() const { return active_params_; }
  // 2·N·T + 4·L·d·attn_pairs (d = heads · head_dim); for one S-token prefill from empty
  // that is 2·N·S + 2·L·d·S².
  double step_flops(const StepShape& s) const;
  double prefill_flops(std::int64_t prompt_tokens) const;
  // Peak FLOP/s of the compute dtype (per GPU).
  double peak_flops() const { return peak_flops_; }

  // KV cache size of one replica: TP · (memory · utilisation − weights/TP − activation
  // reserve) / kv_bytes_per_token, in whole blocks. ≤ 0 means the model does not fit.
  std::int64_t kv_capacity_tokens() const;
  std::int64_t kv_capacity_blocks() const { return kv_capacity_tokens() / kBlockTokens; }

  // Step time of a batch of this shape. With speculative decoding the caller passes the
  // verify step's shape and the number of decoding sequences (for the draft model cost).
  StepTime step_time(const StepShape& s, int spec_decode_seqs = 0) const;

  // Expected tokens emitted per sequence per verify step: (1 − α^(k+1)) / (1 − α).
  static double expected_tokens_per_step(int k, double alpha);

 private:
  StepTime core_time(const StepShape& s) const;

  EngineConfig cfg_;
  double kv_bytes_per_token_ = 0;
  double weight_bytes_resident_ = 0;
  double active_params_ = 0;
  double shared_read_params_ = 0;     // non-expert, non-embedding parameters
  double expert_params_per_expert_ = 0;  // one expert, all layers
  double quant_bytes_ = 2;            // bytes per quantised linear weight
  double peak_flops_ = 0;
  double efficiency_ = 1;
};

}  // namespace inferscope::sim
