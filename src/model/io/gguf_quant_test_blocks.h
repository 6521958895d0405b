#pragma once
// K-quant super-blocks (model/io/gguf_kquants.h) and ggml's other blocks of 32 (gguf_legacy_quants.h) written for tests
// from their fields — d, dmin, scales, mins, codes — by the format's definition, with the value each field set stands
// for computed by the formula, independently of the code under test.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/io/gguf_types.h"

namespace minigen::testing {

// fp16 bit patterns and the exact values they stand for, written out here rather than converted by minigen's code.
struct Half {
  uint16_t bits;
  double value;
};
constexpr Half kOne = {0x3c00, 1.0};
constexpr Half kHalf = {0x3800, 0.5};
constexpr Half kQuarter = {0x3400, 0.25};
constexpr Half kOneAndAHalf = {0x3e00, 1.5};
constexpr Half kZero = {0x0000, 0.0};
// 0x3555: exponent 13 − 15, significand 1 + 341/1024 — all 11 significand bits in use, the closest fp16 to 1/3.
constexpr Half kThird = {0x3555, 0.25 * (1.0 + 341.0 / 1024.0)};

inline void put_half(std::vector<uint8_t>& bytes, std::size_t at, Half half) {
  bytes[at] = static_cast<uint8_t>(half.bits & 0xff);
  bytes[at + 1] = static_cast<uint8_t>(half.bits >> 8);
}

// One Q4_K or Q5_K super-block described by its fields, encoded as ggml's block_q4_K / block_q5_K lays them out:
// d, dmin, 12 bytes of 6-bit scales and mins, [Q5_K: 32 bytes whose bit s of byte i is code 32s + i's fifth bit],
// then 128 bytes where byte 32c + i holds code 64c + i in its low nibble and code 64c + 32 + i in its high one.
struct ScaledBlock {
  Half d;
  Half dmin;
  std::array<int, 8> scales;
  std::array<int, 8> mins;
  std::array<int, 256> codes;  // 0 … 15 (Q4_K) or 0 … 31 (Q5_K)

  std::vector<uint8_t> encode(bool five_bit) const {
    std::vector<uint8_t> bytes(five_bit ? 176 : 144, 0);
    put_half(bytes, 0, d);
    put_half(bytes, 2, dmin);
    uint8_t* packed = bytes.data() + 4;
    for (int s = 0; s < 4; ++s) {  // sub-blocks 0 … 3 whole; the top 2 bits of sub-blocks 4 … 7 above them
      packed[s] = static_cast<uint8_t>(scales[s] | ((scales[s + 4] >> 4) << 6));
      packed[s + 4] = static_cast<uint8_t>(mins[s] | ((mins[s + 4] >> 4) << 6));
      packed[s + 8] = static_cast<uint8_t>((scales[s + 4] & 0x0f) | ((mins[s + 4] & 0x0f) << 4));
    }
    uint8_t* high = five_bit ? bytes.data() + 16 : nullptr;
    uint8_t* low = bytes.data() + (five_bit ? 48 : 16);
    for (int n = 0; n < 256; ++n) {
      const int chunk = n / 64;
      const int i = n % 32;
      const bool upper = n % 64 >= 32;
      low[32 * chunk + i] |= static_cast<uint8_t>((codes[n] & 0x0f) << (upper ? 4 : 0));
      if (five_bit) high[i] |= static_cast<uint8_t>((codes[n] >> 4) << (n / 32));
    }
    return bytes;
  }

  // value = d · scale · q − dmin · min, in double (exact for these numbers), rounded once to float.
  float expected(int n) const {
    const int s = n / 32;
    return static_cast<float>(d.value * scales[s] * codes[n] - dmin.value * mins[s]);
  }
};

// One Q6_K super-block: 128 bytes of low 4 bits (byte 64h + i: code 128h + i low, code 128h + 64 + i high; byte
// 64h + 32 + i: codes 128h + 32 + i and 128h + 96 + i), 64 bytes of high 2 bits (byte 32h + i, bits 2k and 2k + 1:
// code 128h + 32k + i), 16 int8 scales (one per 16 codes), then d.
struct SignedBlock {
  Half d;
  std::array<int, 16> scales;  // −128 … 127
  std::array<int, 256> codes;  // 0 … 63

  std::vector<uint8_t> encode() const {
    std::vector<uint8_t> bytes(210, 0);
    for (int n = 0; n < 256; ++n) {
      const int h = n / 128;
      const int k = (n % 128) / 32;
      const int i = n % 32;
      bytes[64 * h + 32 * (k % 2) + i] |= static_cast<uint8_t>((codes[n] & 0x0f) << (k >= 2 ? 4 : 0));
      bytes[128 + 32 * h + i] |= static_cast<uint8_t>((codes[n] >> 4) << (2 * k));
    }
    for (int g = 0; g < 16; ++g) bytes[192 + g] = static_cast<uint8_t>(static_cast<int8_t>(scales[g]));
    put_half(bytes, 208, d);
    return bytes;
  }

  float expected(int n) const { return static_cast<float>(d.value * scales[n / 16] * (codes[n] - 32)); }
};

inline std::array<int, 256> code_pattern(int multiplier, int offset, int range) {
  std::array<int, 256> codes{};
  for (int n = 0; n < 256; ++n) codes[n] = (n * multiplier + offset) % range;
  return codes;
}

// One Q4_1, Q5_0 or Q5_1 block: d, [m], [4 bytes whose bit j is code j's fifth bit, little-endian], then 16 bytes
// where byte j holds code j in its low nibble and code j + 16 in its high one.
struct LegacyBlock {
  GgufTensorType type;
  Half d;
  Half m;                     // unused by Q5_0
  std::array<int, 32> codes;  // 0 … 15 (Q4_1) or 0 … 31

  bool has_min() const { return type != GgufTensorType::kQ5_0; }
  bool five_bit() const { return type != GgufTensorType::kQ4_1; }

  std::vector<uint8_t> encode() const {
    std::vector<uint8_t> bytes;
    bytes.resize(2 + (has_min() ? 2 : 0) + (five_bit() ? 4 : 0) + 16, 0);
    put_half(bytes, 0, d);
    if (has_min()) put_half(bytes, 2, m);
    const std::size_t fifth = has_min() ? 4 : 2;
    const std::size_t nibbles = fifth + (five_bit() ? 4 : 0);
    for (int j = 0; j < 32; ++j) {
      bytes[nibbles + j % 16] |= static_cast<uint8_t>((codes[j] & 0x0f) << (j < 16 ? 0 : 4));
      if (five_bit()) bytes[fifth + j / 8] |= static_cast<uint8_t>((codes[j] >> 4) << (j % 8));
    }
    return bytes;
  }

  // Q5_0: d · (q − 16); Q4_1, Q5_1: d · q + m — in double (exact here), rounded once to float.
  float expected(int j) const {
    return static_cast<float>(has_min() ? d.value * codes[j] + m.value : d.value * (codes[j] - 16));
  }
};

// A normal fp16 number (or zero) from its bits: (1 + mantissa / 1024) · 2^(exponent − 15).
inline Half half_of(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f;
  const double significand = 1.0 + (bits & 0x3ff) / 1024.0;
  double value = exponent == 0 ? 0.0 : significand;
  for (int e = 15; e < exponent; ++e) value *= 2;
  for (int e = exponent; e < 15; ++e) value /= 2;
  return {bits, (bits & 0x8000) != 0 ? -value : value};
}

// Deterministic fields drawn from `seed` (SplitMix64), sized for weights of about ±0.2: d near 2^−12 with every
// mantissa bit in play, codes and scales over their whole ranges.
class BlockFields {
 public:
  explicit BlockFields(uint64_t seed) : state_(seed) {}

  int next(int range) { return static_cast<int>(bits() % static_cast<uint64_t>(range)); }
  Half small_half(int exponent) { return half_of(static_cast<uint16_t>((exponent << 10) | next(1024))); }

  ScaledBlock scaled(int code_range) {
    ScaledBlock block{small_half(3), small_half(5), {}, {}, {}};
    for (int& scale : block.scales) scale = next(64);
    for (int& min : block.mins) min = next(64);
    for (int& code : block.codes) code = next(code_range);
    return block;
  }
  LegacyBlock legacy(GgufTensorType type) {
    // m negative, about half the codes' span, as a quantizer centres the block.
    LegacyBlock block{type, small_half(6), half_of(static_cast<uint16_t>(0x8000 | small_half(9).bits)), {}};
    for (int& code : block.codes) code = next(type == GgufTensorType::kQ4_1 ? 16 : 32);
    return block;
  }
  SignedBlock signed_block() {
    SignedBlock block{small_half(2), {}, {}};
    for (int& scale : block.scales) scale = next(256) - 128;
    for (int& code : block.codes) code = next(64);
    return block;
  }

 private:
  uint64_t bits() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

}  // namespace minigen::testing
