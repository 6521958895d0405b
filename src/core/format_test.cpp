#include "core/format.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace minigen
