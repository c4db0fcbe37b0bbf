#include "inferscope/sim/kv_cache.h"

#include <cassert>

namespace inferscope::sim {

KvCache::BlockMap::BlockMap(std::size_t capacity) {
  std::size_t n = 16;
  while (n < 2 * capacity) n <<= 1;  // load factor ≤ 1/2: short probe runs
  keys_.assign(n, 0);
  vals_.assign(n, -1);
  mask_ = n - 1;
}

int KvCache::BlockMap::find(std::uint64_t key) const {
  key = fix(key);
  for (std::size_t i = key & mask_;; i = (i + 1) & mask_) {
    if (keys_[i] == key) return vals_[i];
    if (keys_[i] == 0) return -1;
  }
}

bool KvCache::BlockMap::insert(std::uint64_t key, int v) {
  key = fix(key);
  std::size_t i = key & mask_;
  for (; keys_[i] != 0; i = (i + 1) & mask_)
    if (keys_[i] == key) return false;
  keys_[i] = key;
  vals_[i] = v;
  return true;
}

void KvCache::BlockMap::erase(std::uint64_t key) {
  key = fix(key);
  std::size_t i = key & mask_;
  while (keys_[i] != key) {
    if (keys_[i] == 0) return;
    i = (i + 1) & mask_;
  }
  // Backward-shift deletion: pull later entries of the probe run into the hole so every
  // remaining key stays reachable from its home slot without tombstones.
  for (std::size_t j = (i + 1) & mask_; keys_[j] != 0; j = (j + 1) & mask_) {
    const std::size_t home = keys_[j] & mask_;
    // Move j into the hole i unless its home lies cyclically in (i, j].
    const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    keys_[i] = keys_[j];
    vals_[i] = vals_[j];
    i = j;
  }
  keys_[i] = 0;
  vals_[i] = -1;
}

KvCache::KvCache(std::int64_t num_blocks, bool prefix_caching)
    : blocks_(static_cast<std::size_t>(num_blocks)),
      by_hash_(prefix_caching ? static_cast<std::size_t>(num_blocks) : 0),
      prefix_caching_(prefix_caching) {
  for (int b = 0; b < static_cast<int>(num_blocks); ++b) push_back(b);
}

double KvCache::usage() const {
  return blocks_.empty() ? 0.0 : 1.0 - static_cast<double>(free_count_) / static_cast<double>(blocks_.size());
}

KvCache::Match KvCache::match(std::span<const std::uint64_t> hashes) const {
  Match m;
  if (!prefix_caching_) return m;
  for (auto h : hashes) {
    const int b = by_hash_.find(h);
    if (b < 0) break;
    ++m.blocks;
    if (blocks_[static_cast<std::size_t>(b)].ref == 0) ++m.unreferenced;
  }
  return m;
}

int KvCache::acquire_cached(std::uint64_t hash) {
  const int b = by_hash_.find(hash);
  assert(b >= 0);
  Block& blk = blocks_[static_cast<std::size_t>(b)];
  if (blk.ref == 0) unlink(b);
  ++blk.ref;
  return b;
}

int KvCache::allocate() {
  if (head_ < 0) return -1;
  const int b = head_;
  unlink(b);
  Block& blk = blocks_[static_cast<std::size_t>(b)];
  if (blk.hashed) {
    by_hash_.erase(blk.hash);
    blk.hashed = false;
    ++evictions_;
  }
  blk.ref = 1;
  return b;
}

void KvCache::release(int b) {
  Block& blk = blocks_[static_cast<std::size_t>(b)];
  assert(blk.ref > 0);
  if (--blk.ref > 0) return;
  if (blk.hashed)
    push_back(b);
  else
    push_front(b);
}

void KvCache::set_hash(int b, std::uint64_t hash) {
  if (!prefix_caching_) return;
  Block& blk = blocks_[static_cast<std::size_t>(b)];
  if (blk.hashed || !by_hash_.insert(hash, b)) return;
  blk.hashed = true;
  blk.hash = hash;
}

void KvCache::push_back(int b) {
  Block& blk = blocks_[static_cast<std::size_t>(b)];
  blk.prev = tail_;
  blk.next = -1;
  if (tail_ >= 0) blocks_[static_cast<std::size_t>(tail_)].next = b; else head_ = b;
  tail_ = b;
  blk.in_free = true;
  ++free_count_;
}

void KvCache::push_front(int b) {
  Block& blk = blocks_[static_cast<std::size_t>(b)];
  blk.next = head_;
  blk.prev = -1;
  if (head_ >= 0) blocks_[static_cast<std::size_t>(head_)].prev = b; else tail_ = b;
  head_ = b;
  blk.in_free = true;
  ++free_count_;
}

void KvCache::unlink(int b) {
  Block& blk = blocks_[static_cast<std::size_t>(b)];
  assert(blk.in_free);
  if (blk.prev >= 0) blocks_[static_cast<std::size_t>(blk.prev)].next = blk.next; else head_ = blk.next;
  if (blk.next >= 0) blocks_[static_cast<std::size_t>(blk.next)].prev = blk.prev; else tail_ = blk.prev;
  blk.prev = blk.next = -1;
  blk.in_free = false;
  --free_count_;
}

}  // namespace inferscope::sim
