#include "model/dtype.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "ops/float_formats.h"

namespace minigen {
namespace {

uint16_t load_u16(const std::byte* bytes) {
  return static_cast<uint16_t>(std::to_integer<uint16_t>(bytes[0]) | (std::to_integer<uint16_t>(bytes[1]) << 8));
}

uint32_t load_u32(const std::byte* bytes) {
  return std::to_integer<uint32_t>(bytes[0]) | (std::to_integer<uint32_t>(bytes[1]) << 8) |
         (std::to_integer<uint32_t>(bytes[2]) << 16) | (std::to_integer<uint32_t>(bytes[3]) << 24);
}

void store_u16(uint16_t value, std::byte* bytes) {
  bytes[0] = static_cast<std::byte>(value & 0xff);
  bytes[1] = static_cast<std::byte>(value >> 8);
}

void store_u32(uint32_t value, std::byte* bytes) {
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
}

}  // namespace

// The table's names are string literals, so the view's data is a terminated C string.
const char* dtype_name(DType dtype) { return name_in(kDTypeNames, dtype, "unknown").data(); }

std::size_t dtype_size_bytes(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kI8:
    case DType::kU8:
      return 1;
  }
  return 0;
}

void decode_to_f32(DType dtype, const std::byte* bytes, std::size_t count, float* values) {
  switch (dtype) {
    case DType::kF32:
      for (std::size_t i = 0; i < count; ++i) values[i] = std::bit_cast<float>(load_u32(bytes + 4 * i));
      return;
    case DType::kF16: {
      // Every half value looked up (256 KB, built once from f16_to_float): a 64 M-parameter fp16 checkpoint — an RL
      // trainer's policy update, read while the server runs — converts in a fraction of the time.
      static const std::vector<float> half_values = [] {
        std::vector<float> table(65536);
        for (uint32_t bits = 0; bits < table.size(); ++bits) table[bits] = f16_to_float(static_cast<uint16_t>(bits));
        return table;
      }();
      for (std::size_t i = 0; i < count; ++i) values[i] = half_values[load_u16(bytes + 2 * i)];
      return;
    }
    case DType::kBF16:
      for (std::size_t i = 0; i < count; ++i) values[i] = bf16_to_float(load_u16(bytes + 2 * i));
      return;
    case DType::kI8:
      for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(std::to_integer<int8_t>(bytes[i]));
      return;
    case DType::kU8:
      for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(std::to_integer<uint8_t>(bytes[i]));
      return;
  }
}

void encode_from_f32(DType dtype, const float* values, std::size_t count, std::byte* bytes) {
  switch (dtype) {
    case DType::kF32:
      for (std::size_t i = 0; i < count; ++i) store_u32(std::bit_cast<uint32_t>(values[i]), bytes + 4 * i);
      return;
    case DType::kF16:
      for (std::size_t i = 0; i < count; ++i) store_u16(float_to_f16(values[i]), bytes + 2 * i);
      return;
    case DType::kBF16:
      for (std::size_t i = 0; i < count; ++i) store_u16(float_to_bf16(values[i]), bytes + 2 * i);
      return;
    case DType::kI8:  // integer codes: the values are whole numbers in range by construction; clamp regardless
      for (std::size_t i = 0; i < count; ++i) {
        bytes[i] = static_cast<std::byte>(static_cast<int8_t>(std::clamp(std::nearbyint(values[i]), -128.0f, 127.0f)));
      }
      return;
    case DType::kU8:
      for (std::size_t i = 0; i < count; ++i) {
        bytes[i] = static_cast<std::byte>(static_cast<uint8_t>(std::clamp(std::nearbyint(values[i]), 0.0f, 255.0f)));
      }
      return;
  }
}

}  // namespace minigen
