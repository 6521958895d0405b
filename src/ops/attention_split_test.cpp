// Split-K scheduling: whichever way SplitAttention cuts a forward call's attention into work items, and on however
// many threads, every query's output is the bits of attend() on one thread.
#include "ops/attention_split.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ops/kv_dtype.h"
#include "ops/ops_test_util.h"

namespace minigen {
namespace {

using testing::bitwise_equal;
using testing::pseudo_random_vector;

constexpr int kKvHeads = 2;
constexpr int kGroupSize = 4;
constexpr int kHeadDim = 32;
constexpr int kQWidth = kKvHeads * kGroupSize * kHeadDim;

// A sequence's cache: `positions` positions of random K and V in contiguous blocks.
struct Sequence {
  Sequence(const KvBlockLayout& layout, int positions, uint32_t seed) {
    const int count = (positions + 15) / 16;
    storage.resize(static_cast<std::size_t>(count) * layout.block_bytes());
    for (int p = 0; p < positions; ++p) {
      const auto key = pseudo_random_vector(layout.kv_width(), seed + 2 * p);
      const auto value = pseudo_random_vector(layout.kv_width(), seed + 2 * p + 1);
      layout.write(storage.data() + (p / 16) * layout.block_bytes(), p % 16, key.data(), value.data());
    }
    for (int b = 0; b < count; ++b) blocks.push_back(storage.data() + b * layout.block_bytes());
  }
  std::vector<std::byte> storage;
  std::vector<const std::byte*> blocks;
};

// Runs SplitAttention over one query per key count (each on its own sequence) at `threads` threads and checks each
// against attend() per kv head. Returns whether the call split the chunks across threads.
bool expect_every_query_matches_attend(KvDType dtype, const std::vector<int>& key_counts, int threads) {
  const KvBlockLayout layout{kKvHeads, kHeadDim, dtype};
  std::vector<std::unique_ptr<Sequence>> sequences;
  std::vector<std::vector<float>> queries, outputs;
  std::vector<AttentionTask> tasks;
  for (std::size_t i = 0; i < key_counts.size(); ++i) {
    sequences.push_back(std::make_unique<Sequence>(layout, key_counts[i], 7 + 1000 * static_cast<uint32_t>(i)));
    queries.push_back(pseudo_random_vector(kQWidth, 3 + static_cast<uint32_t>(i)));
    outputs.emplace_back(kQWidth);
  }
  for (std::size_t i = 0; i < key_counts.size(); ++i) {
    tasks.push_back({queries[i].data(), outputs[i].data(), sequences[i]->blocks, key_counts[i], &layout});
  }
  ThreadPool pool(threads);
  SplitAttention attention;
  const bool split = SplitAttention::splits_chunks(tasks, kKvHeads, threads);
  for (int run = 0; run < 2; ++run) {  // twice: the scratch of a first call must not leak into a second
    attention.run(tasks, kKvHeads, kGroupSize, pool);
    for (std::size_t i = 0; i < key_counts.size(); ++i) {
      std::vector<float> expected(kQWidth), scores(kGroupSize * 1024);
      for (int kv_head = 0; kv_head < kKvHeads; ++kv_head) {
        const int offset = kv_head * kGroupSize * kHeadDim;
        attend({queries[i].data() + offset, expected.data() + offset, kGroupSize, kv_head}, sequences[i]->blocks,
               key_counts[i], layout, scores.data());
      }
      EXPECT_TRUE(bitwise_equal(outputs[i].data(), expected.data(), kQWidth))
          << kv_dtype_name(dtype) << ", " << key_counts[i] << " keys, " << threads << " threads, run " << run;
    }
  }
  return split;
}

TEST(SplitAttention, OneLongSequenceSplitsItsChunksAndKeepsTheBits) {
  for (const KvDType dtype : {KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8}) {
    EXPECT_FALSE(expect_every_query_matches_attend(dtype, {2100}, 1));  // one thread: nothing to split
    EXPECT_TRUE(expect_every_query_matches_attend(dtype, {2100}, 2));
    EXPECT_TRUE(expect_every_query_matches_attend(dtype, {2100}, 3));
  }
}

TEST(SplitAttention, ShortAndLongSequencesTogether) {
  // 4 tasks × 2 kv heads = 8 items: split on 3 threads (fewer than 4 items each), whole on 2.
  const std::vector<int> mixed = {100, 2100, 1024, 1025};
  EXPECT_TRUE(expect_every_query_matches_attend(KvDType::kF32, mixed, 3));
  EXPECT_FALSE(expect_every_query_matches_attend(KvDType::kF32, mixed, 2));
  EXPECT_TRUE(expect_every_query_matches_attend(KvDType::kInt8, mixed, 3));
}

TEST(SplitAttention, ManyQueriesRunWholeAndShortContextsNeverSplit) {
  std::vector<int> prefill;
  for (int p = 1; p <= 40; ++p) prefill.push_back(p * 53);  // up to 2120 keys: the last ones span 3 chunks
  EXPECT_FALSE(expect_every_query_matches_attend(KvDType::kF32, prefill, 3));
  EXPECT_FALSE(expect_every_query_matches_attend(KvDType::kBF16, {1024}, 2));  // one chunk: nothing to merge
}

}  // namespace
}  // namespace minigen
