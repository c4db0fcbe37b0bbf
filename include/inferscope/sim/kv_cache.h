#pragma once
// Paged KV-cache block pool with prefix caching, like vLLM's BlockPool: blocks have a
// reference count; a full block may carry the hash of its content (chained with the
// previous block's hash, so equal hashes mean equal prefixes); blocks nobody references
// sit in one free queue, least recently freed first, and keep their hash until they are
// reused, so a later request with the same prefix can take them back (a cache hit).
// Not thread-safe: owned by one engine replica.
#include <cstdint>
#include <span>
#include <vector>

namespace inferscope::sim {

class KvCache {
 public:
  KvCache(std::int64_t num_blocks, bool prefix_caching);

  std::int64_t num_blocks() const { return static_cast<std::int64_t>(blocks_.size()); }
  // Blocks not referenced by any request (free or cached-evictable).
  std::int64_t free_blocks() const { return free_count_; }
  // Fraction of blocks referenced by requests, in [0, 1] (vllm:kv_cache_usage_perc).
  double usage() const;
  bool prefix_caching() const { return prefix_caching_; }

  // Number of leading `hashes` whose blocks are cached, and how many of those are
  // currently unreferenced (taking them uses up free blocks).
  struct Match {
    int blocks = 0;
    int unreferenced = 0;
  };
  Match match(std::span<const std::uint64_t> hashes) const;
  // Takes a reference on the cached block with this hash (must exist: call match first).
  int acquire_cached(std::uint64_t hash);
  // A fresh block (evicting the least recently freed cached block if needed); -1 when
  // every block is referenced.
  int allocate();
  // Drops one reference; an unreferenced block joins the free queue (a hashed one at the
  // back, kept for reuse; an unhashed one at the front, reused first).
  void release(int block);
  // Marks a full block's content. A hash already cached by another block is left alone
  // (two requests computed the same prefix at once; vLLM keeps the first).
  void set_hash(int block, std::uint64_t hash);

  std::int64_t evictions() const { return evictions_; }

 private:
  struct Block {
    int ref = 0;
    bool hashed = false;
    std::uint64_t hash = 0;
    int prev = -1, next = -1;  // free-queue links
    bool in_free = false;
  };
  void push_back(int b);
  void push_front(int b);
  void unlink(int b);

  // Open-addressing hash → block map (linear probing, backward-shift deletion): the
  // cache holds one entry per hashed block and is looked up for every block of every
  // prompt, so node allocation per entry would dominate the simulator's run time.
  class BlockMap {
   public:
    explicit BlockMap(std::size_t capacity);
    int find(std::uint64_t key) const;      // -1 when absent
    bool insert(std::uint64_t key, int v);  // false when present
    void erase(std::uint64_t key);

   private:
    static std::uint64_t fix(std::uint64_t k) { return k == 0 ? 1 : k; }  // 0 marks empty
    std::vector<std::uint64_t> keys_;
    std::vector<int> vals_;
    std::size_t mask_ = 0;
  };

  std::vector<Block> blocks_;
  BlockMap by_hash_;
  int head_ = -1, tail_ = -1;
  std::int64_t free_count_ = 0;
  std::int64_t evictions_ = 0;
  bool prefix_caching_;
};

}  // namespace inferscope::sim
