#include "model/io/gguf_legacy_quants.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/io/gguf_quant_test_blocks.h"

namespace minigen {
namespace {

using testing::Half;
using testing::kHalf;
using testing::kOneAndAHalf;
using testing::kThird;
using testing::LegacyBlock;
using testing::put_half;

std::vector<float> dequantize_legacy(GgufTensorType type, const std::vector<uint8_t>& bytes) {
  std::vector<float> values(bytes.size() / gguf_type_bytes(type, kGgufQuantBlock) * kGgufQuantBlock, -999.0f);
  dequantize_legacy_quants(type, std::as_bytes(std::span(bytes.data(), bytes.size())), values.data());
  return values;
}

// Bytes written out by hand: d = 0.5, fifth bits 0x80000001 (values 0 and 31), nibble byte 0 = 0x3F (value 0: 15,
// value 16: 3), nibble byte 15 = 0xA0 (value 15: 0, value 31: 10).
TEST(GgufLegacyQuants, Q5_0ByHand) {
  std::vector<uint8_t> bytes(22, 0);
  put_half(bytes, 0, kHalf);
  bytes[2] = 0x01;
  bytes[5] = 0x80;
  bytes[6 + 0] = 0x3f;
  bytes[6 + 15] = 0xa0;
  const std::vector<float> values = dequantize_legacy(GgufTensorType::kQ5_0, bytes);
  EXPECT_EQ(values[0], 0.5f * (15 + 16 - 16));
  EXPECT_EQ(values[16], 0.5f * (3 - 16));
  EXPECT_EQ(values[15], 0.5f * (0 - 16));
  EXPECT_EQ(values[31], 0.5f * (10 + 16 - 16));
  EXPECT_EQ(values[1], -8.0f);  // code 0: 0.5 · −16
}

// Q4_1 and Q5_1 add m; with m = −1.5: value 0 of nibble 0x2 → 0.5 · 2 − 1.5. Q5_1's fifth bit of value 17 is bit 17.
TEST(GgufLegacyQuants, Q4_1AndQ5_1ByHand) {
  std::vector<uint8_t> q4_1(20, 0);
  put_half(q4_1, 0, kHalf);
  q4_1[2] = 0x00;  // fp16 −1.5 = 0xBE00
  q4_1[3] = 0xbe;
  q4_1[4 + 0] = 0xf2;
  const std::vector<float> values = dequantize_legacy(GgufTensorType::kQ4_1, q4_1);
  EXPECT_EQ(values[0], 0.5f * 2 - 1.5f);
  EXPECT_EQ(values[16], 0.5f * 15 - 1.5f);
  EXPECT_EQ(values[1], -1.5f);

  std::vector<uint8_t> q5_1(24, 0);
  put_half(q5_1, 0, kOneAndAHalf);
  put_half(q5_1, 2, kHalf);
  q5_1[4 + 2] = 0x02;  // bit 17 of the little-endian uint32
  q5_1[8 + 1] = 0x70;  // nibble byte 1: value 1 low 0, value 17 high 7
  const std::vector<float> five = dequantize_legacy(GgufTensorType::kQ5_1, q5_1);
  EXPECT_EQ(five[17], 1.5f * (7 + 16) + 0.5f);
  EXPECT_EQ(five[1], 0.5f);
}

// Blocks built from their fields by the test's encoder, every type, values from the formula.
TEST(GgufLegacyQuants, HandChosenFieldsGiveTheFormulasValues) {
  for (const GgufTensorType type : {GgufTensorType::kQ4_1, GgufTensorType::kQ5_0, GgufTensorType::kQ5_1}) {
    LegacyBlock block{type, kThird, Half{0xb555, -kThird.value}, {}};
    const int range = type == GgufTensorType::kQ4_1 ? 16 : 32;
    for (int j = 0; j < 32; ++j) block.codes[j] = (j * 7 + 3) % range;
    block.codes[5] = range - 1;
    block.codes[21] = 0;
    std::vector<uint8_t> bytes = block.encode();
    const std::vector<uint8_t> second = LegacyBlock{type, kHalf, kHalf, block.codes}.encode();
    bytes.insert(bytes.end(), second.begin(), second.end());
    const std::vector<float> values = dequantize_legacy(type, bytes);
    ASSERT_EQ(values.size(), 64u);
    for (int j = 0; j < 32; ++j) EXPECT_EQ(values[j], block.expected(j)) << gguf_type_name(type) << " " << j;
    const LegacyBlock copy{type, kHalf, kHalf, block.codes};
    for (int j = 0; j < 32; ++j) EXPECT_EQ(values[32 + j], copy.expected(j)) << gguf_type_name(type) << " " << j;
  }
}

TEST(GgufLegacyQuants, PartialBlocksAndNonFiniteScalesAreErrors) {
  std::vector<float> values(64);
  const std::vector<uint8_t> short_bytes(23, 0);
  try {
    dequantize_legacy_quants(GgufTensorType::kQ5_1, std::as_bytes(std::span(short_bytes.data(), 23)), values.data());
    FAIL() << "a partial block was read";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), "Q5_1 data of 23 bytes is not a whole number of 24-byte blocks");
  }
  std::vector<uint8_t> nan_min(40, 0);
  put_half(nan_min, 20 + 2, Half{0x7e00, 0.0});  // block 1's m: a NaN
  try {
    dequantize_legacy_quants(GgufTensorType::kQ4_1, std::as_bytes(std::span(nan_min.data(), 40)), values.data());
    FAIL() << "a NaN m was read";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), "Q4_1 block 1 has a scale (d or m) that is not finite");
  }
}

}  // namespace
}  // namespace minigen
