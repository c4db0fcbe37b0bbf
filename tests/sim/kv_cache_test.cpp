#include <gtest/gtest.h>

#include <vector>

#include "inferscope/sim/kv_cache.h"

namespace inferscope::sim {
namespace {

TEST(KvCache, AllocateReleaseAndUsage) {
  KvCache kv(4, true);
  EXPECT_EQ(kv.free_blocks(), 4);
  const int a = kv.allocate(), b = kv.allocate();
  EXPECT_EQ(kv.free_blocks(), 2);
  EXPECT_DOUBLE_EQ(kv.usage(), 0.5);
  kv.release(a);
  kv.release(b);
  EXPECT_EQ(kv.free_blocks(), 4);
  kv.allocate(), kv.allocate(), kv.allocate(), kv.allocate();
  EXPECT_EQ(kv.allocate(), -1);
}

TEST(KvCache, HashedBlocksAreReusedUntilEvictedLeastRecentlyFreedFirst) {
  KvCache kv(3, true);
  const int a = kv.allocate(), b = kv.allocate();
  kv.set_hash(a, 111);
  kv.set_hash(b, 222);
  kv.release(a);  // freed first: evicted first
  kv.release(b);
  const std::vector<std::uint64_t> want = {111, 222};
  EXPECT_EQ(kv.match(want).blocks, 2);
  EXPECT_EQ(kv.match(want).unreferenced, 2);
  // The unhashed block goes first, then the least recently freed hashed one (111).
  kv.allocate();
  EXPECT_EQ(kv.evictions(), 0);
  kv.allocate();
  EXPECT_EQ(kv.evictions(), 1);
  EXPECT_EQ(kv.match(want).blocks, 0);  // 111 is gone, so the chain stops at once
  const std::vector<std::uint64_t> second = {222};
  EXPECT_EQ(kv.match(second).blocks, 1);
  EXPECT_EQ(kv.acquire_cached(222), b);
  EXPECT_EQ(kv.free_blocks(), 0);
}

TEST(KvCache, SharedBlockCountsOnceAndStaysWhileReferenced) {
  KvCache kv(2, true);
  const int a = kv.allocate();
  kv.set_hash(a, 7);
  EXPECT_EQ(kv.acquire_cached(7), a);  // a second request shares it
  const std::vector<std::uint64_t> h = {7};
  EXPECT_EQ(kv.match(h).unreferenced, 0);
  kv.release(a);
  EXPECT_EQ(kv.free_blocks(), 1);
  kv.release(a);
  EXPECT_EQ(kv.free_blocks(), 2);
}

TEST(KvCache, WithoutPrefixCachingNothingMatches) {
  KvCache kv(2, false);
  const int a = kv.allocate();
  kv.set_hash(a, 9);
  kv.release(a);
  const std::vector<std::uint64_t> h = {9};
  EXPECT_EQ(kv.match(h).blocks, 0);
}

}  // namespace
}  // namespace inferscope::sim

namespace inferscope::sim {
namespace {

// The block map's deletion (backward shift) against a reference, under random traffic
// that keeps the cache full so hashed blocks are evicted and re-added constantly.
TEST(KvCache, RandomTrafficKeepsEveryCachedHashFindable) {
  constexpr int kBlocks = 64;
  KvCache kv(kBlocks, true);
  std::vector<std::uint64_t> hash_of(kBlocks, 0);  // reference: block → hash or 0
  std::vector<int> held;
  std::uint64_t x = 12345;
  auto next = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  for (int step = 0; step < 20000; ++step) {
    if (held.size() < kBlocks / 2 || next() % 2 == 0) {
      const int b = kv.allocate();
      if (b < 0) continue;
      hash_of[static_cast<std::size_t>(b)] = 0;  // eviction dropped its old hash
      const std::uint64_t h = next() % 200 + 1;  // few distinct hashes: many collisions
      kv.set_hash(b, h);
      const std::vector<std::uint64_t> one = {h};
      if (kv.match(one).blocks == 1) {
        // Either this block now carries h, or another block already did.
        bool owned_elsewhere = false;
        for (int o = 0; o < kBlocks; ++o) owned_elsewhere |= (o != b && hash_of[static_cast<std::size_t>(o)] == h);
        if (!owned_elsewhere) hash_of[static_cast<std::size_t>(b)] = h;
      }
      held.push_back(b);
    } else {
      const std::size_t i = next() % held.size();
      kv.release(held[i]);
      held.erase(held.begin() + static_cast<long>(i));
    }
    if (step % 97 == 0) {
      for (int b = 0; b < kBlocks; ++b) {
        const std::uint64_t h = hash_of[static_cast<std::size_t>(b)];
        if (h == 0) continue;
        const std::vector<std::uint64_t> one = {h};
        ASSERT_EQ(kv.match(one).blocks, 1) << "hash " << h << " of block " << b << " lost at step " << step;
      }
    }
  }
  EXPECT_GT(kv.evictions(), 100);
}

}  // namespace
}  // namespace inferscope::sim
