#include "core/json_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace minigen {
namespace {

std::string nested_arrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(ParseUntrustedJson, AcceptsNestingUpToTheLimitAndNoDeeper) {
  // Depth counts from the outermost value: kMaxJsonDepth + 1 brackets reach depth kMaxJsonDepth.
  const nlohmann::json at_limit = parse_untrusted_json<nlohmann::json>(nested_arrays(kMaxJsonDepth + 1));
  EXPECT_TRUE(at_limit.is_array());
  for (const int depth : {kMaxJsonDepth + 2, 100000}) {
    try {
      parse_untrusted_json<nlohmann::ordered_json>(nested_arrays(depth));
      ADD_FAILURE() << depth << " levels were accepted";
    } catch (const Error& error) {
      EXPECT_STREQ(error.what(), "is nested more than 128 levels deep");
    }
  }
}

TEST(ParseUntrustedJson, KeepsKeyOrderAndNamesBrokenJson) {
  const auto ordered = parse_untrusted_json<nlohmann::ordered_json>(R"({"z": 1, "a": {"y": [2, 3]}})");
  EXPECT_EQ(ordered.dump(), R"({"z":1,"a":{"y":[2,3]}})");
  try {
    parse_untrusted_json<nlohmann::json>("{\"a\": ");
    ADD_FAILURE() << "broken JSON was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind("is not valid JSON: [json.exception.parse_error", 0), 0) << error.what();
  }
}

}  // namespace
}  // namespace minigen
