#include "tokenizer/added_token_matcher.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace minigen {
namespace {

TEST(AddedTokenMatcherTest, FindsTheLongestTokenAtAnOffset) {
  AddedTokenMatcher matcher;
  matcher.add("<a>", 7);
  matcher.add("<a><b>", 8);
  matcher.add("x", 9);
  const std::string text = "<a><b>, <a>x";
  const auto at_start = matcher.match_at(text, 0);
  ASSERT_TRUE(at_start.has_value());
  EXPECT_EQ(at_start->id, 8);
  EXPECT_EQ(at_start->length, 6u);
  const auto short_one = matcher.match_at(text, 8);
  ASSERT_TRUE(short_one.has_value());
  EXPECT_EQ(short_one->id, 7);
  EXPECT_EQ(short_one->length, 3u);
  EXPECT_EQ(matcher.match_at(text, 11)->id, 9);
  EXPECT_FALSE(matcher.match_at(text, 1).has_value());
  EXPECT_FALSE(matcher.match_at("<a", 0).has_value());  // cut off by the end of the text
}

TEST(AddedTokenMatcherTest, EmptyTokenIsRejected) {
  AddedTokenMatcher matcher;
  EXPECT_THROW(matcher.add("", 1), Error);
}

}  // namespace
}  // namespace minigen
