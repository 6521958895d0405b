#include "cache/kv_cache.h"

#include <gtest/gtest.h>

#include <vector>

namespace minigen {
namespace {

// The tiny model's cache shape: 4 layers, 2 kv heads, head_dim 32.
KvLayout tiny_shape() { return {.layers = 4, .kv_heads = 2, .head_dim = 32}; }

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
