#include "ops/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/ops_test_util.h"
#include "ops/simd_targets_test_util.h"

namespace minigen {
namespace {

using testing::bitwise_equal;
using testing::pseudo_random_vector;

TEST(Matmul, HandComputedTwoByTwo) {
  ThreadPool pool(1);
  const float x[4] = {1, 2, 3, 4};        // rows [1 2], [3 4]
  const float weight[4] = {1, 0, 1, -1};  // out 0 = x0, out 1 = x0 − x1
  const PackedMatrix packed(weight, 2, 2, WeightType::kF32);
  float out[4];
  matmul(out, x, packed, 2, pool);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -1.0f);
  EXPECT_EQ(out[2], 3.0f);
  EXPECT_EQ(out[3], -1.0f);
  matmul(out, x, packed, 2, pool, MatmulOutput::kAddTo);  // the residual form: out += x · Wᵀ
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[3], -2.0f);
}

// The sum is one fma chain: (1e8 · 1) + (1 · 1) − 1e8 is 0 in float (1e8 + 1 rounds back to 1e8), while a
// pairwise or reordered sum would give 1. Pins the order, not just the value.
TEST(Matmul, ReductionIsOneChainInIndexOrder) {
  ThreadPool pool(1);
  const float x[3] = {1e8f, 1.0f, -1e8f};
  const float weight[3] = {1.0f, 1.0f, 1.0f};
  float out = -1;
  matmul(&out, x, PackedMatrix(weight, 1, 3, WeightType::kF32), 1, pool);
  EXPECT_EQ(out, 0.0f);
  matmul_reference(&out, x, weight, 1, 3, 1);
  EXPECT_EQ(out, 0.0f);
}

struct MatmulShape {
  int rows, in, out;
};

class MatmulSimd : public testing::EverySimdTarget {};

// The SIMD kernel, in every target this CPU runs, against the scalar reference, bit for bit, over shapes
// that exercise every row tile (1–6 and beyond) and ragged panels. bf16: ops/matmul_bf16_test.cpp.
TEST_P(MatmulSimd, MatchesScalarReferenceBitForBit) {
  ThreadPool pool(2);
  for (const MatmulShape shape : {MatmulShape{1, 1, 1}, MatmulShape{1, 7, 15}, MatmulShape{2, 16, 16},
                                  MatmulShape{3, 33, 17}, MatmulShape{5, 259, 67}, MatmulShape{6, 64, 130},
                                  MatmulShape{7, 256, 64}, MatmulShape{13, 100, 200}, MatmulShape{50, 96, 48}}) {
    const auto x = pseudo_random_vector(static_cast<std::size_t>(shape.rows) * shape.in, 3);
    const auto weight = pseudo_random_vector(static_cast<std::size_t>(shape.out) * shape.in, 4);
    const PackedMatrix packed(weight.data(), shape.out, shape.in, WeightType::kF32);
    for (MatmulOutput mode : {MatmulOutput::kStore, MatmulOutput::kAddTo}) {
      auto simd = pseudo_random_vector(static_cast<std::size_t>(shape.rows) * shape.out, 5);
      auto reference = simd;
      matmul(simd.data(), x.data(), packed, shape.rows, pool, mode);
      matmul_reference(reference.data(), x.data(), weight.data(), shape.rows, shape.in, shape.out, mode);
      EXPECT_TRUE(bitwise_equal(simd.data(), reference.data(), simd.size()))
          << shape.rows << "×" << shape.in << "→" << shape.out;
    }
  }
}

// The design rule: a row's result does not depend on how many rows share the call, nor on the thread count — in
// every weight type. 400 panels, so the pool really splits them between threads.
TEST_P(MatmulSimd, RowResultIndependentOfBatchSizeAndThreads) {
  const int in = 259, out_features = 6400, rows = 9;
  const auto x = pseudo_random_vector(static_cast<std::size_t>(rows) * in, 3);
  const auto weight = pseudo_random_vector(static_cast<std::size_t>(out_features) * in, 4);
  for (WeightType type : {WeightType::kF32, WeightType::kBF16, WeightType::kQ8, WeightType::kQ4}) {
    const PackedMatrix packed(weight.data(), out_features, in, type);
    ThreadPool one(1), two(2), three(3);
    std::vector<float> batched(static_cast<std::size_t>(rows) * out_features);
    matmul(batched.data(), x.data(), packed, rows, one);
    for (ThreadPool* pool : {&one, &two, &three}) {
      for (int r = 0; r < rows; ++r) {
        std::vector<float> alone(out_features);
        matmul(alone.data(), x.data() + static_cast<std::size_t>(r) * in, packed, 1, *pool);
        EXPECT_TRUE(
            bitwise_equal(alone.data(), batched.data() + static_cast<std::size_t>(r) * out_features, out_features))
            << weight_type_name(type) << " row " << r << " threads " << pool->num_threads();
      }
      std::vector<float> threaded(batched.size());
      matmul(threaded.data(), x.data(), packed, rows, *pool);
      EXPECT_TRUE(bitwise_equal(threaded.data(), batched.data(), batched.size()));
    }
  }
}

TEST(PackedMatrix, StackingEqualsSeparateProducts) {
  ThreadPool pool(2);
  const int in = 40;
  const auto a = pseudo_random_vector(20 * in, 6);
  const auto b = pseudo_random_vector(9 * in, 7);
  const auto x = pseudo_random_vector(3 * in, 8);
  const PackedMatrix stacked = PackedMatrix::stack({a.data(), b.data()}, {20, 9}, in, WeightType::kF32);
  EXPECT_EQ(stacked.out_features(), 29);
  EXPECT_EQ(stacked.panels(), 2);
  EXPECT_EQ(stacked.bytes(), 2u * 16 * in * 4);  // padded to whole panels
  EXPECT_EQ(stacked.at(21, 5), b[1 * in + 5]);
  std::vector<float> together(3 * 29), first(3 * 20), second(3 * 9);
  matmul(together.data(), x.data(), stacked, 3, pool);
  matmul(first.data(), x.data(), PackedMatrix(a.data(), 20, in, WeightType::kF32), 3, pool);
  matmul(second.data(), x.data(), PackedMatrix(b.data(), 9, in, WeightType::kF32), 3, pool);
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(bitwise_equal(together.data() + r * 29, first.data() + r * 20, 20));
    EXPECT_TRUE(bitwise_equal(together.data() + r * 29 + 20, second.data() + r * 9, 9));
  }
}

TEST(WeightType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 1.0f / 256)), 1.0f);               // a tie: to even (down)
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);  // a tie: to even (up)
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 1.5f / 256)), 1.0f + 2.0f / 256);  // above the tie: up
  EXPECT_EQ(bf16_to_float(float_to_bf16(-2.5f)), -2.5f);                          // exact
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(parse_weight_type("bf16"), WeightType::kBF16);
  EXPECT_EQ(parse_weight_type("f32"), WeightType::kF32);
  EXPECT_THROW(parse_weight_type("int4"), std::exception);
  PackedMatrix packed(std::vector<float>(16 * 8, 0.5f).data(), 16, 8, WeightType::kBF16);
  EXPECT_EQ(packed.bytes(), 16u * 8 * 2);
  // An odd in_features is padded to whole pairs of inputs: 7 inputs take the room of 8.
  EXPECT_EQ(PackedMatrix(std::vector<float>(17 * 7, 0.5f).data(), 17, 7, WeightType::kBF16).bytes(), 2u * 16 * 8 * 2);
}

MINIGEN_FOR_EVERY_SIMD_TARGET(MatmulSimd);

}  // namespace
}  // namespace minigen
