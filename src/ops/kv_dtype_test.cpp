#include "ops/kv_dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/error.h"
#include "ops/kv_block.h"

namespace minigen {
namespace {

TEST(KvDType, NamesRoundTripAndABadNameIsOneClearError) {
  for (KvDType dtype : {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8}) {
    EXPECT_EQ(parse_kv_dtype(kv_dtype_name(dtype)), dtype);
  }
  EXPECT_EQ(kv_dtype_bytes(KvDType::kF32), 4u);
  EXPECT_EQ(kv_dtype_bytes(KvDType::kBF16), 2u);
  EXPECT_EQ(kv_dtype_bytes(KvDType::kF16), 2u);
  EXPECT_EQ(kv_dtype_bytes(KvDType::kInt8), 1u);
  try {
    parse_kv_dtype("fp8");
    FAIL() << "fp8 was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown --kv-dtype 'fp8' (expected f32, bf16, f16 or int8)");
  }
}

TEST(KvDType, HalfRoundsToNearestEven) {
  EXPECT_EQ(float_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(float_to_f16(0.0f), 0x0000);
  EXPECT_EQ(float_to_f16(-0.0f), 0x8000);
  // Ties: 1 + 2^−11 lies halfway between 1 (even mantissa 0) and 1 + 2^−10 (odd): down. 1 + 3·2^−11 lies between
  // mantissas 1 and 2: up to the even 2. Just above a tie rounds up.
  EXPECT_EQ(float_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(float_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_f16(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3c01);
  // The largest half, 65504, and the tie at 65520 that goes to the even 65536 = inf.
  EXPECT_EQ(float_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_f16(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(float_to_f16(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_f16(-1e9f), 0xfc00);
  EXPECT_EQ(float_to_f16(std::numeric_limits<float>::infinity()), 0x7c00);
  // Subnormals, in units of 2^−24: 2^−25 is a tie between 0 and 1 unit (down to 0), 3·2^−25 between 1 and 2 (up).
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(float_to_f16(3 * std::ldexp(1.0f, -25)), 0x0002);
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)), 0x0400);  // 1023.5 units → smallest normal
  EXPECT_EQ(float_to_f16(std::ldexp(1.0f, -14)), 0x0400);
  const uint16_t nan = float_to_f16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(f16_to_float(nan)));
}

TEST(KvDType, EveryHalfSurvivesTheRoundTrip) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float value = f16_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(value)) continue;
    ASSERT_EQ(float_to_f16(value), bits) << std::hex << bits;
  }
  EXPECT_EQ(f16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(f16_to_float(0xc000), -2.0f);
}

TEST(KvDType, Int8ScaleIsAbsmaxOver127AndRoundsToNearestEven) {
  // absmax 127 → scale 1: q is x rounded to nearest, ties to even.
  const std::vector<float> row = {127.0f, 2.5f, 3.5f, -2.5f, -0.5f, 126.5f, 1.5f, 0.49f};
  const float scale = int8_scale(row);
  EXPECT_EQ(scale, 1.0f);
  const int8_t expected[] = {127, 2, 4, -2, 0, 126, 2, 0};
  for (std::size_t i = 0; i < row.size(); ++i) EXPECT_EQ(quantize_int8(row[i], scale), expected[i]) << i;
  // absmax 254 (negative) → scale 2; 1 / 2 = 0.5 ties to 0; beyond ±127 clamps.
  const std::vector<float> negative = {-254.0f, 1.0f, 3.0f};
  EXPECT_EQ(int8_scale(negative), 2.0f);
  EXPECT_EQ(quantize_int8(-254.0f, 2.0f), -127);
  EXPECT_EQ(quantize_int8(1.0f, 2.0f), 0);
  EXPECT_EQ(quantize_int8(3.0f, 2.0f), 2);
  EXPECT_EQ(quantize_int8(1000.0f, 2.0f), 127);
  // A row of zeros: scale 0, every q 0 (no 0/0).
  const std::vector<float> zeros(8, 0.0f);
  EXPECT_EQ(int8_scale(zeros), 0.0f);
  EXPECT_EQ(quantize_int8(0.0f, 0.0f), 0);
  EXPECT_EQ(quantize_int8(std::numeric_limits<float>::quiet_NaN(), 1.0f), -127);  // defined, no UB
}

TEST(KvBlockLayout, BytesPerTokenOfTheModuleModelInEveryDType) {
  // The module's example: 4 layers, 2 kv heads, head_dim 32, 100 tokens.
  auto bytes_at_100 = [](KvDType dtype) { return 100 * KvLayout{4, 2, 32, dtype}.bytes_per_token(); };
  EXPECT_EQ(bytes_at_100(KvDType::kF32), 204800u);   // 2 · 4 · 100 · 2 · 32 · 4
  EXPECT_EQ(bytes_at_100(KvDType::kBF16), 102400u);  // · 2
  EXPECT_EQ(bytes_at_100(KvDType::kF16), 102400u);
  EXPECT_EQ(bytes_at_100(KvDType::kInt8), 57600u);  // 51,200 + 2 · 4 · 100 · 2 · 4 B of scales
  for (KvDType dtype : {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8}) {
    const KvBlockLayout block{2, 32, dtype};
    const KvLayout model{4, 2, 32, dtype};
    EXPECT_EQ(4 * block.block_bytes(), 16 * model.bytes_per_token()) << kv_dtype_name(dtype);
  }
}

TEST(KvBlockLayout, FloatTypesStoreTheRoundedValue) {
  // Two kv heads of head_dim 2, written to slot 5 (keys transposed, values in rows: both must come back).
  const float key[4] = {1.0f + std::ldexp(1.0f, -8), -3.0f, 0.1f, 100000.0f};
  const float value[4] = {0.5f, -0.25f, 65520.0f, 1e-8f};
  struct Expected {
    KvDType dtype;
    float key[4];
    float value[4];
  };
  const float inf = std::numeric_limits<float>::infinity();
  const Expected cases[] = {
      {KvDType::kF32, {key[0], key[1], key[2], key[3]}, {value[0], value[1], value[2], value[3]}},
      // bf16: 1 + 2^−8 ties to the even 1; 0.1 (0x3dcccccd) rounds up to 0x3dcd; 100000 (0x47c35000) down to 99840.
      {KvDType::kBF16, {1.0f, -3.0f, 0.10009765625f, 99840.0f}, {0.5f, -0.25f, 65536.0f, 1.00117176771e-08f}},
      // f16: 1 + 2^−8 is exact; 0.1 → 0x2e66; 100000 and the tie 65520 overflow to inf; 1e−8 is below half a
      // subnormal unit (2^−25 ≈ 2.98e−8) and flushes to 0.
      {KvDType::kF16, {1.00390625f, -3.0f, 0.0999755859375f, inf}, {0.5f, -0.25f, inf, 0.0f}},
  };
  for (const Expected& expected : cases) {
    const KvBlockLayout layout{2, 2, expected.dtype};
    std::vector<std::byte> block(layout.block_bytes());
    layout.write(block.data(), 5, key, value);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(layout.key_at(block.data(), 5, i / 2, i % 2), expected.key[i]) << kv_dtype_name(expected.dtype) << i;
      EXPECT_EQ(layout.value_at(block.data(), 5, i / 2, i % 2), expected.value[i])
          << kv_dtype_name(expected.dtype) << i;
    }
  }
}

TEST(KvBlockLayout, Int8StoresIntegersAndOneScalePerPositionAndHead) {
  const KvBlockLayout layout{2, 2, KvDType::kInt8};
  std::vector<std::byte> block(layout.block_bytes());
  const float key[4] = {127.0f, -2.5f, 0.0f, 0.0f};      // head 0: scale 1; head 1: all zeros, scale 0
  const float value[4] = {63.5f, 254.0f, -1.0f, 0.25f};  // head 0: scale 2; head 1: scale 1/127
  layout.write(block.data(), 3, key, value);
  EXPECT_EQ(layout.key_scales(block.data(), 0)[3], 1.0f);
  EXPECT_EQ(layout.key_scales(block.data(), 1)[3], 0.0f);
  EXPECT_EQ(layout.value_scales(block.data(), 0)[3], 2.0f);
  EXPECT_EQ(layout.value_scales(block.data(), 1)[3], 1.0f / 127.0f);
  EXPECT_EQ(layout.stored_key(block.data(), 3, 0, 0), 127.0f);
  EXPECT_EQ(layout.stored_key(block.data(), 3, 0, 1), -2.0f);  // −2.5 ties to the even −2
  EXPECT_EQ(layout.stored_key(block.data(), 3, 1, 0), 0.0f);
  EXPECT_EQ(layout.stored_value(block.data(), 3, 0, 0), 32.0f);  // 63.5 / 2 = 31.75
  EXPECT_EQ(layout.stored_value(block.data(), 3, 0, 1), 127.0f);
  EXPECT_EQ(layout.stored_value(block.data(), 3, 1, 0), -127.0f);
  EXPECT_EQ(layout.stored_value(block.data(), 3, 1, 1), 32.0f);  // 0.25 · 127 = 31.75
  EXPECT_EQ(layout.value_at(block.data(), 3, 0, 0), 64.0f);      // scale · q
  EXPECT_EQ(layout.key_at(block.data(), 3, 0, 1), -2.0f);
}

}  // namespace
}  // namespace minigen
