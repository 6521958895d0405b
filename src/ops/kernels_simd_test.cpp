// The SIMD kernels held to their scalar references, and the invariances the engine's bit-exactness rests on.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/ops_test_util.h"
#include "ops/rmsnorm.h"
#include "ops/rope.h"

namespace minigen {
namespace {

using testing::bitwise_equal;
using testing::pseudo_random_vector;

// |a − b| within `ulps` units in the last place of b.
bool within_ulps(float a, float b, int ulps) {
  return std::fabs(a - b) <= ulps * std::fabs(std::nextafter(b, INFINITY) - b);
}

TEST(RmsNormSimd, MatchesScalarReferenceBitForBit) {
  for (int n : {1, 2, 15, 16, 17, 32, 100, 256, 768, 1000}) {
    const auto x = pseudo_random_vector(n, 11);
    const auto weight = pseudo_random_vector(n, 12);
    std::vector<float> simd(n), reference(n);
    rmsnorm(simd.data(), x.data(), weight.data(), n, 1e-5f);
    rmsnorm_reference(reference.data(), x.data(), weight.data(), n, 1e-5f);
    EXPECT_TRUE(bitwise_equal(simd.data(), reference.data(), n)) << "n=" << n;
  }
}

TEST(SiluMulSimd, WithinOneUlpOfStdExpAndIndependentOfPosition) {
  const int n = 203;  // ragged: the masked tail goes through the same vector code
  auto gate = pseudo_random_vector(n, 13);
  for (float& g : gate) g *= 12.0f;
  gate[0] = -200.0f;  // exp(200) overflows: silu → −0
  gate[1] = 200.0f;
  const auto up = pseudo_random_vector(n, 14);
  std::vector<float> simd(n), reference(n);
  silu_mul(simd.data(), gate.data(), up.data(), n);
  silu_mul_reference(reference.data(), gate.data(), up.data(), n);
  for (int i = 0; i < n; ++i) EXPECT_TRUE(within_ulps(simd[i], reference[i], 3)) << i << ": " << simd[i];
  // Element i computed at offset 0 (alone) gives the same bits as inside the long call.
  for (int i = 0; i < n; ++i) {
    float alone;
    silu_mul(&alone, &gate[i], &up[i], 1);
    ASSERT_TRUE(bitwise_equal(&alone, &simd[i], 1)) << i;
  }
}

TEST(RopeSimd, MatchesScalarFormulaBitForBit) {
  for (int head_dim : {4, 32, 64, 96, 128}) {
    RopeTable rope(head_dim, 64, 10000.0, std::nullopt);
    RopeTable unit(head_dim, 64, 10000.0, std::nullopt);
    for (int position : {0, 1, 37, 63}) {
      auto head = pseudo_random_vector(head_dim, 15 + position);
      // cos/sin of this position read back by rotating unit vectors: e_i → (cos_i, sin_i) at i and i + half.
      const int half = head_dim / 2;
      std::vector<float> cos_row(half), sin_row(half);
      for (int i = 0; i < half; ++i) {
        std::vector<float> basis(head_dim, 0.0f);
        basis[i] = 1.0f;
        unit.apply(basis.data(), position);
        cos_row[i] = basis[i];
        sin_row[i] = basis[i + half];
      }
      std::vector<float> expected(head);
      for (int i = 0; i < half; ++i) {
        expected[i] = head[i] * cos_row[i] - head[i + half] * sin_row[i];
        expected[i + half] = head[i + half] * cos_row[i] + head[i] * sin_row[i];
      }
      rope.apply(head.data(), position);
      EXPECT_TRUE(bitwise_equal(head.data(), expected.data(), head_dim)) << head_dim << " @ " << position;
    }
  }
}

// The table itself, against the formula in double: rotating the unit vector e_i at position p gives
// (cos, sin)(p · theta^(−2i/d)) at i and i + d/2. The table works in float as MiniMind does (frequency, angle and
// cos/sin each rounded to float), so at position 63 the angle may be off by ~63 · 2^−24 rad: 1e-5 covers it.
TEST(RopeTable, RotatesByTheAnglesOfTheFormula) {
  for (int head_dim : {4, 32, 64}) {
    const RopeTable rope(head_dim, 64, 10000.0, std::nullopt);
    const int half = head_dim / 2;
    for (int position : {0, 1, 37, 63}) {
      for (int i = 0; i < half; ++i) {
        std::vector<float> basis(head_dim, 0.0f);
        basis[i] = 1.0f;
        rope.apply(basis.data(), position);
        const double angle = position * std::pow(10000.0, -2.0 * i / head_dim);
        EXPECT_NEAR(basis[i], std::cos(angle), 1e-5) << head_dim << " @ " << position << ", i = " << i;
        EXPECT_NEAR(basis[i + half], std::sin(angle), 1e-5) << head_dim << " @ " << position << ", i = " << i;
      }
    }
  }
}

// Keys for `positions` positions in blocks; slots past the end hold garbage (NaN) that must never be read.
struct CacheBlocks {
  CacheBlocks(const KvBlockLayout& layout, int positions, uint32_t seed) {
    const int count = (positions + 15) / 16;
    storage.assign(static_cast<std::size_t>(count) * layout.block_floats(), std::nanf(""));
    for (int p = 0; p < positions; ++p) {
      const auto key = pseudo_random_vector(layout.kv_width(), seed + 2 * p);
      const auto value = pseudo_random_vector(layout.kv_width(), seed + 2 * p + 1);
      layout.write(storage.data() + (p / 16) * layout.block_floats(), p % 16, key.data(), value.data());
    }
    for (int b = 0; b < count; ++b) pointers.push_back(storage.data() + b * layout.block_floats());
  }
  std::vector<float> storage;
  std::vector<const float*> pointers;
};

TEST(AttentionSimd, MatchesScalarReferenceAndIgnoresSlotsPastTheEnd) {
  for (const KvBlockLayout layout : {KvBlockLayout{2, 32}, KvBlockLayout{1, 8}, KvBlockLayout{2, 96}}) {
    const int group_size = 4;
    for (int num_keys : {1, 15, 16, 17, 183}) {
      const CacheBlocks cache(layout, num_keys, 21);
      const auto queries = pseudo_random_vector(group_size * layout.head_dim, 22);
      std::vector<float> simd(queries.size()), reference(queries.size());
      std::vector<float> scores(group_size * ((num_keys + 15) / 16 * 16));
      for (int kv_head = 0; kv_head < layout.kv_heads; ++kv_head) {
        attend({queries.data(), simd.data(), group_size, kv_head}, cache.pointers, num_keys, layout, scores.data());
        attend_reference({queries.data(), reference.data(), group_size, kv_head}, cache.pointers, num_keys, layout,
                         scores.data());
        for (std::size_t i = 0; i < simd.size(); ++i) {
          ASSERT_TRUE(std::isfinite(simd[i]));
          EXPECT_NEAR(simd[i], reference[i], 2e-6f * (1.0f + std::fabs(reference[i]))) << num_keys << " " << i;
        }
      }
    }
  }
}

// A query head's output is the same bits whether it is attended alone or with the other heads of its group,
// and whether later positions exist in the cache or not (prefill vs decode).
TEST(AttentionSimd, HeadResultIndependentOfGroupAndOfLaterPositions) {
  const KvBlockLayout layout{2, 32};
  const int group_size = 4;
  const CacheBlocks long_cache(layout, 70, 31);
  const auto queries = pseudo_random_vector(group_size * layout.head_dim, 32);
  std::vector<float> scores(group_size * 80);
  std::vector<float> together(queries.size());
  attend({queries.data(), together.data(), group_size, 1}, long_cache.pointers, 37, layout, scores.data());
  const CacheBlocks short_cache(layout, 37, 31);  // same first 37 positions, nothing after
  for (int h = 0; h < group_size; ++h) {
    std::vector<float> alone(layout.head_dim);
    attend({queries.data() + h * layout.head_dim, alone.data(), 1, 1}, short_cache.pointers, 37, layout, scores.data());
    EXPECT_TRUE(bitwise_equal(alone.data(), together.data() + h * layout.head_dim, layout.head_dim)) << h;
  }
}

}  // namespace
}  // namespace minigen
