#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include "inferscope/core/errors.h"
#include "inferscope/workload/distribution.h"

namespace inferscope::workload {
namespace {

LengthDist parse(const std::string& y) { return parse_dist(YAML::Load(y), "spec.yaml", "input", 100000); }

std::vector<std::int64_t> draw(const LengthDist& d, int n, std::uint64_t seed = 1) {
  Rng rng(seed);
  std::vector<std::int64_t> v;
  for (int i = 0; i < n; ++i) v.push_back(d.sample(rng));
  return v;
}

TEST(Rng, DeterministicAndUniform) {
  Rng a(7), b(7);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
  Rng r(1);
  double sum = 0;
  for (int i = 0; i < 20000; ++i) sum += r.uniform01();
  EXPECT_NEAR(sum / 20000, 0.5, 0.01);
}

TEST(LengthDist, Fixed) {
  const auto d = parse("512");
  EXPECT_EQ(d.kind, DistKind::fixed);
  for (auto x : draw(d, 10)) EXPECT_EQ(x, 512);
  EXPECT_EQ(draw(parse("{dist: fixed, value: 9000, max: 8192}"), 1)[0], 8192);
}

TEST(LengthDist, UniformStaysInBoundsAndCoversThem) {
  const auto v = draw(parse("{dist: uniform, min: 10, max: 13}"), 2000);
  EXPECT_EQ(*std::min_element(v.begin(), v.end()), 10);
  EXPECT_EQ(*std::max_element(v.begin(), v.end()), 13);
}

TEST(LengthDist, NormalAndLognormalMoments) {
  auto v = draw(parse("{dist: normal, mean: 1000, std: 100}"), 20000);
  double mean = 0;
  for (auto x : v) mean += static_cast<double>(x);
  EXPECT_NEAR(mean / 20000, 1000, 5);
  // Median of a lognormal is e^mu = the given median.
  v = draw(parse("{dist: lognormal, median: 1024, sigma: 0.6}"), 20001);
  std::nth_element(v.begin(), v.begin() + 10000, v.end());
  EXPECT_NEAR(static_cast<double>(v[10000]), 1024, 40);
  // Moment-matched from mean/std: sigma^2 = ln(1 + 0.25) for std/mean = 0.5.
  const auto d = parse("{dist: lognormal, mean: 2000, std: 1000}");
  EXPECT_NEAR(d.sigma, std::sqrt(std::log(1.25)), 1e-12);
  EXPECT_NEAR(d.expected_mean(), 2000, 1e-9);
}

TEST(LengthDist, ClampToOneAndMax) {
  for (auto x : draw(parse("{dist: normal, mean: 0, std: 10, max: 5}"), 1000)) {
    EXPECT_GE(x, 1);
    EXPECT_LE(x, 5);
  }
  for (auto x : draw(parse("{dist: lognormal, median: 100, sigma: 2, clamp: [50, 60]}"), 1000)) {
    EXPECT_GE(x, 50);
    EXPECT_LE(x, 60);
  }
}

TEST(LengthDist, EmpiricalDrawsOnlyObservedValues) {
  for (auto x : draw(parse("{dist: empirical, values: [3, 30, 300]}"), 100)) EXPECT_TRUE(x == 3 || x == 30 || x == 300);
  const auto d = parse(std::string("{dist: empirical, trace: ") + INFERSCOPE_SHARED_DIR +
                       "/data/traces/AzureLLMInferenceTrace_code.csv, field: output}");
  EXPECT_EQ(d.values.size(), 8819u);
}

TEST(LengthDist, ErrorsNameLineAndField) {
  try {
    parse_dist(YAML::Load("a: 1\nb: {dist: gauss, mean: 3}\n")["b"], "spec.yaml", "input", 100);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "spec.yaml");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "input.dist");
  }
  EXPECT_THROW(parse("{dist: uniform, min: 5, max: 2}"), InputError);
  EXPECT_THROW(parse("{dist: lognormal, sigma: 1}"), InputError);
  EXPECT_THROW(parse("{dist: normal, mean: 5, std: 1, colour: red}"), InputError);
  EXPECT_THROW(parse("0"), InputError);
  EXPECT_THROW(parse("abc"), InputError);
}

TEST(MatrixPoints, SortedClampedUnique) {
  EXPECT_EQ(matrix_points(3000, 32768), (std::vector<std::int64_t>{512, 2048, 3000, 8192, 32768}));
  EXPECT_EQ(matrix_points(0, 4096), (std::vector<std::int64_t>{512, 2048, 4096}));
  EXPECT_EQ(matrix_points(2048, 8192), (std::vector<std::int64_t>{512, 2048, 8192}));
}

}  // namespace
}  // namespace inferscope::workload
