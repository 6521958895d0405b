#include "grammar/json_schema_compiler.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"
#include "grammar/byte_matcher.h"

namespace minigen {
namespace {

std::string compile_error(const char* schema) {
  try {
    compile_json_schema(nlohmann::json::parse(schema));
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

bool accepts(const Grammar& grammar, std::string_view text) {
  MatchState state = MatchState::initial(grammar);
  return state.advance_bytes(grammar, text) && state.accepts_end(grammar);
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
    EXPECT_TRUE(accepts(grammar, value)) << value;
  }
  EXPECT_FALSE(accepts(grammar, "\"red\""));
  EXPECT_TRUE(accepts(compile_json_schema(nlohmann::json::parse(R"({"const": "x"})")), "\"x\""));
}

TEST(JsonSchemaCompiler, TypeListsAndNoTypeMeanAlternatives) {
  const Grammar nullable = compile_json_schema(nlohmann::json::parse(R"({"type": ["string", "null"]})"));
  EXPECT_TRUE(accepts(nullable, "null"));
  EXPECT_TRUE(accepts(nullable, "\"s\""));
  EXPECT_FALSE(accepts(nullable, "1"));
  const Grammar anything = compile_json_schema(nlohmann::json::parse("{}"));
  EXPECT_TRUE(accepts(anything, R"([1, "two", {"three": 3}])"));
}

TEST(JsonSchemaCompiler, ObjectsWithoutPropertiesAreMapsUnlessClosed) {
  const Grammar map =
      compile_json_schema(nlohmann::json::parse(R"({"type": "object", "additionalProperties": {"type": "integer"}})"));
  EXPECT_TRUE(accepts(map, R"({"x": 1, "y": 2})"));
  EXPECT_FALSE(accepts(map, R"({"x": "1"})"));
  const Grammar closed =
      compile_json_schema(nlohmann::json::parse(R"({"type": "object", "additionalProperties": false})"));
  EXPECT_TRUE(accepts(closed, "{}"));
  EXPECT_FALSE(accepts(closed, R"({"x": 1})"));
}

}  // namespace
}  // namespace minigen
