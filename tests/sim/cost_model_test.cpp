// The roofline numbers of DESIGN.md, worked by hand for Llama-3-8B (config.json: 32 layers,
// hidden 4096, 32 heads, 8 KV heads, head_dim 128, vocab 128256, 8.03e9 parameters).
//
//   Non-embedding parameters N = 8.03e9 − 128256·4096 = 7,504,663,424 (the input
//   embedding is a lookup; the untied LM head is a matmul and is counted).
#include <gtest/gtest.h>

#include "inferscope/sim/cost_model.h"
#include "sim_test_util.h"

namespace inferscope::sim {
namespace {
using testing::make_config;

TEST(CostModel, KvBytesPerTokenAndFp8Halves) {
  auto cfg = make_config();
  // 2 (K and V) · 32 layers · 8 KV heads · 128 head_dim · 2 bytes = 131,072 B = 128 KiB.
  EXPECT_DOUBLE_EQ(CostModel(cfg).kv_bytes_per_token(), 131072.0);
  cfg.kv_cache_fp8 = true;  // 1 byte per element: 64 KiB
  EXPECT_DOUBLE_EQ(CostModel(cfg).kv_bytes_per_token(), 65536.0);
}

TEST(CostModel, PrefillOf1024TokensMatchesTheWorkedNumber) {
  auto cfg = make_config("H100-SXM");
  cfg.mfu = 0.6;
  const CostModel cm(cfg);
  // FLOPs = 2·N·S + 2·L·d·S² = 2·7,504,663,424·1024 + 2·32·4096·1024²
  //       = 15,369,550,692,352 + 274,877,906,944 = 15,644,428,599,296 ≈ 15.6 TFLOP.
  EXPECT_DOUBLE_EQ(cm.prefill_flops(1024), 15644428599296.0);
  StepShape s;
  s.add(1024, 0);
  const StepTime t = cm.step_time(s);
  // compute = 15.6444e12 / (989.4e12 · 0.6) = 26.353 ms (DESIGN.md: ≈ 26 ms).
  EXPECT_NEAR(t.compute_s * 1e3, 26.353, 0.001);
  // memory = (15,009,326,848 weight bytes + 1024·131,072 KV bytes) / (3.35e12 · 0.7)
  //        = 6.458 ms: compute-bound.
  EXPECT_NEAR(t.memory_s * 1e3, 6.458, 0.001);
  // total = compute + 300 µs step overhead + 4 µs for the one sequence.
  EXPECT_NEAR(t.total_s * 1e3, 26.353 + 0.304, 0.001);
}

TEST(CostModel, BatchOneDecodeStepIsTheWeightRoofline) {
  // Weights read per step = 2 bytes · N = 15,009,326,848 B ≈ 15.0 GB.
  auto h200 = make_config("H200-SXM");
  EXPECT_DOUBLE_EQ(CostModel(h200).weight_bytes_read(1), 15009326848.0);
  StepShape s;
  s.add(1, 0);  // one token, empty context: KV read = 1 token · 131,072 B
  // H200: (15,009,326,848 + 131,072) / (4.8e12 · 0.7) = 4.4671 ms (DESIGN.md ≈ 4.5 ms).
  EXPECT_NEAR(CostModel(h200).step_time(s).memory_s * 1e3, 4.4671, 0.0001);
  // H100: / (3.35e12 · 0.7) = 6.4006 ms (DESIGN.md ≈ 6.5 ms).
  EXPECT_NEAR(CostModel(make_config("H100-SXM")).step_time(s).memory_s * 1e3, 6.4006, 0.0001);
  // Memory-bound: compute for one token is 2·N / (989.4e12·0.45) = 0.034 ms.
  EXPECT_LT(CostModel(h200).step_time(s).compute_s, 0.0001);
}

TEST(CostModel, KvCapacityAndItsDoublingWithFp8) {
  auto cfg = make_config("H200-SXM");
  // 141e9 · 0.9 − 8.03e9 · 2 (bf16 weights) − 2 GiB reserve = 108,692,516,352 B
  // / 131,072 B per token = 829,258 tokens = 51,828 blocks of 16.
  EXPECT_EQ(CostModel(cfg).kv_capacity_tokens(), 829258);
  EXPECT_EQ(CostModel(cfg).kv_capacity_blocks(), 51828);
  cfg.kv_cache_fp8 = true;  // / 65,536 B = 1,658,516 tokens = 103,657 blocks
  EXPECT_EQ(CostModel(cfg).kv_capacity_tokens(), 1658516);
  EXPECT_EQ(CostModel(cfg).kv_capacity_blocks(), 103657);
}

TEST(CostModel, SeventyBOnOneL40SDoesNotFit) {
  // 70.55e9 · 2 B = 141 GB of weights against 48e9 · 0.9 B.
  EXPECT_EQ(CostModel(make_config("L40S", "Llama-3-70B")).kv_capacity_tokens(), 0);
}

TEST(CostModel, TensorParallelOverPcieIsSlowerThanNvlink) {
  auto cfg = make_config("H100-SXM", "Llama-3-70B");
  cfg.tensor_parallel_size = 4;
  StepShape s;
  s.add(1, 0);
  // One all-reduce of 1 token · 8192 · 2 B = 16,384 B; ring moves 2·3/4 of it.
  // NVLink: 160 · (8 µs + 1.5 · 16,384 / 450e9 s) = 1.28874 ms.
  cfg.interconnect = LinkKind::nvlink;
  const StepTime nv = CostModel(cfg).step_time(s);
  EXPECT_NEAR(nv.comm_s * 1e3, 1.28874, 1e-5);
  // PCIe Gen5: 160 · (25 µs + 1.5 · 16,384 / 64e9 s) = 4.06144 ms.
  cfg.interconnect = LinkKind::pcie;
  const StepTime pc = CostModel(cfg).step_time(s);
  EXPECT_NEAR(pc.comm_s * 1e3, 4.06144, 1e-5);
  EXPECT_GT(pc.total_s, nv.total_s);
  // TP splits weights and KV: per-GPU read = ((70.55e9 − 128256·8192)·2 + 327,680) / 4.
  EXPECT_NEAR(nv.memory_s, ((70.55e9 - 128256.0 * 8192) * 2 + 327680.0) / 4 / (3.35e12 * 0.7), 1e-9);
}

TEST(CostModel, QuantisedWeightsWithASlowKernelGetSlower) {
  auto cfg = make_config("H100-SXM");
  StepShape s;
  s.add(1, 0);
  const double bf16 = CostModel(cfg).step_time(s).total_s;  // 6.4006 + 0.304 ms
  cfg.quantization = Quantization::fp8;
  // FP8 linear layers at 1 B, LM head and embedding stay bf16:
  // read = (8.03e9 − 2·525,336,576) + 2·525,336,576 = 8.03e9 B → 8.03e9/(3.35e12·0.7) = 3.4243 ms.
  const CostModel fast(cfg);
  EXPECT_DOUBLE_EQ(fast.weight_bytes_read(1), 8.03e9);
  EXPECT_NEAR(fast.step_time(s).memory_s * 1e3, 3.4243 + 0.0000559, 0.0001);
  EXPECT_LT(fast.step_time(s).total_s, bf16);
  // Fast kernel not active: efficiency 0.3 → 3.4243 / 0.3 = 11.41 ms, slower than bf16.
  cfg.kernel_efficiency = 0.3;
  EXPECT_NEAR(CostModel(cfg).step_time(s).memory_s * 1e3, 11.4145, 0.001);
  EXPECT_GT(CostModel(cfg).step_time(s).total_s, bf16);
  // Compute runs at the FP8 peak: 1978.9 TFLOP/s.
  EXPECT_DOUBLE_EQ(fast.peak_flops(), 1978.9e12);
}

TEST(CostModel, Int4WeightsComputeInBf16WithScales) {
  auto cfg = make_config("H100-SXM");
  cfg.quantization = Quantization::awq;
  const CostModel cm(cfg);
  EXPECT_DOUBLE_EQ(cm.peak_flops(), 989.4e12);
  // Linear params 6,979,326,848 · (0.5 + 2.5/128) B + LM head 1,050,673,152 B.
  EXPECT_NEAR(cm.weight_bytes_read(1), 6979326848.0 * (0.5 + 2.5 / 128) + 1050673152.0, 1.0);
}

TEST(CostModel, MoeTouchesMoreExpertsAsTheBatchGrows) {
  const CostModel cm(make_config("H100-SXM", "Mixtral-8x7B"));
  // One expert over all layers = 3 · 4096 · 14336 · 32 = 5,637,144,576 parameters.
  const double expert = 3.0 * 4096 * 14336 * 32;
  const double shared = 46.7e9 - 32000.0 * 4096 - 8 * expert;  // non-expert, non-embedding
  // One token touches 2 of 8 experts: E·(1 − (6/8)^1) = 2.
  EXPECT_NEAR(cm.weight_bytes_read(1), (shared + 2 * expert) * 2, 1.0);
  // 4 tokens: 8·(1 − 0.75^4) = 5.46875 experts.
  EXPECT_NEAR(cm.weight_bytes_read(4), (shared + 5.46875 * expert) * 2, 1.0);
  // A big batch reads every expert.
  EXPECT_NEAR(cm.weight_bytes_read(1000), (shared + 8 * expert) * 2, 1.0);
  // FLOPs per token use the 2 active experts: shared 1.47e9 + 2 · 5.64e9 = 12.75e9
  // (Mixtral's published 12.9e9 active also counts the input embedding).
  EXPECT_NEAR(cm.active_params() / 1e9, 12.75, 0.01);
}

TEST(CostModel, SpeculativeExpectedTokensPerStep) {
  // (1 − α^(k+1)) / (1 − α): k = 4, α = 0.8 → (1 − 0.32768) / 0.2 = 3.3616.
  EXPECT_NEAR(CostModel::expected_tokens_per_step(4, 0.8), 3.3616, 1e-12);
  EXPECT_DOUBLE_EQ(CostModel::expected_tokens_per_step(0, 0.8), 1.0);
  EXPECT_DOUBLE_EQ(CostModel::expected_tokens_per_step(3, 1.0), 4.0);
}

TEST(CostModel, EagerModeAddsPerLayerLaunchCost) {
  auto cfg = make_config();
  StepShape s;
  s.add(1, 0);
  const double graphs = CostModel(cfg).step_time(s).overhead_s;
  cfg.cuda_graphs = false;  // + 32 layers · 60 µs = 1.92 ms
  EXPECT_NEAR(CostModel(cfg).step_time(s).overhead_s - graphs, 1.92e-3, 1e-12);
}

}  // namespace
}  // namespace inferscope::sim
