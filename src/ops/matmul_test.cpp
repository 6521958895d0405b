#include "ops/matmul.h"

#include <gtest/gtest.h>

#include "ops/dot.h"
#include "ops/ops_test_util.h"

namespace minigen {
namespace {

using testing::bitwise_equal;
using testing::pseudo_random_vector;

TEST(Dot, MatchesDoublePrecisionSum) {
  for (int n : {1, 7, 16, 17, 100, 256, 1000}) {
    const auto a = pseudo_random_vector(n, 1);
    const auto b = pseudo_random_vector(n, 2);
    double expected = 0;
    for (int i = 0; i < n; ++i) expected += static_cast<double>(a[i]) * b[i];
    EXPECT_NEAR(dot(a.data(), b.data(), n), expected, 1e-5 * n) << "n=" << n;
  }
}

TEST(Dot, HandComputedValue) {
  const float a[3] = {1.0f, 2.0f, 3.0f};
  const float b[3] = {4.0f, -5.0f, 6.0f};
  EXPECT_EQ(dot(a, b, 3), 12.0f);  // 4 − 10 + 18
}

TEST(Matmul, HandComputedTwoByTwo) {
  ThreadPool pool(1);
  const float x[4] = {1, 2, 3, 4};         // rows [1 2], [3 4]
  const float weight[4] = {1, 0, 1, -1};   // out 0 = x0, out 1 = x0 − x1
  float out[4];
  matmul(out, x, weight, 2, 2, 2, pool);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -1.0f);
  EXPECT_EQ(out[2], 3.0f);
  EXPECT_EQ(out[3], -1.0f);
}

// The design rule: a row's result does not depend on how many rows share the call, nor on the thread count.
TEST(Matmul, RowResultIndependentOfBatchSizeAndThreads) {
  const int in = 259, out_features = 67, rows = 9;
  const auto x = pseudo_random_vector(static_cast<std::size_t>(rows) * in, 3);
  const auto weight = pseudo_random_vector(static_cast<std::size_t>(out_features) * in, 4);
  ThreadPool one(1), two(2), three(3);
  std::vector<float> batched(static_cast<std::size_t>(rows) * out_features);
  matmul(batched.data(), x.data(), weight.data(), rows, in, out_features, one);
  for (ThreadPool* pool : {&one, &two, &three}) {
    for (int r = 0; r < rows; ++r) {
      std::vector<float> alone(out_features);
      matmul(alone.data(), x.data() + static_cast<std::size_t>(r) * in, weight.data(), 1, in, out_features, *pool);
      EXPECT_TRUE(bitwise_equal(alone.data(), batched.data() + static_cast<std::size_t>(r) * out_features,
                                out_features))
          << "row " << r << " threads " << pool->num_threads();
    }
    std::vector<float> threaded(batched.size());
    matmul(threaded.data(), x.data(), weight.data(), rows, in, out_features, *pool);
    EXPECT_TRUE(bitwise_equal(threaded.data(), batched.data(), batched.size()));
  }
}

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
  ThreadPool pool(3);
  for (int count : {1, 2, 5, 100}) {
    std::vector<int> hits(count, 0);
    pool.parallel_for(count, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) ++hits[i];
    });
    for (int i = 0; i < count; ++i) EXPECT_EQ(hits[i], 1) << "count " << count << " index " << i;
  }
}

}  // namespace
}  // namespace minigen
