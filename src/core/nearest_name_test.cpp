#include "core/nearest_name.h"

#include <gtest/gtest.h>

namespace minigen {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("genrate", "generate"), 1);        // one letter missing
  EXPECT_EQ(edit_distance("temprature", "temperature"), 1);  // one letter missing
  EXPECT_EQ(edit_distance("greddy", "greedy"), 1);           // one letter wrong
  EXPECT_EQ(edit_distance("gerenate", "generate"), 2);       // two letters wrong
  EXPECT_EQ(edit_distance("tokniez", "tokenize"), 2);        // a letter missing and a swapped pair
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);
  EXPECT_EQ(edit_distance("teh", "the"), 1);  // a swapped pair is one edit
  EXPECT_EQ(edit_distance("", "abc"), 3);
  EXPECT_EQ(edit_distance("same", "same"), 0);
}

const std::vector<std::string> kCommands = {"generate", "chat", "tokenize", "detokenize", "info", "serve", "lab"};
const std::vector<std::string> kFlags = {"--temperature", "--top-k", "--top-p", "--greedy", "--seed", "--threads"};

TEST(NearestName, SuggestsTheNearestCommandOrFlag) {
  EXPECT_EQ(nearest_name("genrate", kCommands), "generate");
  EXPECT_EQ(nearest_name("--temprature", kFlags), "--temperature");
  EXPECT_EQ(nearest_name("--greddy", kFlags), "--greedy");
  EXPECT_EQ(nearest_name("serv", kCommands), "serve");
  EXPECT_EQ(nearest_name("--top-q", kFlags), "--top-k");  // a tie between --top-k and --top-p: the first listed
}

TEST(NearestName, SuggestsNothingWhenNothingIsNear) {
  EXPECT_EQ(nearest_name("compile", kCommands), std::nullopt);
  EXPECT_EQ(nearest_name("--verbose", kFlags), std::nullopt);
  EXPECT_EQ(nearest_name("x", kCommands), std::nullopt);    // one letter is near every short name: no guess
  EXPECT_EQ(nearest_name("lab", kCommands), std::nullopt);  // a known name is not a typo
}

}  // namespace
}  // namespace minigen
