#include "grammar/json_schema_compiler.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "grammar/byte_matcher.h"

namespace minigen {
namespace {

using json = nlohmann::ordered_json;

std::string compile_error(const json& schema, GrammarBudget budget = {}) {
  try {
    GrammarBuilder builder(budget);
    add_json_schema(builder, schema);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

std::string compile_error(const char* schema) { return compile_error(json::parse(schema)); }

bool accepts_document(const Grammar& grammar, std::string_view text) {
  MatchState state = MatchState::initial(grammar);
  return state.advance_bytes(grammar, text) && state.accepts_end(grammar);
}

json repeated(const json& values, int times) {
  json out = json::array();
  for (int i = 0; i < times; ++i) out.insert(out.end(), values.begin(), values.end());
  return out;
}

json numbered(const std::string& prefix, int count) {
  json out = json::array();
  for (int i = 0; i < count; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

// The hostile probe's schema of issue 46 — an anyOf of 30 consts nested 40 deep (each level one more alternative,
// an array of the next) — compiles into one node per const, array and choice: 41 × 30 + 40 + 41 + the object
// choice (its key is no node), work linear in the schema's size (about 10 ms). The 5.3 s the probe saw in a tool's
// parameters were the prefill of the 18,534-token prompt the chat template writes from it, which the scheduler now
// shares with other requests. Nesting the anyOf directly instead flattens into one choice of 1,230 alternatives,
// refused over the budget.
TEST(JsonSchemaCompiler, AnAnyOfNestedFortyDeepCompilesIntoOneNodePerPart) {
  const auto nested = [](bool through_arrays) {
    json level;
    for (int depth = 0; depth <= 40; ++depth) {
      json alternatives = json::array();
      for (int i = 0; i < 30; ++i)
        alternatives.push_back({{"const", "v" + std::to_string(depth) + "_" + std::to_string(i)}});
      if (depth > 0) {
        alternatives.push_back(through_arrays ? json{{"type", "array"}, {"items", level}} : level);
      }
      level = {{"anyOf", alternatives}};
    }
    return json{{"type", "object"}, {"properties", {{"x", level}}}, {"required", {"x"}}};
  };
  const Grammar grammar = compile_json_schema(nested(true));
  EXPECT_EQ(grammar.node_count(), 41 * 30 + 40 + 41 + 1);  // consts, arrays, choices, the object
  try {
    compile_json_schema(nested(false));
    ADD_FAILURE() << "a choice of 1,230 alternatives was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("more than the 1024 one choice may have"), std::string::npos)
        << error.what();
  }
}

TEST(JsonSchemaCompiler, NamesEveryUnsupportedKeywordAtOnce) {
  EXPECT_EQ(compile_error(R"({"type": "object", "properties": {"a": {"type": "string", "pattern": "x+",
      "format": "date"}, "b": {"type": "number", "minimum": 0}}})"),
            "unsupported JSON Schema keyword(s): format, minimum, pattern");
  EXPECT_EQ(compile_error(R"({"$ref": "#/$defs/x", "$defs": {}})"), "unsupported JSON Schema keyword(s): $defs, $ref");
  EXPECT_EQ(compile_error(R"({"oneOf": [{"type": "null"}]})"), "unsupported JSON Schema keyword(s): oneOf");
}

TEST(JsonSchemaCompiler, RefusesSchemasItCannotGenerate) {
  EXPECT_NE(compile_error(R"({"type": "object", "properties": {}, "required": ["a"]})").find("not in properties"),
            std::string::npos);
  EXPECT_NE(compile_error(R"({"type": "strin"})").find("unknown JSON Schema type"), std::string::npos);
  EXPECT_NE(compile_error(R"({"type": "string", "enum": [1, 2]})").find("no value matches"), std::string::npos);
  EXPECT_NE(compile_error(R"({"type": "string", "maxLength": -1})").find("non-negative"), std::string::npos);
  EXPECT_NE(compile_error("false").find("accepts no value"), std::string::npos);
  EXPECT_EQ(compile_error(R"({"title": "T", "description": "d", "type": "null", "$schema": "x"})"), "");
}

TEST(JsonSchemaCompiler, EnumAndConstAreLiteralJsonText) {
  const Grammar grammar = compile_json_schema(nlohmann::json::parse(R"({"enum": ["r\u00e9d", 1.5, [1, "a"], null,
      {"k": true}]})"));
  for (const char* value : {"\"r\xC3\xA9\x64\"", "1.5", R"([1,"a"])", "null", R"({"k":true})"}) {
    EXPECT_TRUE(accepts_document(grammar, value)) << value;
  }
  EXPECT_FALSE(accepts_document(grammar, "\"red\""));
  EXPECT_TRUE(accepts_document(compile_json_schema(nlohmann::json::parse(R"({"const": "x"})")), "\"x\""));
}

TEST(JsonSchemaCompiler, TypeListsAndNoTypeMeanAlternatives) {
  const Grammar nullable = compile_json_schema(nlohmann::json::parse(R"({"type": ["string", "null"]})"));
  EXPECT_TRUE(accepts_document(nullable, "null"));
  EXPECT_TRUE(accepts_document(nullable, "\"s\""));
  EXPECT_FALSE(accepts_document(nullable, "1"));
  const Grammar anything = compile_json_schema(nlohmann::json::parse("{}"));
  EXPECT_TRUE(accepts_document(anything, R"([1, "two", {"three": 3}])"));
}

TEST(JsonSchemaCompiler, ObjectsWithoutPropertiesAreMapsUnlessClosed) {
  const Grammar map =
      compile_json_schema(nlohmann::json::parse(R"({"type": "object", "additionalProperties": {"type": "integer"}})"));
  EXPECT_TRUE(accepts_document(map, R"({"x": 1, "y": 2})"));
  EXPECT_FALSE(accepts_document(map, R"({"x": "1"})"));
  const Grammar closed =
      compile_json_schema(nlohmann::json::parse(R"({"type": "object", "additionalProperties": false})"));
  EXPECT_TRUE(accepts_document(closed, "{}"));
  EXPECT_FALSE(accepts_document(closed, R"({"x": 1})"));
}

// Normalisation and the complexity budget (grammar/grammar.h): repeated alternatives collapse to the grammar of the
// distinct ones, accepting the same documents, and a schema just inside each limit compiles while one just past it
// is refused with the JSON pointer of the part that is too large.
TEST(GrammarNormalisation, RepeatedTypesEnumValuesAndAlternativesCollapseToTheSameLanguage) {
  struct Case {
    json distinct, with_repeats;
    std::vector<std::string> documents;
  };
  const json int_or_null = json::array({{{"type", "integer"}}, {{"type", "null"}}});
  const std::vector<Case> cases = {
      {{{"type", "string"}}, {{"type", repeated({"string"}, 20000)}}, {"\"\"", "\"abc\"", "1", "null", "\"a"}},
      {{{"enum", {"a", "b"}}}, {{"enum", repeated({"a", "b"}, 10000)}}, {"\"a\"", "\"b\"", "\"c\"", "\"ab\""}},
      {{{"anyOf", int_or_null}}, {{"anyOf", repeated(int_or_null, 5000)}}, {"1", "-20", "null", "1.5", "\"x\""}},
      // An anyOf among the alternatives is taken in: one choice of two, not a choice of choices.
      {{{"anyOf", int_or_null}},
       {{"anyOf", {{{"anyOf", int_or_null}}, {{"type", "null"}}, {{"type", {"integer", "null"}}}}}},
       {"7", "null", "true"}},
  };
  for (const Case& one : cases) {
    const Grammar distinct = compile_json_schema(one.distinct);
    const Grammar collapsed = compile_json_schema(one.with_repeats);
    EXPECT_EQ(collapsed.node_count(), distinct.node_count()) << one.distinct.dump();
    for (const std::string& document : one.documents) {
      EXPECT_EQ(accepts_document(collapsed, document), accepts_document(distinct, document))
          << one.distinct.dump() << " " << document;
    }
  }
  // Why 20,000 repeats cost 19 s a token before: each was its own node, so after the opening quote 20,000 parses
  // were alive and every mask walked the vocabulary with each. Now one is.
  const Grammar strings = compile_json_schema({{"type", repeated({"string"}, 20000)}});
  MatchState state = MatchState::initial(strings);
  ASSERT_TRUE(state.advance_bytes(strings, "\"a"));
  EXPECT_EQ(state.stacks.size(), 1u);
}

TEST(GrammarBudget, AChoiceOf1024DistinctAlternativesCompilesAnd1025AreRefusedWithItsPointer) {
  const auto enum_of = [](int count) {
    return json{{"type", "object"}, {"properties", {{"a", {{"enum", numbered("v", count)}}}}}};
  };
  EXPECT_EQ(compile_error(enum_of(1024)), "");
  EXPECT_EQ(compile_error(enum_of(1025)),
            "at /properties/a/enum: more than 1024 distinct alternatives, the most one choice may have");
  // Repeats do not count: 20,480 values of which 1,024 are distinct.
  EXPECT_EQ(compile_error({{"enum", repeated(numbered("v", 1024), 20)}}), "");

  json consts = json::array();
  for (const json& value : numbered("k", 1025)) consts.push_back({{"const", value}});
  EXPECT_EQ(compile_error({{"type", "object"}, {"properties", {{"a/b~c", {{"anyOf", consts}}}}}}),
            "at /properties/a~1b~0c/anyOf: more than 1024 distinct alternatives, the most one choice may have");
  consts.erase(consts.end() - 1);
  EXPECT_EQ(compile_error({{"anyOf", consts}}), "");
}

TEST(GrammarBudget, NestedAlternativesMultiplyAndMoreThan2048LiveParsesAreRefused) {
  // Two objects whose only property is an enum of 1,024: after {"x": " every value of both is alive (2,048).
  const auto object_with_enum = [](const std::string& prefix, int values) {
    return json{{"type", "object"}, {"properties", {{"x", {{"enum", numbered(prefix, values)}}}}}};
  };
  json alternatives = {object_with_enum("a", 1024), object_with_enum("b", 1024)};
  EXPECT_EQ(compile_error({{"anyOf", alternatives}}), "");
  alternatives.push_back({{"type", "null"}});
  EXPECT_EQ(compile_error({{"type", "object"}, {"properties", {{"p", {{"anyOf", alternatives}}}}}}),
            "at /properties/p/anyOf: at least 2049 parses may be alive at once (alternatives nested in alternatives "
            "multiply), more than the 2048 a grammar may keep");
  // 50 × 50 = 2,500: each choice is small, their product is not.
  json objects = json::array();
  for (int i = 0; i < 50; ++i) objects.push_back(object_with_enum(std::to_string(i) + "-", 50));
  EXPECT_NE(compile_error({{"anyOf", objects}}).find("at /anyOf: at least 2500 parses"), std::string::npos);
}

TEST(GrammarBudget, NodesBeyondTheBudgetAreRefusedWhereTheyAreAdded) {
  // An enum of 8 values: 8 literals and the anyOf.
  EXPECT_EQ(compile_error({{"enum", numbered("v", 8)}}, GrammarBudget{9, 1024, 2048}), "");
  EXPECT_EQ(compile_error({{"type", "array"}, {"items", {{"enum", numbered("v", 8)}}}}, GrammarBudget{8, 1024, 2048}),
            "at /items/enum: the grammar needs more than 8 distinct nodes (states)");
  EXPECT_EQ(compile_error({{"type", "string"}}, GrammarBudget{0, 1024, 2048}),
            "at the root: the grammar needs more than 0 distinct nodes (states)");
}

}  // namespace
}  // namespace minigen
