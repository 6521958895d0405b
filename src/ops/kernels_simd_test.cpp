// The SIMD kernels held to their scalar references, and the invariances the engine's bit-exactness rests on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/kv_dtype.h"
#include "ops/ops_test_util.h"
#include "ops/rmsnorm.h"
#include "ops/rope.h"
#include "ops/simd_targets_test_util.h"
#include "ops/weight_type.h"

namespace minigen {
namespace {

using testing::bitwise_equal;
using testing::pseudo_random_vector;

class RmsNormSimd : public testing::EverySimdTarget {};
class SiluMulSimd : public testing::EverySimdTarget {};
class RopeSimd : public testing::EverySimdTarget {};
class AttentionSimd : public testing::EverySimdTarget {};

// |a − b| within `ulps` units in the last place of b.
bool within_ulps(float a, float b, int ulps) {
  return std::fabs(a - b) <= ulps * std::fabs(std::nextafter(b, INFINITY) - b);
}

TEST_P(RmsNormSimd, MatchesScalarReferenceBitForBit) {
  for (int n : {1, 2, 15, 16, 17, 32, 100, 256, 768, 1000}) {
    const auto x = pseudo_random_vector(n, 11);
    const auto weight = pseudo_random_vector(n, 12);
    std::vector<float> simd(n), reference(n);
    rmsnorm(simd.data(), x.data(), weight.data(), n, 1e-5f);
    rmsnorm_reference(reference.data(), x.data(), weight.data(), n, 1e-5f);
    EXPECT_TRUE(bitwise_equal(simd.data(), reference.data(), n)) << "n=" << n;
  }
}

TEST_P(SiluMulSimd, WithinOneUlpOfStdExpAndIndependentOfPosition) {
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

TEST_P(RopeSimd, MatchesScalarFormulaBitForBit) {
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

constexpr KvDType kAllKvDTypes[] = {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8};

// Keys for `positions` positions in blocks; slots past the end hold garbage (all bits set: NaN in every float
// type, −1 in int8, NaN scales) that must never be read. `transform` is applied to each row before it is written.
struct CacheBlocks {
  CacheBlocks(const KvBlockLayout& layout, int positions, uint32_t seed, float (*transform)(float) = nullptr) {
    const int count = (positions + 15) / 16;
    storage.assign(static_cast<std::size_t>(count) * layout.block_bytes(), std::byte{0xff});
    for (int p = 0; p < positions; ++p) {
      auto key = pseudo_random_vector(layout.kv_width(), seed + 2 * p);
      auto value = pseudo_random_vector(layout.kv_width(), seed + 2 * p + 1);
      if (transform != nullptr) {
        for (float& x : key) x = transform(x);
        for (float& x : value) x = transform(x);
      }
      layout.write(storage.data() + (p / 16) * layout.block_bytes(), p % 16, key.data(), value.data());
    }
    for (int b = 0; b < count; ++b) pointers.push_back(storage.data() + b * layout.block_bytes());
  }
  std::vector<std::byte> storage;
  std::vector<const std::byte*> pointers;
};

TEST_P(AttentionSimd, MatchesScalarReferenceAndIgnoresSlotsPastTheEnd) {
  for (const KvDType dtype : kAllKvDTypes) {
    for (const KvBlockLayout layout : {KvBlockLayout{2, 32, dtype}, KvBlockLayout{1, 8, dtype},
                                       KvBlockLayout{2, 96, dtype}, KvBlockLayout{1, 20, dtype}}) {
      const int group_size = 4;
      for (int num_keys : {1, 15, 16, 17, 183, 1025, 2100}) {  // 1025 and 2100: two and three chunks, merged
        const CacheBlocks cache(layout, num_keys, 21);
        const auto queries = pseudo_random_vector(group_size * layout.head_dim, 22);
        std::vector<float> simd(queries.size()), reference(queries.size());
        std::vector<float> scores(group_size * ((std::min(num_keys, kAttentionChunkKeys) + 15) / 16 * 16));
        for (int kv_head = 0; kv_head < layout.kv_heads; ++kv_head) {
          attend({queries.data(), simd.data(), group_size, kv_head}, cache.pointers, num_keys, layout, scores.data());
          attend_reference({queries.data(), reference.data(), group_size, kv_head}, cache.pointers, num_keys, layout,
                           scores.data());
          for (std::size_t i = 0; i < simd.size(); ++i) {
            ASSERT_TRUE(std::isfinite(simd[i]));
            EXPECT_NEAR(simd[i], reference[i], 2e-6f * (1.0f + std::fabs(reference[i])))
                << kv_dtype_name(dtype) << " " << num_keys << " " << i;
          }
        }
      }
    }
  }
}

// Widening a bf16 or f16 element to fp32 is exact, so attention over such a cache is, bit for bit, attention over
// an f32 cache that holds the rounded values: the narrow types change what is stored, never how it is summed.
TEST_P(AttentionSimd, NarrowFloatCacheGivesTheBitsOfAnF32CacheOfTheRoundedValues) {
  const std::pair<KvDType, float (*)(float)> cases[] = {
      {KvDType::kBF16, [](float x) { return bf16_to_float(float_to_bf16(x)); }},
      {KvDType::kF16, [](float x) { return f16_to_float(float_to_f16(x)); }}};
  for (const auto& [dtype, round] : cases) {
    const KvBlockLayout narrow{2, 40, dtype};
    const KvBlockLayout wide{2, 40, KvDType::kF32};
    const int group_size = 4;
    for (int num_keys : {1, 16, 33, 200}) {
      const CacheBlocks narrow_cache(narrow, num_keys, 41);
      const CacheBlocks wide_cache(wide, num_keys, 41, round);
      const auto queries = pseudo_random_vector(group_size * narrow.head_dim, 42);
      std::vector<float> from_narrow(queries.size()), from_wide(queries.size());
      std::vector<float> scores(group_size * ((num_keys + 15) / 16 * 16));
      for (int kv_head = 0; kv_head < narrow.kv_heads; ++kv_head) {
        attend({queries.data(), from_narrow.data(), group_size, kv_head}, narrow_cache.pointers, num_keys, narrow,
               scores.data());
        attend({queries.data(), from_wide.data(), group_size, kv_head}, wide_cache.pointers, num_keys, wide,
               scores.data());
        EXPECT_TRUE(bitwise_equal(from_narrow.data(), from_wide.data(), static_cast<int>(queries.size())))
            << kv_dtype_name(dtype) << " " << num_keys << " head " << kv_head;
      }
    }
  }
}

// int8 against the f32 cache it quantizes: the error of a 127-level grid per row, small next to the values.
TEST_P(AttentionSimd, Int8CacheStaysCloseToF32) {
  const KvBlockLayout int8{2, 32, KvDType::kInt8};
  const KvBlockLayout f32{2, 32, KvDType::kF32};
  const CacheBlocks quantized(int8, 100, 51);
  const CacheBlocks exact(f32, 100, 51);
  const auto queries = pseudo_random_vector(4 * 32, 52);
  std::vector<float> a(queries.size()), b(queries.size()), scores(4 * 112);
  attend({queries.data(), a.data(), 4, 1}, quantized.pointers, 100, int8, scores.data());
  attend({queries.data(), b.data(), 4, 1}, exact.pointers, 100, f32, scores.data());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 0.02f) << i;
}

// A query head's output is the same bits whether it is attended alone or with the other heads of its group,
// and whether later positions exist in the cache or not (prefill vs decode).
TEST_P(AttentionSimd, HeadResultIndependentOfGroupAndOfLaterPositions) {
  for (const KvDType dtype : kAllKvDTypes) {
    for (int num_keys : {37, 1100}) {  // 1100: two chunks, the second one cut short by the causal end
      const KvBlockLayout layout{2, 32, dtype};
      const int group_size = 4;
      const CacheBlocks long_cache(layout, num_keys + 33, 31);
      const auto queries = pseudo_random_vector(group_size * layout.head_dim, 32);
      std::vector<float> scores(group_size * 1024);
      std::vector<float> together(queries.size());
      attend({queries.data(), together.data(), group_size, 1}, long_cache.pointers, num_keys, layout, scores.data());
      const CacheBlocks short_cache(layout, num_keys, 31);  // same first positions, nothing after
      for (int h = 0; h < group_size; ++h) {
        std::vector<float> alone(layout.head_dim);
        attend({queries.data() + h * layout.head_dim, alone.data(), 1, 1}, short_cache.pointers, num_keys, layout,
               scores.data());
        EXPECT_TRUE(bitwise_equal(alone.data(), together.data() + h * layout.head_dim, layout.head_dim))
            << kv_dtype_name(dtype) << " " << num_keys << " keys, head " << h;
      }
    }
  }
}

MINIGEN_FOR_EVERY_SIMD_TARGET(RmsNormSimd);
MINIGEN_FOR_EVERY_SIMD_TARGET(SiluMulSimd);
MINIGEN_FOR_EVERY_SIMD_TARGET(RopeSimd);
MINIGEN_FOR_EVERY_SIMD_TARGET(AttentionSimd);

}  // namespace
}  // namespace minigen
