#include "cache/kv_cache.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace minigen {
namespace {

// The tiny model's cache shape: 4 layers, 2 kv heads, head_dim 32.
KvLayout tiny_shape(KvDType dtype = KvDType::kF32) {
  return {.layers = 4, .kv_heads = 2, .head_dim = 32, .dtype = dtype};
}

// The module's figure: 2 × 4 layers × 100 tokens × 2 kv heads × 32 × 4 bytes = 204,800 bytes.
TEST(KvCache, HundredTokensOfTheTinyConfigUse204800Bytes) {
  KvCache cache(tiny_shape(), 128);
  EXPECT_EQ(cache.bytes_used(), 0u);
  EXPECT_EQ(cache.bytes_allocated(), 2u * 4 * 128 * 2 * 32 * 4);
  cache.reserve_for(100);
  cache.advance(100);
  EXPECT_EQ(cache.length(), 100);
  EXPECT_EQ(cache.bytes_used(), 204800u);
}

// The same 100 tokens in the narrower types: bf16 and f16 halve the bytes; int8 quarters them and adds one fp32
// scale per (layer, position, kv head) for K and for V: 51,200 + 2 · 4 · 100 · 2 · 4 = 57,600 bytes.
TEST(KvCache, HundredTokensInEachKvDType) {
  const std::pair<KvDType, std::size_t> cases[] = {
      {KvDType::kF32, 204800}, {KvDType::kBF16, 102400}, {KvDType::kF16, 102400}, {KvDType::kInt8, 57600}};
  for (const auto& [dtype, bytes] : cases) {
    KvCache cache(tiny_shape(dtype), 100);  // capacity 112: seven blocks
    cache.advance(100);
    EXPECT_EQ(cache.bytes_used(), bytes) << kv_dtype_name(dtype);
    EXPECT_EQ(cache.bytes_allocated(), bytes / 100 * 112) << kv_dtype_name(dtype);
  }
}

// Growing copies blocks as bytes: every type's elements (and int8's scales) stay where they were.
TEST(KvCache, GrowingKeepsTheStoredElementsOfEveryDType) {
  std::vector<float> key(64), value(64);
  for (int i = 0; i < 64; ++i) {
    key[i] = static_cast<float>(i % 32) - 8.0f;  // small integers: exact in every type (int8: absmax 23 → q · 23/127)
    value[i] = 0.5f * static_cast<float>(i % 32);
  }
  for (KvDType dtype : {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8}) {
    KvCache cache(tiny_shape(dtype), 2);
    cache.write(2, 1, key.data(), value.data());
    std::vector<float> before_keys, before_values;
    for (int i = 0; i < 64; ++i) {
      before_keys.push_back(cache.key_at(2, 1, i));
      before_values.push_back(cache.value_at(2, 1, i));
    }
    cache.advance(2);
    cache.reserve_for(100);
    for (int i = 0; i < 64; ++i) {
      EXPECT_EQ(cache.key_at(2, 1, i), before_keys[i]) << kv_dtype_name(dtype) << " " << i;
      EXPECT_EQ(cache.value_at(2, 1, i), before_values[i]) << kv_dtype_name(dtype) << " " << i;
      if (dtype != KvDType::kInt8) {
        EXPECT_EQ(before_keys[i], key[i]) << kv_dtype_name(dtype) << " " << i;
      }
      EXPECT_NEAR(before_keys[i], key[i], 23.0f / 254.0f * 1.0001f) << kv_dtype_name(dtype) << " " << i;
    }
  }
}

TEST(KvCache, TruncateForgetsTheLaterPositionsOnly) {
  KvCache cache(tiny_shape(KvDType::kBF16), 40);
  cache.advance(40);
  cache.truncate(33);
  EXPECT_EQ(cache.length(), 33);
  EXPECT_EQ(cache.bytes_used(), 33u * 1024);
  EXPECT_THROW(cache.truncate(34), std::exception);
  EXPECT_THROW(cache.truncate(-1), std::exception);
}

TEST(KvCache, GrowsWhenAForwardNeedsMoreRoomAndKeepsContents) {
  KvCache cache(tiny_shape(), 2);
  cache.reserve_for(2);
  std::vector<float> key(64), value(64);
  for (int i = 0; i < 64; ++i) {
    key[i] = static_cast<float>(i);
    value[i] = static_cast<float>(100 + i);
  }
  cache.write(3, 1, key.data(), value.data());
  cache.advance(2);
  cache.reserve_for(40);  // 42 positions: three blocks of 16
  EXPECT_EQ(cache.capacity(), 48);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(cache.key_at(3, 1, i), static_cast<float>(i));
    EXPECT_EQ(cache.value_at(3, 1, i), static_cast<float>(100 + i));
  }
  cache.clear();
  EXPECT_EQ(cache.bytes_used(), 0u);
}

TEST(KvCache, AdvancingPastCapacityIsAnError) {
  KvCache cache(tiny_shape(), 4);  // rounded up to one block of 16
  EXPECT_EQ(cache.capacity(), 16);
  EXPECT_THROW(cache.advance(17), std::exception);
}

// A cache that will need up to 100 positions doubles from 16 to 32 to 64, then stops at 112 (100 rounded up to whole
// blocks) instead of 128; only a forward call that needs more than that goes past it.
TEST(KvCache, DoublingStopsAtTheMostTheCallerWillNeed) {
  KvCache cache(tiny_shape(), 16, 100);
  EXPECT_EQ(cache.capacity(), 16);
  for (const int expected_capacity : {32, 64, 112}) {
    cache.advance(cache.capacity() - cache.length());  // full
    cache.reserve_for(1);
    EXPECT_EQ(cache.capacity(), expected_capacity);
  }
  cache.advance(cache.capacity() - cache.length());
  cache.reserve_for(20);  // 132 positions: beyond the stated maximum, so exactly what is needed
  EXPECT_EQ(cache.capacity(), 144);
}

TEST(KvCache, RefusesMorePositionsThanAnIntCanCount) {
  KvCache cache(tiny_shape(), 0);
  EXPECT_THROW(cache.reserve_for(-1), std::exception);
  EXPECT_THROW(cache.reserve_for(2147483640), std::exception);  // more than INT_MAX rounded down to whole blocks
}

}  // namespace
}  // namespace minigen
