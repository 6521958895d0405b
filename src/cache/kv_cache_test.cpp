#include "cache/kv_cache.h"

#include <gtest/gtest.h>

namespace minigen {
namespace {

ModelConfig tiny_shape() {
  ModelConfig config;
  config.num_layers = 4;
  config.num_kv_heads = 2;
  config.head_dim = 32;
  return config;
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

TEST(KvCache, GrowsWhenAForwardNeedsMoreRoomAndKeepsContents) {
  KvCache cache(tiny_shape(), 2);
  cache.reserve_for(2);
  cache.keys(3)[0] = 7.0f;
  cache.values(3)[2 * 64 - 1] = 9.0f;
  cache.advance(2);
  cache.reserve_for(3);
  EXPECT_GE(cache.capacity(), 5);
  EXPECT_EQ(cache.keys(3)[0], 7.0f);
  EXPECT_EQ(cache.values(3)[2 * 64 - 1], 9.0f);
  cache.clear();
  EXPECT_EQ(cache.bytes_used(), 0u);
}

TEST(KvCache, AdvancingPastCapacityIsAnError) {
  KvCache cache(tiny_shape(), 4);
  EXPECT_THROW(cache.advance(5), std::exception);
}

}  // namespace
}  // namespace minigen
