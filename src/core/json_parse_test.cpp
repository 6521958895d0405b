#include "core/json_parse.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
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

// Duplicate keys fold as nlohmann folds them — the first position, the last value — in both kinds of object, at
// every depth; an empty object and empty keys stay as they are.
TEST(ParseUntrustedJson, DuplicateKeysKeepTheFirstPlaceAndTheLastValue) {
  const std::string text = R"({"b": 1, "a": {"x": 1, "y": 2, "x": 3}, "b": [4, {}], "": 5, "": 6})";
  EXPECT_EQ(parse_untrusted_json<nlohmann::ordered_json>(text).dump(), R"({"b":[4,{}],"a":{"x":3,"y":2},"":6})");
  EXPECT_EQ(parse_untrusted_json<nlohmann::json>(text), nlohmann::json::parse(text));
  EXPECT_EQ(parse_untrusted_json<nlohmann::ordered_json>("[1, \"s\", null, true, 2.5, -3, {}]").dump(),
            R"([1,"s",null,true,2.5,-3,{}])");
}

// One object of 200,000 keys (2.6 MB) costs about ten times one of 20,000: the work is linear, not quadratic (100,000
// keys took 8.7 s before, 25,000 0.64 s). A complexity check, not a speed target: the two sizes are compared with
// each other in one run, and quadratic work would be 100 times, far beyond the bound of 40.
TEST(ParseUntrustedJson, AnObjectOfManyKeysParsesInLinearTime) {
  const auto object_of = [](int keys) {
    std::string text = "{";
    for (int i = 0; i < keys; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
    return text + "}";
  };
  const auto seconds = [](const std::string& text) {
    const auto start = std::chrono::steady_clock::now();
    const auto parsed = parse_untrusted_json<nlohmann::ordered_json>(text);
    EXPECT_EQ(parsed.size(), static_cast<std::size_t>(std::count(text.begin(), text.end(), ':')));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const std::string small = object_of(20'000);
  const std::string large = object_of(200'000);
  double small_time = 1e9, large_time = 1e9;
  for (int round = 0; round < 3; ++round) {  // the best of three: a busy machine slows single runs
    small_time = std::min(small_time, seconds(small));
    large_time = std::min(large_time, seconds(large));
  }
  EXPECT_LT(large_time, 40 * small_time) << small_time << " s for 20,000 keys, " << large_time << " s for 200,000";
}

}  // namespace
}  // namespace minigen
