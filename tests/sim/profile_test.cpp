#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "inferscope/core/errors.h"
#include "inferscope/sim/profile.h"

namespace inferscope::sim {
namespace {

const std::vector<std::string> kDirs = {INFERSCOPE_PROFILES_DIR};

TEST(Profiles, EveryShippedGpuLoadsByName) {
  for (const char* name : {"A100-80G", "H100-SXM", "H200-SXM", "L40S"}) {
    const auto g = load_gpu_profile(name, kDirs);
    EXPECT_EQ(g.name, name);
    EXPECT_GT(g.bf16_tflops, 0);
    EXPECT_GT(g.memory_bandwidth_gbps, 0);
  }
  EXPECT_DOUBLE_EQ(load_gpu_profile("H100-SXM", kDirs).bf16_tflops, 989.4);
  EXPECT_DOUBLE_EQ(load_gpu_profile("H200-SXM", kDirs).memory_bandwidth_gbps, 4800);
  EXPECT_FALSE(load_gpu_profile("L40S", kDirs).nvlink.has_value());  // PCIe-only part
  EXPECT_DOUBLE_EQ(load_gpu_profile("A100-80G", kDirs).fp8_tflops, 0);
}

TEST(Profiles, EveryShippedModelLoadsByName) {
  for (const char* name : {"Llama-3-8B", "Llama-3-70B", "Qwen2.5-7B", "Mixtral-8x7B"}) {
    const auto m = load_model_profile(name, kDirs);
    EXPECT_EQ(m.name, name);
  }
  const auto mix = load_model_profile("Mixtral-8x7B", kDirs);
  EXPECT_EQ(mix.experts, 8);
  EXPECT_EQ(mix.experts_per_token, 2);
  EXPECT_EQ(load_model_profile("Qwen2.5-7B", kDirs).kv_heads, 4);
}

TEST(Profiles, NameLookupIgnoresCase) {
  EXPECT_EQ(load_gpu_profile("h100-sxm", kDirs).name, "H100-SXM");
  EXPECT_EQ(load_model_profile("llama-3-8b", kDirs).name, "Llama-3-8B");
}

TEST(Profiles, UnknownNameListsWhatExists) {
  try {
    load_gpu_profile("B300", kDirs);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "--gpu");
    EXPECT_NE(std::string(e.what()).find("H200-SXM"), std::string::npos);
  }
}

TEST(Profiles, LoadsAUserFileByPath) {
  const auto dir = std::filesystem::temp_directory_path() / ("inferscope_sim_profile_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "my-gpu.yaml";
  std::ofstream(path) << "name: MyGPU\nmemory_gb: 24\nmemory_bandwidth_gbps: 1000\nbf16_tflops: 100\n"
                         "interconnect:\n  pcie: {bandwidth_gbps: 32}\n";
  const auto g = load_gpu_profile(path.string(), {});
  EXPECT_EQ(g.name, "MyGPU");
  EXPECT_DOUBLE_EQ(g.pcie.latency_us, 10.0);  // default
  EXPECT_EQ(g.source, path.string());
  std::filesystem::remove_all(dir);
}

InputError parse_error(const std::string& yaml, bool gpu) {
  try {
    if (gpu)
      parse_gpu_profile(yaml, "bad.yaml");
    else
      parse_model_profile(yaml, "bad.yaml");
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return InputError("", "");
}

TEST(Profiles, BadFieldsNameFileLineAndField) {
  const std::string ok_model =
      "name: M\nlayers: 2\nhidden: 64\nheads: 4\nkv_heads: 2\nhead_dim: 16\nintermediate_size: 128\n"
      "vocab: 100\nparameters: 2e6\nmax_model_len: 1024\n";
  EXPECT_NO_THROW(parse_model_profile(ok_model, "ok.yaml"));

  auto e = parse_error("name: M\nlayers: many\n", false);  // line 2
  EXPECT_EQ(e.where(), "bad.yaml");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "layers");

  e = parse_error(ok_model + "expert: 8\n", false);  // typo'd key on line 11
  EXPECT_EQ(e.line(), 11);
  EXPECT_EQ(e.field(), "expert");

  e = parse_error("name: G\nmemory_gb: -5\n", true);
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "memory_gb");

  e = parse_error("name: G\nmemory_gb: 80\nmemory_bandwidth_gbps: 100\nbf16_tflops: 10\n"
                  "interconnect:\n  pcie:\n    bandwidth_gbps: fast\n",
                  true);
  EXPECT_EQ(e.line(), 7);
  EXPECT_EQ(e.field(), "interconnect.pcie.bandwidth_gbps");

  e = parse_error("name: [unclosed\n", true);
  EXPECT_EQ(e.line(), 2);  // yaml-cpp reports the end of input
  EXPECT_NE(std::string(e.what()).find("YAML syntax error"), std::string::npos);

  e = parse_error("name: G\n[1, 2]: 80\n", true);  // a key that is not a name
  EXPECT_EQ(e.line(), 2);

  e = parse_error("name: G\nmemory_gb: 80\n", true);  // required field missing
  EXPECT_EQ(e.field(), "memory_bandwidth_gbps");
}

}  // namespace
}  // namespace inferscope::sim
