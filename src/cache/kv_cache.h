#pragma once
// The KV cache of one sequence: for every layer, K (after qk-norm and RoPE) and V for each position, stored
// before GQA's repeat_kv — kv_heads rows, not q_heads — so GQA's memory saving is kept.
//
// Positions are grouped in blocks of 16 (ops/kv_block.h: keys transposed inside a block so the attention kernel
// reads 16 keys per vector load). Here a layer's blocks are contiguous and capacity is a multiple of 16; the
// paged cache of the server hands the same kind of block to the same kernel from a shared pool.
#include <climits>
#include <cstddef>
#include <vector>

#include "cache/kv_sequence.h"
#include "ops/kv_block.h"

namespace minigen {

class KvCache : public KvSequence {
 public:
  // Reserves room for `capacity_tokens` positions up front; grows (doubling, but never past `max_capacity_tokens`
  // rounded up to a block, unless a forward call needs more) when a forward call needs more.
  KvCache(const KvLayout& layout, int capacity_tokens, int max_capacity_tokens = INT_MAX);

  int length() const override { return length_; }
  int capacity() const { return capacity_; }
  const KvBlockLayout& layout() const override { return layout_; }

  // Stores K and V rows ([kv_head][head_dim]) of `position` (< capacity) in `layer`.
  void write(int layer, int position, const float* key_row, const float* value_row) override;
  // Element `index` of the key / value row of `position` (index = kv_head · head_dim + d), as attention reads it:
  // widened to fp32 (int8: times its scale).
  float key_at(int layer, int position, int index) const;
  float value_at(int layer, int position, int index) const;
  // The blocks holding positions [0, positions) of `layer`, for the attention kernel.
  void block_pointers(int layer, int positions, std::vector<const std::byte*>& blocks) const override;

  // Makes room for positions [length, length + count) before a forward call writes them.
  void reserve_for(int count) override;
  // The forward call wrote `count` new positions; they become part of the cached prefix.
  void advance(int count) override;
  // Forget every position (the no-cache path starts from an empty cache at every step).
  void clear() { length_ = 0; }
  // Forget positions [length, length()): the cache holds the first `length` again (the bench decodes the same
  // steps after one long prefill). Throws minigen::Error for a length outside [0, length()].
  void truncate(int length);

  // capacity · bytes_per_token (2 · layers · kv_heads · head_dim · bytes_per_element, + int8 scales)
  std::size_t bytes_allocated() const;
  // length · bytes_per_token — the module's formula, from the live length.
  std::size_t bytes_used() const;

 private:
  std::byte* block(int layer, int position) {
    return layers_[layer].data() +
           static_cast<std::size_t>(position / KvBlockLayout::kBlockTokens) * layout_.block_bytes();
  }
  const std::byte* block(int layer, int position) const { return const_cast<KvCache*>(this)->block(layer, position); }

  KvLayout model_layout_;
  KvBlockLayout layout_;
  int length_ = 0;
  int capacity_ = 0;
  int max_capacity_ = INT_MAX;
  // Per layer: capacity / 16 blocks, one after another (operator new's alignment suits every element type).
  std::vector<std::vector<std::byte>> layers_;
};

}  // namespace minigen
