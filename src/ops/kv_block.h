#pragma once
// How K and V of 16 consecutive positions of one layer sit in memory — one "block", the unit both the contiguous
// KvCache and a paged cache hand to the attention kernel.
//
//   keys   [kv_head][head_dim][16 positions]   (transposed: one vector load gives dimension d of 16 keys, so 16
//                                               scores grow side by side, each a plain fma chain over d)
//   values [16 positions][kv_head][head_dim]   (as MiniMind's V rows: the weighted sum runs over positions)
//
// K and V are stored before GQA's repeat_kv: kv_heads rows per position, not q_heads.
#include <cstddef>

namespace minigen {

// The shape of a whole model's KV storage: what a cache needs to know of the model, and nothing more.
struct KvLayout {
  int layers = 0;
  int kv_heads = 0;
  int head_dim = 0;

  int kv_width() const { return kv_heads * head_dim; }
  // 2 (K and V) · layers · kv_heads · head_dim · 4 bytes: the module's per-token cache cost.
  std::size_t bytes_per_token() const { return 2 * static_cast<std::size_t>(layers) * kv_width() * sizeof(float); }
};

struct KvBlockLayout {
  static constexpr int kBlockTokens = 16;
  int kv_heads = 0;
  int head_dim = 0;

  int kv_width() const { return kv_heads * head_dim; }
  std::size_t key_floats() const { return static_cast<std::size_t>(kBlockTokens) * kv_width(); }
  std::size_t block_floats() const { return 2 * key_floats(); }  // keys, then values

  const float* key(const float* block, int slot, int kv_head, int d) const {
    return block + (static_cast<std::size_t>(kv_head) * head_dim + d) * kBlockTokens + slot;
  }
  const float* value_row(const float* block, int slot, int kv_head) const {
    return block + key_floats() + (static_cast<std::size_t>(slot) * kv_heads + kv_head) * head_dim;
  }

  // Stores one position's key and value rows ([kv_head][head_dim] each) into slot `slot` of `block`.
  void write(float* block, int slot, const float* key_row, const float* value_row) const {
    for (int h = 0; h < kv_heads; ++h) {
      for (int d = 0; d < head_dim; ++d) {
        block[(static_cast<std::size_t>(h) * head_dim + d) * kBlockTokens + slot] = key_row[h * head_dim + d];
      }
    }
    float* values = block + key_floats() + static_cast<std::size_t>(slot) * kv_width();
    for (int i = 0; i < kv_width(); ++i) values[i] = value_row[i];
  }
};

}  // namespace minigen
