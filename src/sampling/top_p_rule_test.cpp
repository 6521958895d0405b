#include "sampling/top_p_rule.h"

#include <gtest/gtest.h>

#include <string>

#include "core/error.h"

namespace minigen {
namespace {

TEST(TopPRuleTest, ParsesAndNamesEachRule) {
  for (const TopPRule rule : {TopPRule::kMinimind, TopPRule::kHuggingFace, TopPRule::kLlamaCpp}) {
    EXPECT_EQ(parse_top_p_rule(top_p_rule_name(rule)), rule);
  }
  EXPECT_EQ(parse_top_p_rule("hf"), TopPRule::kHuggingFace);
  EXPECT_STREQ(top_p_rule_name(TopPRule::kLlamaCpp), "llamacpp");
}

TEST(TopPRuleTest, UnknownNameListsTheChoices) {
  try {
    parse_top_p_rule("HF");
    FAIL() << "expected minigen::Error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()), "--top-p-rule must be one of minimind, hf, llamacpp; got 'HF'");
  }
}

}  // namespace
}  // namespace minigen
