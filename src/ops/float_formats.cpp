#include "ops/float_formats.h"

#include <bit>
#include <cmath>

namespace minigen {
namespace {

constexpr uint32_t kF32SignMask = 0x80000000u;
constexpr uint32_t kF32AbsMask = 0x7fffffffu;
constexpr uint32_t kF32Infinity = 0x7f800000u;

// Divides `magnitude` by 2^shift (shift ≥ 1), rounding to nearest with ties to even.
uint32_t shift_right_round_even(uint32_t magnitude, int shift) {
  const uint32_t quotient = magnitude >> shift;
  const uint32_t remainder = magnitude & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (remainder > half || (remainder == half && (quotient & 1u))) return quotient + 1;
  return quotient;
}

}  // namespace

float f16_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: value = mantissa · 2^-24, exact in fp32.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return std::bit_cast<float>(sign | kF32Infinity | (mantissa << 13));  // inf or NaN
  // Rebias the exponent from 15 to 127.
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

float bf16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t float_to_f16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits & kF32SignMask) >> 16);
  const uint32_t magnitude = bits & kF32AbsMask;
  if (magnitude > kF32Infinity) {
    // NaN: keep the top mantissa bits, and set the quiet bit so the payload never truncates to infinity.
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  // 65520 = 0x477ff000 lies halfway between 65504 (the largest half) and 65536; ties to even round it up to inf.
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude < 0x38800000u) {
    // Below 2^-14 the result is a half subnormal: count units of 2^-24. The fp32 value is m · 2^(e-150) with the
    // implicit bit in m, so the count is m / 2^(126-e).
    const uint32_t exponent = magnitude >> 23;
    const int shift = 126 - static_cast<int>(exponent);
    if (shift > 24) return sign;  // below 2^-25: rounds to zero
    const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    return static_cast<uint16_t>(sign | shift_right_round_even(significand, shift));
  }
  // Normal: rebias the exponent (127 → 15) and drop 13 mantissa bits; a carry out of the mantissa correctly bumps
  // the exponent.
  return static_cast<uint16_t>(sign | shift_right_round_even(magnitude - 0x38000000u, 13));
}

uint16_t float_to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & kF32AbsMask) > kF32Infinity) return static_cast<uint16_t>((bits >> 16) | 0x0040u);  // quiet NaN
  // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even; overflow carries into inf.
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

uint16_t float_to_bf16_flush_subnormal(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & kF32Infinity) == 0) return static_cast<uint16_t>((bits >> 16) & 0x8000u);
  return float_to_bf16(value);
}

}  // namespace minigen
