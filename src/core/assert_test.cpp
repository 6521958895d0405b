#include "core/assert.h"

#include <gtest/gtest.h>

namespace minigen {
namespace {

int checked_twice(int value) {
  MINIGEN_ASSERT(value % 2 == 0, "an even value, got ", value);
  return 2 * value;
}

#ifndef NDEBUG

TEST(MinigenAssertDeathTest, ABrokenInvariantPrintsWhereWhatAndWhyThenAborts) {
  EXPECT_DEATH(checked_twice(3),
               "assert_test.cpp:[0-9]+: minigen assertion failed: value % 2 == 0 — an even value, got 3");
}

TEST(MinigenAssert, AHeldInvariantEvaluatesItsConditionOnce) {
  int evaluations = 0;
  MINIGEN_ASSERT(++evaluations == 1, "counted");
  EXPECT_EQ(evaluations, 1);
  EXPECT_EQ(checked_twice(4), 8);
}

#else

TEST(MinigenAssert, ReleaseNeverEvaluatesTheCondition) {
  int evaluations = 0;
  MINIGEN_ASSERT(++evaluations == 1, "counted");
  EXPECT_EQ(evaluations, 0);
  EXPECT_EQ(checked_twice(3), 6);  // the broken invariant goes unnoticed: that is what Release trades for speed
}

#endif

}  // namespace
}  // namespace minigen
