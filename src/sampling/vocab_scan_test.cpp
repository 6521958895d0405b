// The vectorised vocabulary passes against their scalar forms, on every SIMD target this CPU runs, over rows whose
// length is not a multiple of any vector width and whose values tie, repeat and include ±0 and −inf.
#include "sampling/vocab_scan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ops/simd_targets_test_util.h"
#include "sampling/sampling_test_util.h"

namespace minigen {
namespace {

class VocabScan : public testing::EverySimdTarget {};

// Logits drawn from N(0, 3), rounded to 1/8 so that ties are common, with some −inf (already removed) and zeros.
std::vector<float> row_of(std::size_t size, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> row(size);
  for (std::size_t i = 0; i < size; ++i) {
    row[i] = std::round(normal(generator) * 8.0f) / 8.0f;
    if (i % 7 == 3) row[i] = kMinusInfinity;
    if (i % 11 == 5) row[i] = (i % 2 == 0) ? 0.0f : -0.0f;
  }
  return row;
}

const std::vector<std::size_t> kSizes = {1, 2, 15, 16, 17, 33, 100, 6400, 6401};

TEST_P(VocabScan, KthLargestEqualsNthElement) {
  for (const std::size_t size : kSizes) {
    for (unsigned seed = 0; seed < 3; ++seed) {
      const std::vector<float> row = row_of(size, seed);
      for (const std::size_t k : {std::size_t{1}, std::size_t{2}, std::size_t{10}, std::size_t{50}, size - 1}) {
        if (k == 0 || k >= size) continue;
        EXPECT_EQ(kth_largest(row, k), vocab_scan_reference::kth_largest(row, k)) << size << " k " << k;
      }
    }
  }
  // An ascending row raises the bar at every value: the buffer's worst case.
  std::vector<float> ascending(1000);
  for (std::size_t i = 0; i < ascending.size(); ++i) ascending[i] = static_cast<float>(i);
  EXPECT_EQ(kth_largest(ascending, 50), 950.0f);
  // Fewer than k candidates: the k-th largest is −inf.
  std::vector<float> few(40, kMinusInfinity);
  few[3] = 1.0f;
  few[30] = 2.0f;
  EXPECT_EQ(kth_largest(few, 5), kMinusInfinity);
}

TEST_P(VocabScan, FirstMaxIndexEqualsMaxElement) {
  for (const std::size_t size : kSizes) {
    for (unsigned seed = 0; seed < 4; ++seed) {
      const std::vector<float> row = row_of(size, seed);
      EXPECT_EQ(first_max_index(row), vocab_scan_reference::first_max_index(row)) << size;
    }
  }
  std::vector<float> ties(37, 1.0f);  // every value equal: the first
  EXPECT_EQ(first_max_index(ties), 0);
  std::vector<float> late(37, kMinusInfinity);
  late[20] = -0.0f;
  late[33] = 0.0f;  // ±0 are equal: the first of them
  EXPECT_EQ(first_max_index(late), 20);
  std::vector<float> removed(19, kMinusInfinity);  // nothing left: index 0, as std::max_element
  EXPECT_EQ(first_max_index(removed), 0);
}

TEST_P(VocabScan, RemoveBelowCountAndGather) {
  for (const std::size_t size : kSizes) {
    std::vector<float> row = row_of(size, 7);
    std::vector<float> expected = row;
    for (float& value : expected) value = value < 0.5f ? kMinusInfinity : value;
    remove_below(row, 0.5f);
    EXPECT_EQ(row, expected) << size;

    int candidates = 0;
    std::vector<float> kept;
    for (const float value : expected) {
      if (value != kMinusInfinity) {
        ++candidates;
        kept.push_back(value);
      }
    }
    EXPECT_EQ(count_candidates(expected), candidates) << size;
    std::vector<float> gathered = {42.0f};  // replaced, not appended to
    gather_candidates(expected, gathered);
    EXPECT_EQ(gathered, kept) << size;
  }
  std::vector<float> with_nan(21, kMinusInfinity);  // a NaN is not −inf: counted and gathered, as in scalar code
  with_nan[17] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(count_candidates(with_nan), 1);
  std::vector<float> gathered;
  gather_candidates(with_nan, gathered);
  ASSERT_EQ(gathered.size(), 1u);
  EXPECT_TRUE(std::isnan(gathered[0]));
}

TEST_P(VocabScan, DivideAllIsOneDivisionPerValue) {
  for (const std::size_t size : kSizes) {
    std::vector<float> row = row_of(size, 3);
    std::vector<float> expected = row;
    for (float& value : expected) value = value / 0.85f;
    divide_all(row, 0.85f);
    for (std::size_t i = 0; i < size; ++i) {
      EXPECT_EQ(std::signbit(row[i]), std::signbit(expected[i])) << i;
      EXPECT_EQ(row[i], expected[i]) << i;
    }
  }
}

TEST_P(VocabScan, FindsNaNAnywhere) {
  for (const std::size_t size : kSizes) {
    std::vector<float> row = row_of(size, 1);
    EXPECT_FALSE(any_nan(row)) << size;
    for (const std::size_t at : {std::size_t{0}, size / 2, size - 1}) {
      std::vector<float> with_nan = row;
      with_nan[at] = std::numeric_limits<float>::quiet_NaN();
      EXPECT_TRUE(any_nan(with_nan)) << size << " at " << at;
    }
  }
}

MINIGEN_FOR_EVERY_SIMD_TARGET(VocabScan);

}  // namespace
}  // namespace minigen
