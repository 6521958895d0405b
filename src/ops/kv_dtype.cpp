#include "ops/kv_dtype.h"

#include <cmath>
#include <cstring>
#include <string>

#include "core/error.h"

namespace minigen {

std::string_view kv_dtype_name(KvDType dtype) {
  switch (dtype) {
    case KvDType::kF32:
      return "f32";
    case KvDType::kBF16:
      return "bf16";
    case KvDType::kF16:
      return "f16";
    case KvDType::kInt8:
      return "int8";
  }
  return "f32";
}

KvDType parse_kv_dtype(std::string_view name) {
  for (KvDType dtype : {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8}) {
    if (name == kv_dtype_name(dtype)) return dtype;
  }
  throw Error("unknown --kv-dtype '" + std::string(name) + "' (expected f32, bf16, f16 or int8)");
}

std::size_t kv_dtype_bytes(KvDType dtype) {
  switch (dtype) {
    case KvDType::kF32:
      return 4;
    case KvDType::kBF16:
    case KvDType::kF16:
      return 2;
    case KvDType::kInt8:
      return 1;
  }
  return 4;
}

uint16_t float_to_f16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u | static_cast<uint16_t>((magnitude >> 13) & 0x1ffu);  // NaN
  // 65520 (0x477ff000) lies halfway between the largest half, 65504, and 65536; the tie goes to the even 65536 = inf.
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;
  if (magnitude < 0x38800000u) {
    // Below 2^−14 the half is subnormal, in units of 2^−24: |x| · 2^24 is exact (< 2^10) and nearbyint rounds it
    // to nearest even. 1024 comes out as 0x0400, the smallest normal half, which is the right encoding.
    float scaled;
    std::memcpy(&scaled, &magnitude, sizeof scaled);
    return sign | static_cast<uint16_t>(std::nearbyint(scaled * 16777216.0f));
  }
  // Rebias the exponent (127 − 15 = 112), then drop 13 mantissa bits: adding 0xfff plus the lowest kept bit rounds
  // to nearest and breaks ties toward an even kept mantissa; a carry moves into the exponent as it should.
  uint32_t rebased = magnitude - (112u << 23);
  rebased += 0xfffu + ((rebased >> 13) & 1u);
  return sign | static_cast<uint16_t>(rebased >> 13);
}

float f16_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  uint32_t widened;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // · 2^−24, exact
    std::memcpy(&widened, &magnitude, sizeof widened);
    widened |= sign;
  } else if (exponent == 31) {
    widened = sign | 0x7f800000u | (mantissa << 13);
  } else {
    widened = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &widened, sizeof value);
  return value;
}

float int8_scale(std::span<const float> row) {
  float absmax = 0.0f;
  for (float value : row) absmax = std::fmax(absmax, std::fabs(value));
  return absmax / 127.0f;
}

int8_t quantize_int8(float value, float scale) {
  if (scale == 0.0f) return 0;
  // fmax/fmin rather than std::clamp: a NaN quotient ends at −127 instead of reaching an undefined cast.
  const float rounded = std::nearbyint(value / scale);
  return static_cast<int8_t>(std::fmin(std::fmax(rounded, -127.0f), 127.0f));
}

}  // namespace minigen
