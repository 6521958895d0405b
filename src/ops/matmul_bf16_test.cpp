#include "ops/matmul_bf16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/float_formats.h"
#include "ops/matmul.h"
#include "ops/matmul_bf16_avx512.h"
#include "ops/ops_test_util.h"
#include "ops/simd_targets_test_util.h"

namespace minigen {
namespace {

using testing::bitwise_equal;
using testing::pseudo_random_vector;

// The AVX-512 target runs the AVX512_BF16 kernel where the CPU has it; both settings are held to the reference.
std::vector<bool> bf16_kernel_settings() {
  if (!avx512_bf16_kernel_enabled()) return {false};
  return {true, false};
}

class Bf16KernelSetting {
 public:
  explicit Bf16KernelSetting(bool enabled) : previous_(set_avx512_bf16_kernel_for_test(enabled)) {}
  ~Bf16KernelSetting() { set_avx512_bf16_kernel_for_test(previous_); }
  Bf16KernelSetting(const Bf16KernelSetting&) = delete;
  Bf16KernelSetting& operator=(const Bf16KernelSetting&) = delete;

 private:
  bool previous_;
};

// The pair order, pinned by a sum whose value depends on it: x = (2²⁴, 0, 1, −2²⁴), all weights 1. Odd input
// first: 0 + 0 + 2²⁴, then pair 2: 2²⁴ − 2²⁴ + 1 = 1. In index order (or even first) 2²⁴ + 1 rounds back to
// 2²⁴ and the sum is 0.
TEST(MatmulBf16, OddInputOfEachPairFirst) {
  ThreadPool pool(1);
  const float x[4] = {16777216.0f, 0.0f, 1.0f, -16777216.0f};
  const std::vector<float> ones(4, 1.0f);
  const PackedMatrix packed(ones.data(), 1, 4, WeightType::kBF16);
  for (const bool kernel : bf16_kernel_settings()) {
    const Bf16KernelSetting setting(kernel);
    float out = -1;
    matmul(&out, x, packed, 1, pool);
    EXPECT_EQ(out, 1.0f) << "AVX512_BF16 kernel " << kernel;
  }
  float reference = -1;
  matmul_reference_bf16(&reference, x, packed, 1);
  EXPECT_EQ(reference, 1.0f);
  matmul_reference(&reference, x, ones.data(), 1, 4, 1);  // the f32 chain in index order
  EXPECT_EQ(reference, 0.0f);
}

// Activations are rounded to bf16: 1 + 2⁻⁸ is a tie and goes to the even 1, so 1 · (1 + 2⁻⁸) · 1 gives 1.
TEST(MatmulBf16, ActivationsAreRoundedToBf16) {
  ThreadPool pool(1);
  const float x[2] = {1.0f + 1.0f / 256, 3.0f};
  const float weight[2] = {1.0f, 0.0f};
  const PackedMatrix packed(weight, 1, 2, WeightType::kBF16);
  float out = -1;
  matmul(&out, x, packed, 1, pool);
  EXPECT_EQ(out, 1.0f);
}

struct Shape {
  int rows, in, out;
};

class MatmulBf16Simd : public testing::EverySimdTarget {};

// Every kernel this CPU runs against the scalar reference, bit for bit: every row tile (1–6 and beyond), 1–4
// panel groups, ragged last panels, odd in_features (a zero pad input), both output modes.
TEST_P(MatmulBf16Simd, MatchesScalarReferenceBitForBit) {
  ThreadPool pool(2);
  for (const bool kernel : bf16_kernel_settings()) {
    const Bf16KernelSetting setting(kernel);
    for (const Shape shape :
         {Shape{1, 1, 1}, Shape{1, 7, 15}, Shape{2, 16, 16}, Shape{3, 33, 17}, Shape{5, 259, 67}, Shape{6, 64, 130},
          Shape{7, 256, 64}, Shape{13, 100, 200}, Shape{50, 96, 48}, Shape{61, 35, 70}}) {
      const auto x = pseudo_random_vector(static_cast<std::size_t>(shape.rows) * shape.in, 3);
      const auto weight = pseudo_random_vector(static_cast<std::size_t>(shape.out) * shape.in, 4);
      const PackedMatrix packed(weight.data(), shape.out, shape.in, WeightType::kBF16);
      for (MatmulOutput mode : {MatmulOutput::kStore, MatmulOutput::kAddTo}) {
        auto simd = pseudo_random_vector(static_cast<std::size_t>(shape.rows) * shape.out, 5);
        auto reference = simd;
        matmul(simd.data(), x.data(), packed, shape.rows, pool, mode);
        matmul_reference_bf16(reference.data(), x.data(), packed, shape.rows, mode);
        EXPECT_TRUE(bitwise_equal(simd.data(), reference.data(), simd.size()))
            << shape.rows << "×" << shape.in << "→" << shape.out << " AVX512_BF16 kernel " << kernel;
      }
    }
  }
}

// Alone = in a batch = at any thread count, with the kernel on and off. 53 rows: on AVX2 a batch of 16 rows or more
// runs the fp32 tile over widened panels (two blocks of rows here, the second a ragged tile), one row the pair kernel.
TEST_P(MatmulBf16Simd, RowResultIndependentOfBatchSizeAndThreads) {
  const int in = 259, out_features = 1600, rows = 53;
  const auto x = pseudo_random_vector(static_cast<std::size_t>(rows) * in, 3);
  const auto weight = pseudo_random_vector(static_cast<std::size_t>(out_features) * in, 4);
  const PackedMatrix packed(weight.data(), out_features, in, WeightType::kBF16);
  for (const bool kernel : bf16_kernel_settings()) {
    const Bf16KernelSetting setting(kernel);
    ThreadPool one(1), three(3);
    std::vector<float> batched(static_cast<std::size_t>(rows) * out_features);
    matmul(batched.data(), x.data(), packed, rows, one);
    for (int r = 0; r < rows; ++r) {
      std::vector<float> alone(out_features);
      matmul(alone.data(), x.data() + static_cast<std::size_t>(r) * in, packed, 1, three);
      EXPECT_TRUE(
          bitwise_equal(alone.data(), batched.data() + static_cast<std::size_t>(r) * out_features, out_features))
          << "row " << r << " AVX512_BF16 kernel " << kernel;
    }
  }
}

// The kernels' vector roundings (vcvtne2ps2bf16 on AVX512_BF16, integer arithmetic elsewhere) agree with the scalar
// one on every kind of value: ties both ways, the largest finite values (which round to infinity), infinities, NaN
// (quieted), zeros of both signs, subnormals (flushed to a signed zero), the smallest normal, and random values —
// over a row length that is not a multiple of any vector width.
std::vector<float> rounding_cases() {
  std::vector<float> values = {1.0f + 1.0f / 256,
                               1.0f + 3.0f / 256,
                               -1.0f - 1.0f / 256,
                               std::numeric_limits<float>::max(),
                               -std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(),
                               std::bit_cast<float>(0x7f800001u),  // a signalling NaN
                               0.0f,
                               -0.0f,
                               std::numeric_limits<float>::denorm_min(),
                               -std::numeric_limits<float>::denorm_min(),
                               std::bit_cast<float>(0x007fffffu),  // the largest subnormal
                               std::numeric_limits<float>::min(),
                               -std::numeric_limits<float>::min()};
  const auto random = pseudo_random_vector(77, 9);
  values.insert(values.end(), random.begin(), random.end());
  return values;  // 93: odd
}

TEST(MatmulBf16, ScalarRoundingFlushesSubnormals) {
  EXPECT_EQ(float_to_bf16_flush_subnormal(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(float_to_bf16_flush_subnormal(-std::bit_cast<float>(0x007fffffu)), 0x8000);
  EXPECT_EQ(float_to_bf16_flush_subnormal(std::numeric_limits<float>::min()), 0x0080);
  EXPECT_EQ(float_to_bf16_flush_subnormal(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to +inf
  const auto values = rounding_cases();
  const int in_features = static_cast<int>(values.size());
  Bf16Rows packed;
  prepare_bf16_rows(packed, 1, in_features, Bf16Rows::Form::kPacked);
  round_rows_to_bf16(packed, values.data(), in_features, 0, 1);
  for (int k = 0; k < in_features; ++k) {
    const uint32_t word = packed.row(0)[k / 2];
    EXPECT_EQ(k % 2 == 0 ? word & 0xffff : word >> 16, float_to_bf16_flush_subnormal(values[k])) << k;
  }
  EXPECT_EQ(packed.row(0)[in_features / 2] >> 16, 0u);  // the pad input
}

TEST_P(MatmulBf16Simd, VectorRoundingEqualsScalarRounding) {
  const auto values = rounding_cases();
  const int in_features = static_cast<int>(values.size());
  for (const bool kernel : bf16_kernel_settings()) {
    const Bf16KernelSetting setting(kernel);
    Bf16Rows simd, scalar;
    round_rows_for_bf16_kernel(simd, values.data(), 1, in_features);
    prepare_bf16_rows(scalar, 1, in_features, simd.form);
    round_rows_to_bf16(scalar, values.data(), in_features, 0, 1);
    for (std::size_t w = 0; w < scalar.row_words(); ++w) {
      EXPECT_EQ(simd.row(0)[w], scalar.row(0)[w]) << "word " << w << " AVX512_BF16 kernel " << kernel;
    }
  }
}

MINIGEN_FOR_EVERY_SIMD_TARGET(MatmulBf16Simd);

// The weights the kernels multiply are what at() and row() report: rounded, subnormals flushed, the pair layout
// read back in the right order.
TEST(MatmulBf16, PackedWeightsReadBackInPairLayout) {
  const int out = 19, in = 9;
  auto weight = pseudo_random_vector(static_cast<std::size_t>(out) * in, 12);
  weight[5] = std::numeric_limits<float>::denorm_min();
  const PackedMatrix packed(weight.data(), out, in, WeightType::kBF16);
  std::vector<float> row(in);
  for (int o = 0; o < out; ++o) {
    packed.row(o, row.data());
    for (int k = 0; k < in; ++k) {
      const float expected = bf16_to_float(float_to_bf16_flush_subnormal(weight[static_cast<std::size_t>(o) * in + k]));
      EXPECT_EQ(packed.at(o, k), expected) << o << ", " << k;
      EXPECT_EQ(row[k], expected) << o << ", " << k;
    }
  }
  EXPECT_EQ(packed.at(0, 5), 0.0f);
}

}  // namespace
}  // namespace minigen
