#pragma once
// The KV cache of one sequence: for every layer, K (after qk-norm and RoPE) and V for each position, stored
// before GQA's repeat_kv — kv_heads rows, not q_heads — so GQA's memory saving is kept.
// Layout per layer: [position][kv_head][head_dim], as MiniMind's [batch, position, kv_head, head_dim] for one row.
#include <cstddef>
#include <vector>

#include "model/config.h"

namespace minigen {

class KvCache {
 public:
  // Reserves room for `capacity_tokens` positions up front; grows (doubling) if a forward call needs more.
  KvCache(const ModelConfig& config, int capacity_tokens);

  int length() const { return length_; }
  int capacity() const { return capacity_; }

  // Rows for layer `layer`, position 0. Row `p` starts kv_width floats further on.
  float* keys(int layer) { return keys_[layer].data(); }
  float* values(int layer) { return values_[layer].data(); }
  const float* keys(int layer) const { return keys_[layer].data(); }
  const float* values(int layer) const { return values_[layer].data(); }
  int row_width() const { return kv_width_; }

  // Makes room for positions [length, length + count) before a forward call writes them.
  void reserve_for(int count);
  // The forward call wrote `count` new positions; they become part of the cached prefix.
  void advance(int count);
  // Forget every position (the no-cache path starts from an empty cache at every step).
  void clear() { length_ = 0; }

  static constexpr std::size_t kBytesPerElement = sizeof(float);
  // 2 · layers · capacity · kv_heads · head_dim · bytes_per_element
  std::size_t bytes_allocated() const;
  // 2 · layers · length · kv_heads · head_dim · bytes_per_element — the module's formula, from the live length.
  std::size_t bytes_used() const;

 private:
  int num_layers_;
  int kv_width_;
  int length_ = 0;
  int capacity_ = 0;
  std::vector<std::vector<float>> keys_;
  std::vector<std::vector<float>> values_;
};

}  // namespace minigen
