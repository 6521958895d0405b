#include "model/io/gguf_kquants.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/io/gguf_quant_test_blocks.h"

namespace minigen {
namespace {

using testing::code_pattern;
using testing::Half;
using testing::kHalf;
using testing::kOne;
using testing::kOneAndAHalf;
using testing::kQuarter;
using testing::kThird;
using testing::kZero;
using testing::put_half;
using testing::ScaledBlock;
using testing::SignedBlock;

std::vector<float> dequantize_k(GgufTensorType type, const std::vector<uint8_t>& bytes) {
  std::vector<float> values(bytes.size() / gguf_type_bytes(type, kGgufSuperBlock) * kGgufSuperBlock, -999.0f);
  dequantize_k_quants(type, std::as_bytes(std::span(bytes.data(), bytes.size())), values.data());
  return values;
}

// The 12 packed bytes written out by hand: sub-block 0 has scale 1 and min 2 in the low 6 bits of bytes 0 and 4;
// sub-block 4 has scale 0b11'0101 = 53 (top bits in byte 0's bits 6–7, low nibble in byte 8) and min 0b10'0111 = 39
// (top bits in byte 4, high nibble of byte 8). Every code byte is 0x21: low nibble 1, high nibble 2.
TEST(GgufKQuants, Q4KSubBlocksFourToSevenTakeTheirTopScaleBitsFromTheFirstFourBytes) {
  std::vector<uint8_t> bytes(144, 0);
  put_half(bytes, 0, kOne);
  put_half(bytes, 2, kQuarter);
  bytes[4 + 0] = 0xc1;
  bytes[4 + 4] = 0x82;
  bytes[4 + 8] = 0x75;
  for (int i = 16; i < 144; ++i) bytes[i] = 0x21;
  const std::vector<float> values = dequantize_k(GgufTensorType::kQ4_K, bytes);
  EXPECT_EQ(values[0], 0.5f);  // sub-block 0, low nibble 1: 1 · 1 · 1 − 0.25 · 2
  EXPECT_EQ(values[31], 0.5f);
  EXPECT_EQ(values[32], 0.0f);                        // sub-block 1: scale 0, min 0
  EXPECT_EQ(values[4 * 32 + 7], 53.0f - 0.25f * 39);  // sub-block 4: low nibbles of code bytes 64 … 95
  EXPECT_EQ(values[5 * 32 + 7], 0.0f);                // sub-block 5: its scale and min bits are all zero
}

TEST(GgufKQuants, Q4KHandChosenScalesMinsAndCodes) {
  const ScaledBlock block{
      kHalf, kQuarter, {1, 2, 63, 0, 17, 63, 40, 5}, {0, 63, 3, 9, 63, 1, 22, 63}, code_pattern(7, 3, 16)};
  const std::vector<float> values = dequantize_k(GgufTensorType::kQ4_K, block.encode(false));
  ASSERT_EQ(values.size(), 256u);
  for (int n = 0; n < 256; ++n) EXPECT_EQ(values[n], block.expected(n)) << n;
  EXPECT_EQ(values[97], -2.25f);   // sub-block 3 (scale 0, min 9), code 10: only −dmin · min is left
  EXPECT_EQ(values[162], 31.25f);  // sub-block 5 (scale 63, min 1), code 1: 0.5 · 63 − 0.25
}

// Every 6-bit scale and min at 63 sets every bit of the 12 packed bytes; a d with all 11 significand bits in use
// still gives exact products.
TEST(GgufKQuants, Q4KAllScaleAndMinBitsSet) {
  ScaledBlock block{kThird, kOneAndAHalf, {}, {}, code_pattern(5, 0, 16)};
  block.scales.fill(63);
  block.mins.fill(63);
  const std::vector<uint8_t> bytes = block.encode(false);
  for (int i = 4; i < 16; ++i) EXPECT_EQ(bytes[i], 0xff) << i;
  const std::vector<float> values = dequantize_k(GgufTensorType::kQ4_K, bytes);
  for (int n = 0; n < 256; ++n) EXPECT_EQ(values[n], block.expected(n)) << n;
  EXPECT_EQ(values[3], static_cast<float>(kThird.value * 63 * 15 - 1.5 * 63));
}

// The fifth bits written out by hand: byte 3 of the 32 has bits 0 and 7 set, so value 3 (sub-block 0) and value
// 7 · 32 + 3 = 227 (sub-block 7) get 16 added; code byte 3 is 0x0F (value 3: 15, value 35: 0) and code byte 96 + 3
// is 0xF0 (value 195: 0, value 227: 15). Every scale is 1, every min 0.
TEST(GgufKQuants, Q5KTheFifthBitOfValueIOfSubBlockSIsBitSOfHighByteI) {
  std::vector<uint8_t> bytes(176, 0);
  put_half(bytes, 0, kOne);
  put_half(bytes, 2, kOneAndAHalf);
  for (int i = 0; i < 4; ++i) bytes[4 + i] = 0x01;   // scales 0 … 3
  for (int i = 8; i < 12; ++i) bytes[4 + i] = 0x01;  // scales 4 … 7 (low nibble), mins 4 … 7 (high nibble) 0
  bytes[16 + 3] = 0x81;
  bytes[48 + 3] = 0x0f;
  bytes[48 + 96 + 3] = 0xf0;
  const std::vector<float> values = dequantize_k(GgufTensorType::kQ5_K, bytes);
  EXPECT_EQ(values[3], 31.0f);
  EXPECT_EQ(values[35], 0.0f);
  EXPECT_EQ(values[195], 0.0f);
  EXPECT_EQ(values[227], 31.0f);
  EXPECT_EQ(values[226], 0.0f);
  int nonzero = 0;
  for (float value : values) nonzero += value != 0.0f;
  EXPECT_EQ(nonzero, 2);
}

TEST(GgufKQuants, Q5KHandChosenScalesMinsAndCodes) {
  const ScaledBlock block{
      kQuarter, kThird, {63, 1, 0, 31, 32, 48, 7, 63}, {5, 0, 63, 33, 1, 16, 63, 62}, code_pattern(11, 7, 32)};
  const std::vector<float> values = dequantize_k(GgufTensorType::kQ5_K, block.encode(true));
  for (int n = 0; n < 256; ++n) EXPECT_EQ(values[n], block.expected(n)) << n;
  EXPECT_EQ(values[2], static_cast<float>(0.25 * 63 * 29 - kThird.value * 5));  // code 29: the fifth bit set
}

// Q6_K's bits written out by hand: low byte 0 = 0x5A holds values 0 (0xA) and 64 (0x5); low byte 32 = 0x3C holds
// values 32 (0xC) and 96 (0x3); high byte 0 = 0b11'10'01'00 gives them top bits 0, 1, 2 and 3. Scales: −3 for
// values 0 … 15, 2 for 32 … 47, 1 for 64 … 79, −128 for 96 … 111, and 0 elsewhere. A zero value keeps ggml's sign.
TEST(GgufKQuants, Q6KBitsScalesAndTheOffsetOf32) {
  std::vector<uint8_t> bytes(210, 0);
  bytes[0] = 0x5a;
  bytes[32] = 0x3c;
  bytes[128] = 0xe4;
  bytes[128 + 2] = 0x02;  // value 2: low bits 0, top bits 2: q = 32
  bytes[192 + 0] = static_cast<uint8_t>(-3);
  bytes[192 + 2] = 2;
  bytes[192 + 4] = 1;
  bytes[192 + 6] = static_cast<uint8_t>(-128);
  put_half(bytes, 208, kHalf);
  const std::vector<float> values = dequantize_k(GgufTensorType::kQ6_K, bytes);
  EXPECT_EQ(values[0], 0.5f * -3 * (10 - 32));     // q = 0x0A
  EXPECT_EQ(values[1], 0.5f * -3 * (0 - 32));      // every other code of the group is 0
  EXPECT_EQ(values[32], 0.5f * 2 * (28 - 32));     // q = 0x1C
  EXPECT_EQ(values[64], 0.5f * 1 * (37 - 32));     // q = 0x25
  EXPECT_EQ(values[96], 0.5f * -128 * (51 - 32));  // q = 0x33
  EXPECT_EQ(values[2], 0.0f);                      // q − 32 = 0, multiplied as (d · scale) · 0 as ggml does: −0
  EXPECT_TRUE(std::signbit(values[2]));
  EXPECT_EQ(values[16], 0.0f);  // scale 0
  EXPECT_EQ(values[128], 0.0f);
}

// Negative scales, the extremes −128 and 127, codes 0 (−32) and 63 (+31), both halves of the super-block.
TEST(GgufKQuants, Q6KHandChosenNegativeScalesAndCodes) {
  const SignedBlock block{
      kThird, {-128, -127, -1, 0, 1, 2, 127, 64, -64, 5, -5, 33, -33, 100, -100, 7}, code_pattern(13, 5, 64)};
  const std::vector<float> values = dequantize_k(GgufTensorType::kQ6_K, block.encode());
  for (int n = 0; n < 256; ++n) EXPECT_EQ(values[n], block.expected(n)) << n;
  EXPECT_EQ(values[39], static_cast<float>(kThird.value * -1 * -32));         // code 0, group 2's scale −1
  EXPECT_EQ(values[34], static_cast<float>(kThird.value * -1 * 31));          // code 63
  EXPECT_EQ(values[6], static_cast<float>(kThird.value * -128 * -13));        // code 19, scale −128
  EXPECT_EQ(values[197], static_cast<float>(kThird.value * -33 * (6 - 32)));  // second half: code 6, group 12
}

// Super-blocks follow each other: the second one's values come 256 later, with its own d.
TEST(GgufKQuants, ConsecutiveSuperBlocks) {
  const SignedBlock first{kOne, {}, code_pattern(3, 1, 64)};
  SignedBlock second{kOneAndAHalf, {}, code_pattern(9, 2, 64)};
  second.scales.fill(-7);
  std::vector<uint8_t> bytes = first.encode();
  const std::vector<uint8_t> more = second.encode();
  bytes.insert(bytes.end(), more.begin(), more.end());
  const std::vector<float> values = dequantize_k(GgufTensorType::kQ6_K, bytes);
  ASSERT_EQ(values.size(), 512u);
  for (int n = 0; n < 256; ++n) EXPECT_EQ(values[n], 0.0f) << n;  // the first block's scales are all 0
  for (int n = 0; n < 256; ++n) EXPECT_EQ(values[256 + n], second.expected(n)) << n;
}

TEST(GgufKQuants, PartialSuperBlocksAndNonFiniteScalesAreErrors) {
  const SignedBlock block{kOne, {}, code_pattern(1, 0, 64)};
  std::vector<uint8_t> bytes = block.encode();
  bytes.pop_back();
  std::vector<float> values(256);
  try {
    dequantize_k_quants(GgufTensorType::kQ6_K, std::as_bytes(std::span(bytes.data(), bytes.size())), values.data());
    FAIL() << "a partial super-block was read";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), "Q6_K data of 209 bytes is not a whole number of 210-byte super-blocks");
  }
  ScaledBlock infinite{{0x7c00, 0.0}, kZero, {}, {}, {}};
  const std::vector<uint8_t> infinite_bytes = infinite.encode(false);
  try {
    dequantize_k_quants(GgufTensorType::kQ4_K, std::as_bytes(std::span(infinite_bytes.data(), 144)), values.data());
    FAIL() << "an infinite d was read";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), "Q4_K super-block 0 has a scale (d or dmin) that is not finite");
  }
}

}  // namespace
}  // namespace minigen
