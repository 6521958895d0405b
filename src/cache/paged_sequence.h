#pragma once
// One sequence's KV storage in the server: a block table into the shared BlockPool.
//
// Full blocks at the start can be borrowed from the prefix cache (attach_prefix) instead of being computed; blocks
// this sequence fills are published to it (publish_full_blocks). A borrowed block is always full, so it is never
// written again — sharing needs no copy-on-write. Every block goes back to the pool when the sequence is released
// (finished, failed, cancelled or preempted) or destroyed.
#include <span>
#include <vector>

#include "cache/block_pool.h"
#include "cache/kv_sequence.h"

namespace minigen {

class PagedKvSequence : public KvSequence {
 public:
  // `prefix_root`: the prefix id its first block hangs under in the prefix cache. Sequences with different roots
  // never share cached blocks (serve gives each LoRA adapter its own root; the base model's is kNoPrefix).
  explicit PagedKvSequence(BlockPool& pool, int64_t prefix_root = BlockPool::kNoPrefix)
      : pool_(pool), prefix_root_(prefix_root) {}
  ~PagedKvSequence() override { release(); }
  PagedKvSequence(const PagedKvSequence&) = delete;
  PagedKvSequence& operator=(const PagedKvSequence&) = delete;

  int length() const override { return length_; }
  const KvBlockLayout& layout() const override { return pool_.layout(); }
  void reserve_for(int count) override;  // throws minigen::Error when the pool has no block left
  void write(int layer, int position, const float* key_row, const float* value_row) override;
  void block_pointers(int layer, int positions, std::vector<const std::byte*>& blocks) const override;
  void advance(int count) override;

  // Blocks that reserve_for(count) would take from the pool.
  int blocks_needed(int count) const;
  int blocks_held() const { return static_cast<int>(table_.size()); }

  // On an empty sequence: borrows cached blocks for the longest cached prefix of tokens[0, max_positions),
  // whole blocks only. Returns the positions now cached (a multiple of 16).
  int attach_prefix(std::span<const int> tokens, int max_positions);
  // Publishes every block that became full since the last call; `tokens` are the sequence's ids so far.
  void publish_full_blocks(std::span<const int> tokens);
  // Returns every block to the pool; the sequence is empty again.
  void release();

 private:
  BlockPool& pool_;
  int64_t prefix_root_;
  std::vector<int> table_;           // block ids, position p in table_[p / 16]
  std::vector<int64_t> prefix_ids_;  // prefix id after each published full block
  int length_ = 0;
};

}  // namespace minigen
