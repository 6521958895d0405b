#include "core/format.h"

#include <gtest/gtest.h>

#include <limits>

namespace minigen {
namespace {

TEST(Format, ThousandsFixedGroupedAndScientific) {
  EXPECT_EQ(with_thousands(13728), "13,728");
  EXPECT_EQ(with_thousands(246), "246");
  EXPECT_EQ(with_thousands(-1234567), "-1,234,567");
  EXPECT_EQ(fixed(55.8048, 1), "55.8");
  EXPECT_EQ(grouped(12345.678, 2), "12,345.68");
  EXPECT_EQ(grouped(-1234567.0, 0), "-1,234,567");
  EXPECT_EQ(grouped(999.999, 2), "1,000.00");  // rounding carries into the whole part before grouping
  EXPECT_EQ(exact_or_scientific(0.0), "0");
  EXPECT_EQ(exact_or_scientific(2.5e-5), "2.50e-05");
}

TEST(ShortestDecimalTest, PrintsWhatTheUserTyped) {
  EXPECT_EQ(shortest_decimal(0.85f), "0.85");
  EXPECT_EQ(shortest_decimal(1.5f), "1.5");
  EXPECT_EQ(shortest_decimal(-2.0f), "-2");
  EXPECT_EQ(shortest_decimal(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(shortest_decimal(std::numeric_limits<float>::quiet_NaN()), "nan");
}

TEST(ShortestDecimalTest, RecoversTheTypedDouble) {
  // 0.8f is 0.800000011920928955078125; the decimal behind it is 0.8, whose double differs from the widened float.
  EXPECT_EQ(as_typed_decimal(0.8f), 0.8);
  EXPECT_NE(as_typed_decimal(0.8f), static_cast<double>(0.8f));
  // Python's 1 - 0.8 is 0.19999999999999996, which rounds to the float 0.2f (1.0f - 0.8f would be one float step
  // lower): the typed decimal, not the widened float, is what MiniMind's arithmetic starts from.
  EXPECT_EQ(static_cast<float>(1.0 - as_typed_decimal(0.8f)), 0.2f);
}

}  // namespace
}  // namespace minigen
