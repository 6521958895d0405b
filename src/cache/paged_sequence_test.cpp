#include "cache/paged_sequence.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "cache/kv_cache.h"
#include "model/test_models.h"
#include "model/transformer.h"

namespace minigen {
namespace {

// The tiny family's KV shape: 4 layers, 2 kv heads × 32.
ModelConfig tiny_config() { return testing::test_config("tiny"); }

TEST(BlockPool, BlockBytesAndBudget) {
  // 2 × 4 layers × 16 positions × 2 kv heads × 32 × 4 bytes = 32,768 bytes per block.
  EXPECT_EQ(BlockPool::bytes_per_block(tiny_config().kv_layout()), 32768u);
  EXPECT_EQ(BlockPool::blocks_for_budget(tiny_config().kv_layout(), 256u << 20), 8192);
  EXPECT_EQ(BlockPool::blocks_for_budget(tiny_config().kv_layout(), 32767), 0);
  // bf16 and f16 halve a block; int8 quarters it and adds 2 × 4 layers × 16 positions × 2 kv heads × 4 bytes of
  // scales: 8,192 + 1,024 = 9,216 bytes.
  for (KvDType dtype : {KvDType::kBF16, KvDType::kF16}) {
    EXPECT_EQ(BlockPool::bytes_per_block(tiny_config().kv_layout(dtype)), 16384u);
    EXPECT_EQ(BlockPool(tiny_config().kv_layout(dtype), 1).block_bytes(), 16384u);
  }
  EXPECT_EQ(BlockPool::bytes_per_block(tiny_config().kv_layout(KvDType::kInt8)), 9216u);
  EXPECT_EQ(BlockPool(tiny_config().kv_layout(KvDType::kInt8), 1).block_bytes(), 9216u);
  EXPECT_EQ(BlockPool::blocks_for_budget(tiny_config().kv_layout(KvDType::kInt8), 256u << 20), 29127);
}

TEST(BlockPool, AllocatesUntilExhaustedAndTakesBlocksBack) {
  BlockPool pool(tiny_config().kv_layout(), 3);
  const int a = pool.allocate(), b = pool.allocate(), c = pool.allocate();
  EXPECT_EQ(a, 0);
  EXPECT_EQ(c, 2);
  EXPECT_EQ(pool.allocate(), -1);
  EXPECT_EQ(pool.available_blocks(), 0);
  pool.release(b);
  EXPECT_EQ(pool.available_blocks(), 1);
  EXPECT_EQ(pool.allocate(), b);
  for (int id : {a, b, c}) pool.release(id);
  EXPECT_EQ(pool.available_blocks(), 3);
  EXPECT_THROW(pool.release(a), std::exception);
}

TEST(PagedKvSequence, ReserveFailsCleanlyWhenThePoolIsFull) {
  BlockPool pool(tiny_config().kv_layout(), 2);
  PagedKvSequence sequence(pool);
  EXPECT_EQ(sequence.blocks_needed(17), 2);
  sequence.reserve_for(32);
  EXPECT_THROW(sequence.reserve_for(33), std::exception);
  sequence.release();
  EXPECT_EQ(pool.available_blocks(), 2);
}

std::vector<float> prefill(Transformer& transformer, KvSequence& kv, std::span<const int> tokens) {
  ForwardRow row{&kv, tokens, false};
  return transformer.forward(std::span(&row, 1));
}

// The prefix cache's promise: a prompt that borrows cached blocks gets the same logits, bit for bit, as a fresh
// prefill into a contiguous cache of the same KV dtype — and the pool's bookkeeping returns every block.
class PagedKvDType : public ::testing::TestWithParam<KvDType> {};

TEST_P(PagedKvDType, PrefixHitGivesTheBitsOfAFreshPrefill) {
  auto model = testing::random_test_model("tiny");
  ThreadPool threads(2);
  Transformer transformer(*model, threads);
  BlockPool pool(model->config.kv_layout(GetParam()), 16);
  const std::vector<int> first = testing::test_prompt(40, 1);
  std::vector<int> second(first.begin(), first.begin() + 35);  // shares 35 tokens: two full blocks
  for (int extra : {11, 12, 13}) second.push_back(extra);

  {
    PagedKvSequence a(pool);
    prefill(transformer, a, first);
    a.publish_full_blocks(first);
    EXPECT_EQ(pool.cached_blocks(), 2);  // positions 0–15 and 16–31; 32–39 is not full
  }
  EXPECT_EQ(pool.available_blocks(), 16);  // released, the two cached blocks are evictable

  PagedKvSequence b(pool);
  EXPECT_EQ(b.attach_prefix(second, static_cast<int>(second.size()) - 1), 32);
  EXPECT_EQ(pool.hits(), 2);
  const std::vector<float> borrowed = prefill(transformer, b, std::span(second).subspan(32));
  KvCache fresh(model->config.kv_layout(GetParam()), 64);
  const std::vector<float> expected = prefill(transformer, fresh, second);
  EXPECT_EQ(std::memcmp(borrowed.data(), expected.data(), expected.size() * sizeof(float)), 0);
  b.release();
  EXPECT_EQ(pool.referenced_blocks(), 0);
}

INSTANTIATE_TEST_SUITE_P(EveryKvDType, PagedKvDType,
                         ::testing::Values(KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8),
                         [](const ::testing::TestParamInfo<KvDType>& info) {
                           return std::string(kv_dtype_name(info.param));
                         });

// Least-recently-used eviction, and no stale match: once the first block of a prefix is evicted, its child
// (still indexed under the old prefix id) can no longer be reached.
TEST(PagedKvSequence, EvictsLeastRecentlyUsedAndNeverMatchesAStaleChild) {
  auto model = testing::random_test_model("tiny");
  ThreadPool threads(1);
  Transformer transformer(*model, threads);
  BlockPool pool(model->config.kv_layout(), 3);
  const std::vector<int> tokens = testing::test_prompt(33, 2);
  {
    PagedKvSequence a(pool);
    prefill(transformer, a, tokens);
    a.publish_full_blocks(tokens);
  }
  EXPECT_EQ(pool.cached_blocks(), 2);
  // Two fresh allocations: the free block first, then the least recently released cached block (block 0).
  const int x = pool.allocate();
  const int y = pool.allocate();
  EXPECT_EQ(pool.cached_blocks(), 1);
  pool.release(x);
  pool.release(y);
  PagedKvSequence b(pool);
  EXPECT_EQ(b.attach_prefix(tokens, 32), 0);  // block 0's entry is gone, so block 1 is unreachable
}

}  // namespace
}  // namespace minigen
