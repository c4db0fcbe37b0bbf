#pragma once
// A small, portable random source for workloads. std:: distributions are
// implementation-defined (libstdc++ and libc++ give different normals for one seed), so a
// schedule built from a seed would differ between builds; this one is bit-identical
// everywhere. Not thread-safe: one Rng per generating thread.
#include <cmath>
#include <cstdint>

namespace inferscope::workload {

// splitmix64 finaliser: a bijection on 64-bit values, used to derive independent
// sub-seeds ("stream k of seed s") and to hash small integers.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Derives the seed of a named sub-stream so that adding a stream never shifts another.
constexpr std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) {
  return mix64(mix64(seed) ^ (stream * 0xd6e8feb86659fd93ULL));
}

// xoshiro256** seeded through splitmix64.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& s : s_) {
      x += 0x9e3779b97f4a7c15ULL;
      s = mix64(x);
    }
  }
  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n); n > 0. Modulo bias is < n / 2^64: negligible for the
  // small n used here (weights, vocabularies, prefix counts).
  std::uint64_t below(std::uint64_t n) { return next_u64() % n; }
  // Standard normal by Box-Muller (one of the pair; simplicity over speed).
  double normal() {
    double u1 = uniform01();
    while (u1 <= 0.0) u1 = uniform01();
    const double u2 = uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace inferscope::workload
