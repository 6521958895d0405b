#include "ops/kv_block.h"

#include <cstdint>
#include <span>

#include "ops/weight_type.h"

namespace minigen {

namespace {

// Stores n elements of `row` at `out`, `out + stride`, … in the dtype (int8: with the given scale).
void store_row(KvDType dtype, const float* row, int n, std::byte* out, std::size_t stride, float scale) {
  for (int i = 0; i < n; ++i) {
    std::byte* element = out + static_cast<std::size_t>(i) * stride * kv_dtype_bytes(dtype);
    switch (dtype) {
      case KvDType::kF32:
        *reinterpret_cast<float*>(element) = row[i];
        break;
      case KvDType::kBF16:
        *reinterpret_cast<uint16_t*>(element) = float_to_bf16(row[i]);
        break;
      case KvDType::kF16:
        *reinterpret_cast<uint16_t*>(element) = float_to_f16(row[i]);
        break;
      case KvDType::kInt8:
        *reinterpret_cast<int8_t*>(element) = quantize_int8(row[i], scale);
        break;
    }
  }
}

float load_element(KvDType dtype, const std::byte* element) {
  switch (dtype) {
    case KvDType::kF32:
      return *reinterpret_cast<const float*>(element);
    case KvDType::kBF16:
      return bf16_to_float(*reinterpret_cast<const uint16_t*>(element));
    case KvDType::kF16:
      return f16_to_float(*reinterpret_cast<const uint16_t*>(element));
    case KvDType::kInt8:
      return static_cast<float>(*reinterpret_cast<const int8_t*>(element));
  }
  return 0.0f;
}

}  // namespace

float KvBlockLayout::stored_key(const std::byte* block, int slot, int kv_head, int d) const {
  const std::size_t index = (static_cast<std::size_t>(kv_head) * head_dim + d) * kBlockTokens + slot;
  return load_element(dtype, block + index * element_bytes());
}

float KvBlockLayout::stored_value(const std::byte* block, int slot, int kv_head, int d) const {
  const std::size_t index = (static_cast<std::size_t>(slot) * kv_heads + kv_head) * head_dim + d;
  return load_element(dtype, block + key_bytes() + index * element_bytes());
}

float KvBlockLayout::key_at(const std::byte* block, int slot, int kv_head, int d) const {
  const float stored = stored_key(block, slot, kv_head, d);
  return dtype == KvDType::kInt8 ? key_scales(block, kv_head)[slot] * stored : stored;
}

float KvBlockLayout::value_at(const std::byte* block, int slot, int kv_head, int d) const {
  const float stored = stored_value(block, slot, kv_head, d);
  return dtype == KvDType::kInt8 ? value_scales(block, kv_head)[slot] * stored : stored;
}

void KvBlockLayout::write(std::byte* block, int slot, const float* key_row, const float* value_row) const {
  const std::size_t element = element_bytes();
  // int8's scales, [kv_head][16 positions] for K, then for V (see kv_block.h).
  auto* key_scale_table = reinterpret_cast<float*>(block + 2 * key_bytes());
  float* value_scale_table = key_scale_table + static_cast<std::size_t>(kv_heads) * kBlockTokens;
  for (int h = 0; h < kv_heads; ++h) {
    const float* key = key_row + static_cast<std::size_t>(h) * head_dim;
    const float* value = value_row + static_cast<std::size_t>(h) * head_dim;
    float key_scale = 0.0f;
    float value_scale = 0.0f;
    if (dtype == KvDType::kInt8) {
      key_scale = int8_scale(std::span(key, head_dim));
      value_scale = int8_scale(std::span(value, head_dim));
      key_scale_table[h * kBlockTokens + slot] = key_scale;
      value_scale_table[h * kBlockTokens + slot] = value_scale;
    }
    // Keys: dimension d of this slot sits 16 elements after dimension d − 1 (the transposed layout).
    store_row(dtype, key, head_dim, block + (static_cast<std::size_t>(h) * head_dim * kBlockTokens + slot) * element,
              kBlockTokens, key_scale);
    store_row(dtype, value, head_dim,
              block + key_bytes() + (static_cast<std::size_t>(slot) * kv_heads + h) * head_dim * element, 1,
              value_scale);
  }
}

}  // namespace minigen
