#include "sampling/top_k_sampler.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "core/error.h"
#include "sampling/sampling_test_util.h"

namespace minigen {
namespace {

TEST(TopKSamplerTest, KeepsTheKLargest) {
  std::vector<float> logits = {0.5f, 3.0f, -1.0f, 2.0f, 1.0f};
  TopKSampler(2).apply(logits, {});
  // Sorted: 3 (id 1), 2 (id 3), 1, 0.5, −1 → the 2nd largest is 2; everything below 2 goes.
  EXPECT_EQ(logits, (std::vector<float>{kMinusInfinity, 3.0f, kMinusInfinity, 2.0f, kMinusInfinity}));
}

TEST(TopKSamplerTest, TiesAtTheKthValueAllSurvive) {
  std::vector<float> logits = {1.0f, 2.0f, 2.0f, 2.0f, 0.0f};
  TopKSampler(2).apply(logits, {});
  // Sorted: 2, 2, 2, 1, 0 → the 2nd largest is 2; the three 2s are not strictly below it, so three tokens remain.
  EXPECT_EQ(logits, (std::vector<float>{kMinusInfinity, 2.0f, 2.0f, 2.0f, kMinusInfinity}));
}

TEST(TopKSamplerTest, DuplicatesCountTowardsK) {
  std::vector<float> logits = {5.0f, 5.0f, 4.0f};
  TopKSampler(2).apply(logits, {});
  // Sorted: 5, 5, 4 → the 2nd largest is 5 (the duplicate), so 4 goes.
  EXPECT_EQ(logits, (std::vector<float>{5.0f, 5.0f, kMinusInfinity}));
}

TEST(TopKSamplerTest, ZeroAndLargeKAreNoOps) {
  const std::vector<float> original = {0.1f, -0.2f, 0.3f};
  std::vector<float> logits = original;
  TopKSampler(0).apply(logits, {});
  EXPECT_EQ(logits, original);
  TopKSampler(3).apply(logits, {});
  EXPECT_EQ(logits, original);
  TopKSampler(1000).apply(logits, {});
  EXPECT_EQ(logits, original);
}

TEST(TopKSamplerTest, AlreadyRemovedTokensStayRemoved) {
  // Only one finite logit: the 2nd largest is −inf, nothing is strictly below it, and the row is unchanged.
  std::vector<float> logits = {kMinusInfinity, 1.0f, kMinusInfinity, kMinusInfinity};
  TopKSampler(2).apply(logits, {});
  EXPECT_EQ(logits, (std::vector<float>{kMinusInfinity, 1.0f, kMinusInfinity, kMinusInfinity}));
  TopKSampler(1).apply(logits, {});
  EXPECT_EQ(logits, (std::vector<float>{kMinusInfinity, 1.0f, kMinusInfinity, kMinusInfinity}));
}

TEST(TopKSamplerTest, RejectsNegativeK) {
  EXPECT_THROW(TopKSampler(-1), Error);
  EXPECT_EQ(TopKSampler(50).name(), "top-k(50)");
}

TEST(TopKSamplerTest, AscendingRowKeepsTheLastK) {
  // Every logit beats the running bar, the worst case for the k-th-largest buffer: ids 990…999 stay.
  std::vector<float> logits(1000);
  for (size_t id = 0; id < logits.size(); ++id) logits[id] = static_cast<float>(id) * 0.01f;
  const std::vector<float> original = logits;
  TopKSampler(10).apply(logits, {});
  for (size_t id = 0; id < logits.size(); ++id) {
    EXPECT_EQ(logits[id], id >= 990 ? original[id] : kMinusInfinity) << id;
  }
}

}  // namespace
}  // namespace minigen
