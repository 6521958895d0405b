#include "model/dtype.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace minigen {
namespace {

TEST(Float16Test, KnownValuesConvertExactly) {
  EXPECT_EQ(float_to_f16(0.0f), 0x0000);
  EXPECT_EQ(float_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(float_to_f16(0.5f), 0x3800);
  EXPECT_EQ(float_to_f16(65504.0f), 0x7bff);               // largest finite half
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_f16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(float_to_f16(-std::numeric_limits<float>::infinity()), 0xfc00);

  EXPECT_EQ(f16_to_float(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(f16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_float(0x03ff), 1023 * std::ldexp(1.0f, -24));  // largest subnormal
  EXPECT_EQ(f16_to_float(0xc000), -2.0f);
  EXPECT_TRUE(std::signbit(f16_to_float(0x8000)));
  EXPECT_EQ(f16_to_float(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f16_to_float(0x7e00)));
}

TEST(Float16Test, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): the tie goes to the even mantissa, 1.
  EXPECT_EQ(float_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): rounds up.
  EXPECT_EQ(float_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above the halfway point rounds up.
  EXPECT_EQ(float_to_f16(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3c01);
  // 65520 is halfway between 65504 and 65536 (= inf in half): ties to even overflows to inf.
  EXPECT_EQ(float_to_f16(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_f16(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(float_to_f16(1e10f), 0x7c00);
  // Subnormal ties: 2^-25 is halfway between 0 and 2^-24 (rounds to 0), 3·2^-25 between 1 and 2 units (to 2).
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(float_to_f16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(float_to_f16(3 * std::ldexp(1.0f, -25)), 0x0002);
  EXPECT_EQ(float_to_f16(-std::ldexp(1.0f, -30)), 0x8000);
  // The largest subnormal rounds up into the smallest normal.
  EXPECT_EQ(float_to_f16(std::nextafter(std::ldexp(1.0f, -14), 0.0f)), 0x0400);
}

TEST(Float16Test, NanStaysNan) {
  EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(std::numeric_limits<float>::quiet_NaN()))));
  // A signalling NaN whose payload sits only in the low bits must not turn into infinity.
  const float low_payload_nan = std::bit_cast<float>(0x7f800001u);
  EXPECT_EQ(float_to_f16(low_payload_nan) & 0x7c00, 0x7c00);
  EXPECT_NE(float_to_f16(low_payload_nan) & 0x03ff, 0);
  EXPECT_EQ(float_to_f16(-std::numeric_limits<float>::quiet_NaN()) & 0x8000, 0x8000);
}

TEST(Float16Test, EveryHalfSurvivesTheRoundTrip) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float value = f16_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(value)))) << bits;
    } else {
      ASSERT_EQ(float_to_f16(value), bits) << "half bits " << bits;
    }
  }
}

#ifdef __FLT16_MANT_DIG__
// The compiler's own _Float16 conversion (round to nearest even) is an independent reference.
TEST(Float16Test, MatchesCompilerConversionOnAFloatSweep) {
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4093) {  // a prime step visits every exponent and tie kind
    const float value = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (std::isnan(value)) continue;
    const _Float16 reference = static_cast<_Float16>(value);
    uint16_t reference_bits = 0;
    std::memcpy(&reference_bits, &reference, sizeof(reference_bits));
    ASSERT_EQ(float_to_f16(value), reference_bits) << "float bits " << bits;
  }
}
#endif

TEST(BFloat16Test, KnownValuesAndRounding) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xc000);
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even give 1; 1 + 3·2^-8 rounds up to 1 + 2^-6.
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to inf
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x00018000u)), 0x0002);  // subnormal tie, odd → up
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::bit_cast<float>(0x7f800001u)))));
}

// Reference rounding in double arithmetic: pick the nearer of the two bf16 neighbours, the even one on a tie.
uint16_t reference_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t below = static_cast<uint16_t>(bits >> 16);
  const uint16_t above = static_cast<uint16_t>(below + 1);
  const double exact = value;
  const double distance_below = std::fabs(exact - static_cast<double>(bf16_to_float(below)));
  const double distance_above = std::fabs(static_cast<double>(bf16_to_float(above)) - exact);
  if (distance_below < distance_above) return below;
  if (distance_above < distance_below) return above;
  return (below & 1) ? above : below;
}

TEST(BFloat16Test, MatchesReferenceRoundingOnAFloatSweep) {
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4093) {
    const float value = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (!std::isfinite(value) || std::fabs(value) >= std::numeric_limits<float>::max() * 0.99f) continue;
    ASSERT_EQ(float_to_bf16(value), reference_bf16(value)) << "float bits " << bits;
  }
}

TEST(BFloat16Test, EveryBFloat16SurvivesTheRoundTrip) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float value = bf16_to_float(static_cast<uint16_t>(bits));
    if (!std::isnan(value)) {
      ASSERT_EQ(float_to_bf16(value), bits);
    }
  }
}

TEST(DTypeTest, NamesSizesAndBulkConversion) {
  EXPECT_STREQ(dtype_name(DType::kF32), "F32");
  EXPECT_STREQ(dtype_name(DType::kF16), "F16");
  EXPECT_STREQ(dtype_name(DType::kBF16), "BF16");
  EXPECT_EQ(dtype_size_bytes(DType::kF32), 4u);
  EXPECT_EQ(dtype_size_bytes(DType::kF16), 2u);
  EXPECT_EQ(dtype_size_bytes(DType::kBF16), 2u);

  const float values[3] = {1.0f, -0.5f, 65504.0f};
  std::byte bytes[12];
  encode_from_f32(DType::kF16, values, 3, bytes);
  // Little-endian: 1.0 = 0x3c00 → 00 3c.
  EXPECT_EQ(bytes[0], std::byte{0x00});
  EXPECT_EQ(bytes[1], std::byte{0x3c});
  float decoded[3] = {};
  decode_to_f32(DType::kF16, bytes, 3, decoded);
  EXPECT_EQ(decoded[2], 65504.0f);
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    encode_from_f32(dtype, values, 3, bytes);
    decode_to_f32(dtype, bytes, 3, decoded);
    EXPECT_EQ(decoded[0], 1.0f);
    EXPECT_EQ(decoded[1], -0.5f);
  }
  encode_from_f32(DType::kF32, values, 1, bytes);
  EXPECT_EQ(bytes[3], std::byte{0x3f});  // 1.0f = 0x3f800000, most significant byte last
}

}  // namespace
}  // namespace minigen
