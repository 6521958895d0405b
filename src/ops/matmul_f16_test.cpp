#include "ops/matmul_f16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/error.h"
#include "ops/float_formats.h"
#include "ops/matmul.h"
#include "ops/ops_test_util.h"
#include "ops/simd_targets_test_util.h"

namespace minigen {
namespace {

using testing::bitwise_equal;
using testing::pseudo_random_vector;

// Values an fp16 checkpoint holds: each already an fp16, some of them subnormal.
std::vector<float> fp16_values(int count, uint64_t seed) {
  std::vector<float> values = pseudo_random_vector(count, seed);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i % 97 == 5) values[i] *= 1e-5f;  // an fp16 subnormal after rounding
    values[i] = f16_to_float(float_to_f16(values[i]));
  }
  return values;
}

TEST(MatmulF16, PacksHalfTheBytesAndReadsBackTheRoundedWeights) {
  EXPECT_EQ(parse_weight_type("f16"), WeightType::kF16);
  EXPECT_EQ(parse_weight_type("float16"), WeightType::kF16);  // config.json's torch_dtype
  EXPECT_EQ(weight_type_name(WeightType::kF16), "f16");
  const std::vector<float> values = pseudo_random_vector(17 * 7, 3);
  const PackedMatrix f16(values.data(), 17, 7, WeightType::kF16);
  const PackedMatrix f32(values.data(), 17, 7, WeightType::kF32);
  EXPECT_EQ(f16.bytes(), 2u * 16 * 7 * 2);  // two panels of 16 × 7, the second padded
  EXPECT_EQ(f16.bytes() * 2, f32.bytes());
  std::vector<float> row(7);
  for (int o = 0; o < 17; ++o) {
    f16.row(o, row.data());
    for (int k = 0; k < 7; ++k) {
      const float rounded = f16_to_float(float_to_f16(values[o * 7 + k]));
      EXPECT_EQ(f16.at(o, k), rounded);
      EXPECT_EQ(row[k], rounded);
    }
  }
}

TEST(MatmulF16, AWeightBeyondFp16IsAnErrorNotAnInfinity) {
  for (const float bad : {70000.0f, -1e9f, std::numeric_limits<float>::quiet_NaN()}) {
    std::vector<float> values(16 * 4, 0.5f);
    values[21] = bad;
    try {
      PackedMatrix(values.data(), 16, 4, WeightType::kF16);
      ADD_FAILURE() << bad << " was packed";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("does not fit fp16"), std::string::npos) << error.what();
    }
  }
  const std::vector<float> largest(16, 65504.0f);
  EXPECT_EQ(PackedMatrix(largest.data(), 1, 16, WeightType::kF16).at(0, 15), 65504.0f);
}

// A source of fp16 bits (a checkpoint read with keep_fp16_matrices) packs as its widened values do, in every type.
TEST(MatmulF16, Fp16BitsPackLikeTheirValues) {
  const std::vector<float> values = fp16_values(40 * 70, 5);
  std::vector<uint16_t> bits;
  for (const float value : values) bits.push_back(float_to_f16(value));
  MatrixSource from_bits;
  from_bits.rows = 40;
  from_bits.f16 = bits.data();
  for (const WeightType type :
       {WeightType::kF32, WeightType::kF16, WeightType::kBF16, WeightType::kQ8, WeightType::kQ4}) {
    const PackedMatrix packed = PackedMatrix::stack({from_bits}, 70, type);
    const PackedMatrix expected(values.data(), 40, 70, type);
    for (int o = 0; o < 40; ++o) {
      for (int k = 0; k < 70; ++k) {
        ASSERT_EQ(packed.at(o, k), expected.at(o, k)) << weight_type_name(type) << " (" << o << ", " << k << ")";
      }
    }
  }
  bits[123] = 0x7c00;  // +inf in the file
  EXPECT_THROW(PackedMatrix::stack({from_bits}, 70, WeightType::kF16), Error);
}

class MatmulF16Simd : public testing::EverySimdTarget {};

// On fp16 values the f16 product is the f32 product, bit for bit: every row count on both sides of the widening
// threshold (in-tile and shared-scratch kernels), ragged panels, both output modes, one and two threads.
TEST_P(MatmulF16Simd, EqualsTheF32ProductOfTheSameValuesBitForBit) {
  struct Shape {
    int rows, in, out;
  };
  ThreadPool one(1), two(2);
  for (const Shape shape : {Shape{1, 64, 48}, Shape{3, 33, 17}, Shape{6, 768, 96}, Shape{7, 32, 200}, Shape{15, 96, 64},
                            Shape{16, 96, 64}, Shape{24, 768, 160}, Shape{40, 17, 65}, Shape{100, 64, 80}}) {
    const std::vector<float> weights = fp16_values(shape.out * shape.in, 7 + shape.rows);
    const std::vector<float> x = pseudo_random_vector(shape.rows * shape.in, 8 + shape.in);
    const PackedMatrix f16(weights.data(), shape.out, shape.in, WeightType::kF16);
    const PackedMatrix f32(weights.data(), shape.out, shape.in, WeightType::kF32);
    const std::size_t count = static_cast<std::size_t>(shape.rows) * shape.out;
    for (ThreadPool* pool : {&one, &two}) {
      for (const MatmulOutput mode : {MatmulOutput::kStore, MatmulOutput::kAddTo}) {
        std::vector<float> got(count, 0.25f), want(count, 0.25f), reference(count, 0.25f);
        matmul(got.data(), x.data(), f16, shape.rows, *pool, mode);
        matmul(want.data(), x.data(), f32, shape.rows, *pool, mode);
        matmul_reference(reference.data(), x.data(), weights.data(), shape.rows, shape.in, shape.out, mode);
        EXPECT_TRUE(bitwise_equal(got.data(), want.data(), count))
            << shape.rows << "×" << shape.in << "→" << shape.out << " threads " << pool->num_threads();
        EXPECT_TRUE(bitwise_equal(got.data(), reference.data(), count))
            << shape.rows << "×" << shape.in << "→" << shape.out << " threads " << pool->num_threads();
      }
    }
  }
}

MINIGEN_FOR_EVERY_SIMD_TARGET(MatmulF16Simd);

}  // namespace
}  // namespace minigen
