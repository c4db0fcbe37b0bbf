#include "inferscope/telemetry/gpu.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace inferscope::telemetry {
namespace {

std::string recorded_csv() {
  std::ifstream in(std::string(INFERSCOPE_TEST_DATA) + "/telemetry/nvidia_smi_query.csv");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Gpu, ParsesNvidiaSmiCsv) {
  std::vector<GpuInfo> infos;
  const auto s = parse_nvidia_smi_csv(recorded_csv(), &infos);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].index, 0u);
  EXPECT_EQ(*s[0].util_pct, 87);
  EXPECT_EQ(*s[0].mem_util_pct, 64);
  EXPECT_EQ(*s[0].mem_used_bytes, 120345.0 * 1024 * 1024);  // MiB -> bytes
  EXPECT_EQ(*s[0].mem_total_bytes, 143771.0 * 1024 * 1024);
  EXPECT_EQ(*s[0].sm_clock_mhz, 1980);
  EXPECT_EQ(*s[0].mem_clock_mhz, 3201);
  EXPECT_DOUBLE_EQ(*s[0].power_w, 612.45);
  EXPECT_EQ(*s[0].power_limit_w, 700);
  EXPECT_EQ(*s[0].temperature_c, 61);
  // Missing fields are absent, not zero.
  EXPECT_EQ(s[1].index, 1u);
  EXPECT_FALSE(s[1].power_w);
  EXPECT_EQ(*s[1].util_pct, 0);
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].name, "NVIDIA H200");
  EXPECT_EQ(infos[0].uuid, "GPU-5c1f0e7a-1b2c-4d3e-8f90-a1b2c3d4e5f6");
  EXPECT_EQ(*infos[0].sm_clock_max_mhz, 1980);
  EXPECT_EQ(*infos[0].mem_clock_max_mhz, 3201);
  EXPECT_FALSE(infos[1].mem_clock_max_mhz);
  EXPECT_EQ(*infos[1].power_limit_w, 700);
}

TEST(Gpu, SkipsMalformedLines) {
  EXPECT_TRUE(parse_nvidia_smi_csv("").empty());
  EXPECT_TRUE(parse_nvidia_smi_csv("NVIDIA-SMI has failed because it couldn't communicate with the driver.\n").empty());
  EXPECT_TRUE(parse_nvidia_smi_csv("0, H200, GPU-x, 1, 2\n").empty());
}

TEST(Gpu, NvmlAbsentIsAValueNotAnError) {
  std::string why;
  EXPECT_EQ(open_nvml(&why, "libnvidia-ml-inferscope-absent.so.1"), nullptr);
  EXPECT_NE(why.find("NVML not loaded"), std::string::npos) << why;
  EXPECT_NE(why.find("libnvidia-ml-inferscope-absent.so.1"), std::string::npos) << why;
}

TEST(Gpu, NvidiaSmiFallbackUsesTheRunner) {
  std::string why;
  EXPECT_EQ(open_nvidia_smi(&why, [](const std::string&) { return std::optional<std::string>{}; }), nullptr);
  EXPECT_EQ(why, "nvidia-smi did not run");
  EXPECT_EQ(open_nvidia_smi(&why, [](const std::string&) { return std::optional<std::string>{""}; }), nullptr);
  EXPECT_EQ(why, "nvidia-smi reports no GPU");

  std::string seen;
  auto probe = open_nvidia_smi(&why, [&](const std::string& cmd) {
    seen = cmd;
    return std::optional<std::string>{recorded_csv()};
  });
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe->backend(), "nvidia-smi");
  EXPECT_NE(seen.find(std::string("--query-gpu=") + std::string(kNvidiaSmiQuery)), std::string::npos);
  EXPECT_NE(seen.find("--format=csv,noheader,nounits"), std::string::npos);
  EXPECT_EQ(probe->info().size(), 2u);
  EXPECT_EQ(probe->sample().size(), 2u);
  const auto j = to_json(probe->info()[1]);
  EXPECT_TRUE(j["mem_clock_max_mhz"].is_null());
  EXPECT_EQ(j["power_limit_w"], 700.0);
}

TEST(Gpu, OffMeansNoProbeAndNoNote) {
  std::string note = "stale";
  EXPECT_EQ(open_gpu_probe(GpuBackend::off, &note), nullptr);
  EXPECT_TRUE(note.empty());
}

}  // namespace
}  // namespace inferscope::telemetry
