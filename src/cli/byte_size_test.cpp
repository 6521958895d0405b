#include "cli/byte_size.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace minigen {
namespace {

TEST(ByteSize, BinaryAndDecimalUnitsInAnyCase) {
  EXPECT_EQ(parse_byte_size("1GiB"), 1073741824u);
  EXPECT_EQ(parse_byte_size("256MiB"), 268435456u);
  EXPECT_EQ(parse_byte_size("256mib"), 268435456u);
  EXPECT_EQ(parse_byte_size("64KiB"), 65536u);
  EXPECT_EQ(parse_byte_size("500MB"), 500000000u);
  EXPECT_EQ(parse_byte_size("2G"), 2000000000u);
  EXPECT_EQ(parse_byte_size("1.5GiB"), 1610612736u);
  EXPECT_EQ(parse_byte_size("1048576"), 1048576u);
  EXPECT_EQ(parse_byte_size("4096B"), 4096u);
}

TEST(ByteSize, AnythingElseIsOneClearError) {
  for (const std::string text : {"", "MiB", "256 MiB", "256TiB", "256MiBs", "-1GiB", "0", "nan", "1e16", "0x10"}) {
    try {
      parse_byte_size(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const Error& error) {
      EXPECT_EQ(std::string(error.what()), "'" + text + "' is not a byte size (e.g. 256MiB, 1GiB, 500MB)");
    }
  }
}

}  // namespace
}  // namespace minigen
