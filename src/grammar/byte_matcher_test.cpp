#include "grammar/byte_matcher.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "grammar/json_schema_compiler.h"

namespace minigen {
namespace {

// Whether `text` is a whole document of the grammar.
bool accepts_whole(const Grammar& grammar, std::string_view text) {
  MatchState state = MatchState::initial(grammar);
  return state.advance_bytes(grammar, text) && state.accepts_end(grammar);
}

// Whether `text` can begin a document (every byte taken, the end not required).
bool accepts_prefix(const Grammar& grammar, std::string_view text) {
  MatchState state = MatchState::initial(grammar);
  return state.advance_bytes(grammar, text);
}

Grammar schema(const char* text) { return compile_json_schema(nlohmann::ordered_json::parse(text)); }

TEST(ByteMatcher, NumbersFollowJsonWithBoundedDigits) {
  const Grammar number = schema(R"({"type": "number"})");
  for (const char* good : {"0", "-0", "-0.5e+3", "12.25", "1E9", "3e-07", "-10", "123456789012345"}) {
    EXPECT_TRUE(accepts_whole(number, good)) << good;
  }
  for (const char* bad : {"01", "-", "1.", ".5", "1e", "1e+", "+1", "0x1", "1.5.2", "--1", "1 ", " 1",
                          "1234567890123456", "1e123", "NaN", "Infinity"}) {
    EXPECT_FALSE(accepts_whole(number, bad)) << bad;
  }
  const Grammar integer = schema(R"({"type": "integer"})");
  EXPECT_TRUE(accepts_whole(integer, "-42"));
  EXPECT_FALSE(accepts_prefix(integer, "4."));
  EXPECT_FALSE(accepts_prefix(integer, "4e"));
}

TEST(ByteMatcher, StringsTakeEscapesAndUtf8ButNoSurrogatesOrControlBytes) {
  const Grammar string = schema(R"({"type": "string"})");
  for (const char* good : {R"("")", R"("a\"b")", R"("\\\/\b\f\n\r\t")", R"("\u00e9\u20AC")", "\"caf\xC3\xA9\"",
                           "\"\xE2\x82\xAC \xF0\x9F\x98\x80\"", "\"\xE4\xB8\xAD\xE6\x96\x87\""}) {
    EXPECT_TRUE(accepts_whole(string, good)) << good;
  }
  for (const char* bad :
       {R"("\x")", R"("\u12")", R"("\u12G4")", R"("\ud83d\ude00")", "\"a\nb\"", "\"\xC3\"", "\"\xC0\xAF\"",
        "\"\xED\xA0\x80\"", "\"\xF5\x80\x80\x80\"", "\"\xE0\x80\x80\"", "'a'", "\"abc"}) {
    EXPECT_FALSE(accepts_whole(string, bad)) << bad;
  }
  // A character split across tokens: the state between its bytes is alive and waits for the rest.
  MatchState state = MatchState::initial(string);
  ASSERT_TRUE(state.advance_bytes(string, "\"\xE2\x82"));
  EXPECT_FALSE(state.accepts_end(string));
  EXPECT_FALSE(MatchState(state).advance_byte(string, '"'));
  ASSERT_TRUE(state.advance_bytes(string, "\xAC\""));
  EXPECT_TRUE(state.accepts_end(string));
}

TEST(ByteMatcher, StringLengthCountsCodePointsAndEscapesAsOne) {
  const Grammar string = schema(R"({"type": "string", "minLength": 2, "maxLength": 3})");
  EXPECT_FALSE(accepts_whole(string, R"("a")"));
  EXPECT_TRUE(accepts_whole(string, R"("ab")"));
  EXPECT_TRUE(accepts_whole(string, "\"\xC3\xA9\\u00e9\\n\""));
  EXPECT_FALSE(accepts_prefix(string, R"("abcd)"));
}

// Keys come in the schema's order (as OpenAI's structured outputs write them), which need not be alphabetical.
TEST(ByteMatcher, PropertiesFollowTheSchemasOrder) {
  const Grammar object = schema(R"({"type": "object", "properties": {"zeta": {"type": "integer"}, "alpha":
      {"type": "boolean"}, "mid": {"type": "null"}}, "required": ["zeta", "alpha"], "additionalProperties": false})");
  EXPECT_TRUE(accepts_whole(object, R"({"zeta": 1, "alpha": true, "mid": null})"));
  EXPECT_TRUE(accepts_whole(object, R"({"zeta": 1, "alpha": true})"));
  EXPECT_FALSE(accepts_prefix(object, R"({"alpha")"));
  EXPECT_FALSE(accepts_prefix(object, R"({"mid")"));
  EXPECT_FALSE(accepts_whole(object, R"({"zeta": 1, "mid": null, "alpha": true})"));
}

TEST(ByteMatcher, WhitespaceIsOneOptionalSpaceAfterColonAndCommaOnly) {
  const Grammar object = schema(R"({"type": "object", "properties": {"a": {"type": "array", "items": {"type":
      "integer"}}, "b": {"type": "boolean"}}, "required": ["a", "b"], "additionalProperties": false})");
  EXPECT_TRUE(accepts_whole(object, R"({"a":[1,2],"b":true})"));
  EXPECT_TRUE(accepts_whole(object, R"({"a": [1, 2], "b": false})"));
  for (const char* bad : {R"({ "a": [1], "b": true})", R"({"a":  [1], "b": true})", R"({"a" : [1], "b": true})",
                          R"({"a": [1 ], "b": true})", R"({"a": [1],"b": true} )", "{\"a\":\n[1], \"b\": true}"}) {
    EXPECT_FALSE(accepts_whole(object, bad)) << bad;
  }
}

TEST(ByteMatcher, ObjectsKeepPropertyOrderAndNeedTheRequiredOnes) {
  const Grammar object = schema(R"({"type": "object", "properties": {"a": {"type": "null"}, "b": {"type": "null"},
      "c": {"type": "null"}}, "required": ["b"]})");
  EXPECT_TRUE(accepts_whole(object, R"({"b":null})"));
  EXPECT_TRUE(accepts_whole(object, R"({"a":null,"b":null,"c":null})"));
  EXPECT_TRUE(accepts_whole(object, R"({"b":null,"c":null})"));
  EXPECT_FALSE(accepts_whole(object, R"({})"));
  EXPECT_FALSE(accepts_whole(object, R"({"a":null})"));
  EXPECT_FALSE(accepts_whole(object, R"({"b":null,"a":null})"));
  EXPECT_FALSE(accepts_whole(object, R"({"b":null,"d":null})"));
  EXPECT_FALSE(accepts_whole(object, R"({"b":null,})"));
}

TEST(ByteMatcher, ArraysCountTheirItems) {
  const Grammar array = schema(R"({"type": "array", "items": {"enum": ["x", 7, null]}, "minItems": 1,
      "maxItems": 2})");
  EXPECT_FALSE(accepts_whole(array, "[]"));
  EXPECT_TRUE(accepts_whole(array, R"(["x"])"));
  EXPECT_TRUE(accepts_whole(array, R"([7, null])"));
  EXPECT_FALSE(accepts_prefix(array, R"(["x",7,)"));
  EXPECT_FALSE(accepts_whole(array, R"(["y"])"));
}

TEST(ByteMatcher, AnyOfFollowsEveryAlternativeUntilTheBytesDecide) {
  const Grammar value = schema(R"({"anyOf": [{"type": "object", "properties": {"kind": {"const": "a"}, "n":
      {"type": "integer"}}, "required": ["kind", "n"]}, {"type": "object", "properties": {"kind": {"const": "b"},
      "s": {"type": "string"}}, "required": ["kind", "s"]}, {"type": "null"}]})");
  EXPECT_TRUE(accepts_whole(value, R"({"kind":"a","n":1})"));
  EXPECT_TRUE(accepts_whole(value, R"({"kind": "b", "s": "x"})"));
  EXPECT_TRUE(accepts_whole(value, "null"));
  EXPECT_FALSE(accepts_whole(value, R"({"kind":"a","s":"x"})"));
  MatchState state = MatchState::initial(value);
  ASSERT_TRUE(state.advance_bytes(value, R"({"kind":")"));
  EXPECT_EQ(state.stacks.size(), 2u);
  ASSERT_TRUE(state.advance_bytes(value, R"(b")"));
  EXPECT_EQ(state.stacks.size(), 1u);
}

TEST(ByteMatcher, FreeFormJsonTakesAnyValueUpToTheNestingLimit) {
  const Grammar object = json_object_grammar();
  EXPECT_TRUE(accepts_whole(object, R"({})"));
  EXPECT_TRUE(accepts_whole(object, R"({"a": [1, {"b": null}], "c": "d", "e": -1.5e-3, "f": [[], {}]})"));
  EXPECT_FALSE(accepts_whole(object, "[1]"));
  EXPECT_FALSE(accepts_whole(object, R"({"a": 1}{)"));
  std::string deep = "{\"a\": ";
  for (int i = 0; i < kMaxStackDepth; ++i) deep += "[";
  EXPECT_FALSE(accepts_prefix(object, deep));
}

TEST(ByteMatcher, NothingFollowsACompleteObjectButANumberMayGrow) {
  const Grammar object = json_object_grammar();
  MatchState state = MatchState::initial(object);
  ASSERT_TRUE(state.advance_bytes(object, "{}"));
  EXPECT_TRUE(state.accepts_end(object));
  EXPECT_FALSE(state.can_continue(object));
  const Grammar number = schema(R"({"type": "number"})");
  MatchState digits = MatchState::initial(number);
  ASSERT_TRUE(digits.advance_bytes(number, "12"));
  EXPECT_TRUE(digits.accepts_end(number));
  EXPECT_TRUE(digits.can_continue(number));
}

}  // namespace
}  // namespace minigen
