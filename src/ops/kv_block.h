#pragma once
// How K and V of 16 consecutive positions of one layer sit in memory — one "block", the unit both the contiguous
// KvCache and a paged cache hand to the attention kernel. A block is bytes; its elements are the cache's KvDType.
//
//   keys          [kv_head][head_dim][16 positions]  (transposed: one vector load gives dimension d of 16 keys, so
//                                                     16 scores grow side by side, each a plain fma chain over d)
//   values        [16 positions][kv_head][head_dim]  (as MiniMind's V rows: the weighted sum runs over positions)
//   int8 only:
//   key scales    [kv_head][16 positions] fp32       (one vector load gives the scales of 16 scores)
//   value scales  [kv_head][16 positions] fp32
//
// K and V are stored before GQA's repeat_kv: kv_heads rows per position, not q_heads. For f32 the keys and values
// sit exactly where they did when blocks were float arrays.
#include <cstddef>

#include "ops/kv_dtype.h"

namespace minigen {

// The shape of a whole model's KV storage: what a cache needs to know of the model, and nothing more.
struct KvLayout {
  int layers = 0;
  int kv_heads = 0;
  int head_dim = 0;
  KvDType dtype = KvDType::kF32;

  int kv_width() const { return kv_heads * head_dim; }
  // The per-token cache cost: 2 (K and V) · layers · kv_heads · head_dim · bytes_per_element, plus for int8
  // 2 · layers · kv_heads · 4 bytes of scales.
  std::size_t bytes_per_token() const {
    const std::size_t scales = dtype == KvDType::kInt8 ? 2 * static_cast<std::size_t>(layers) * kv_heads * 4 : 0;
    return 2 * static_cast<std::size_t>(layers) * kv_width() * kv_dtype_bytes(dtype) + scales;
  }
};

struct KvBlockLayout {
  static constexpr int kBlockTokens = 16;
  int kv_heads = 0;
  int head_dim = 0;
  KvDType dtype = KvDType::kF32;

  int kv_width() const { return kv_heads * head_dim; }
  std::size_t element_bytes() const { return kv_dtype_bytes(dtype); }
  std::size_t key_bytes() const { return static_cast<std::size_t>(kBlockTokens) * kv_width() * element_bytes(); }
  // Of the key scales (the value scales take as many): 16 · kv_heads floats for int8, else nothing.
  std::size_t scale_bytes() const {
    return dtype == KvDType::kInt8 ? static_cast<std::size_t>(kBlockTokens) * kv_heads * sizeof(float) : 0;
  }
  std::size_t block_bytes() const { return 2 * (key_bytes() + scale_bytes()); }  // keys, values, scales

  // Dimension d of the block's 16 keys of `kv_head` (T: the stored element type, as the kernel names it).
  template <class T>
  const T* keys(const std::byte* block, int kv_head, int d) const {
    return reinterpret_cast<const T*>(block) + (static_cast<std::size_t>(kv_head) * head_dim + d) * kBlockTokens;
  }
  template <class T>
  const T* value_row(const std::byte* block, int slot, int kv_head) const {
    return reinterpret_cast<const T*>(block + key_bytes()) +
           (static_cast<std::size_t>(slot) * kv_heads + kv_head) * head_dim;
  }
  // int8: the scales of the block's 16 positions of `kv_head`.
  const float* key_scales(const std::byte* block, int kv_head) const {
    return reinterpret_cast<const float*>(block + 2 * key_bytes()) + static_cast<std::size_t>(kv_head) * kBlockTokens;
  }
  const float* value_scales(const std::byte* block, int kv_head) const {
    return key_scales(block + scale_bytes(), kv_head);
  }

  // The stored element widened to fp32 — for int8 the integer q, before its scale.
  float stored_key(const std::byte* block, int slot, int kv_head, int d) const;
  float stored_value(const std::byte* block, int slot, int kv_head, int d) const;
  // What the element stands for: the stored element, times its scale for int8.
  float key_at(const std::byte* block, int slot, int kv_head, int d) const;
  float value_at(const std::byte* block, int slot, int kv_head, int d) const;

  // Stores one position's key and value rows ([kv_head][head_dim] each) into slot `slot` of `block`, rounded or
  // quantized to the dtype.
  void write(std::byte* block, int slot, const float* key_row, const float* value_row) const;
};

}  // namespace minigen
