#include "sampling/descending_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <random>
#include <vector>

namespace minigen {
namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();

// Sizes on both sides of the switch from std::sort to VQSort (512), up to MiniMind-3's vocabulary.
TEST(SamplerSortTest, EqualsStdSortOnManyRows) {
  std::mt19937 random(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::uniform_int_distribution<int> small_integer(0, 3);
  for (const size_t size : {size_t{0}, size_t{1}, size_t{7}, size_t{511}, size_t{512}, size_t{6400}, size_t{151665}}) {
    for (const bool heavy_ties : {false, true}) {
      std::vector<float> values(size);
      for (float& value : values) value = heavy_ties ? static_cast<float>(small_integer(random)) : normal(random);
      // Infinities, a −0 beside +0, and the extremes of the float range. Highway 1.0.3 sorting floats directly put
      // −inf before lowest() here at every size from 512 up; the integer keys of descending_sort.cpp do not.
      if (size >= 7) {
        values[1] = kInfinity;
        values[2] = -kInfinity;
        values[3] = -0.0f;
        values[4] = 0.0f;
        values[5] = std::numeric_limits<float>::max();
        values[6] = std::numeric_limits<float>::lowest();
      }
      std::vector<float> expected = values;
      std::sort(expected.begin(), expected.end(), std::greater<float>());
      sort_descending(values);
      ASSERT_EQ(values.size(), expected.size());
      // == on floats: +0 and −0 are equal values, and their relative order is not promised.
      for (size_t index = 0; index < size; ++index) {
        ASSERT_EQ(values[index], expected[index]) << "size " << size << " index " << index;
      }
    }
  }
}

TEST(SamplerSortTest, SortsASmallRowLargestFirst) {
  std::vector<float> values = {0.5f, -2.0f, 3.0f, 0.5f, -kInfinity, 1.0f};
  sort_descending(values);
  EXPECT_EQ(values, (std::vector<float>{3.0f, 1.0f, 0.5f, 0.5f, -2.0f, -kInfinity}));
}

}  // namespace
}  // namespace minigen
