#include "request/output_grammar.h"

#include <gtest/gtest.h>

#include <string_view>

#include "grammar/byte_matcher.h"
#include "request/request_error.h"

namespace minigen {
namespace {

using nlohmann::ordered_json;

// Whether `text` is a whole document of the grammar.
bool accepts(const Grammar& grammar, std::string_view text) {
  MatchState state = MatchState::initial(grammar);
  return state.advance_bytes(grammar, text) && state.accepts_end(grammar);
}

const std::vector<ToolFunction> kWeather = {
    {"weather", ordered_json::parse(R"({"type": "object", "properties": {"city": {"type": "string"}},
                                        "required": ["city"], "additionalProperties": false})")}};

TEST(OutputGrammar, NullSchemaIsAnyJsonObjectAndASchemaIsItsOwnLanguage) {
  const Grammar object = json_output_grammar(nullptr);
  EXPECT_TRUE(accepts(object, R"({"a": [1, 2]})"));
  EXPECT_FALSE(accepts(object, "[1]"));
  const Grammar integer = json_output_grammar(ordered_json{{"type", "integer"}});
  EXPECT_TRUE(accepts(integer, "42"));
  EXPECT_FALSE(accepts(integer, R"({"a": 1})"));
  EXPECT_THROW(json_output_grammar(ordered_json{{"type", "string"}, {"format", "x"}}), Error);
}

TEST(OutputGrammar, AForcedCallIsOneToolCallBlockWithValidArguments) {
  const Grammar call = forced_tool_call_grammar(kWeather, /*close_think_first=*/false);
  EXPECT_TRUE(accepts(call, "<tool_call>\n{\"name\": \"weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>"));
  EXPECT_FALSE(accepts(call, "<tool_call>\n{\"name\": \"weather\", \"arguments\": {}}\n</tool_call>"));
  EXPECT_FALSE(accepts(call, "<tool_call>\n{\"name\": \"time\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>"));
  const Grammar after_think = forced_tool_call_grammar(kWeather, /*close_think_first=*/true);
  EXPECT_TRUE(accepts(
      after_think, "</think>\n\n<tool_call>\n{\"name\": \"weather\", \"arguments\": {\"city\": \"\"}}\n</tool_call>"));
  EXPECT_FALSE(
      accepts(after_think, "<tool_call>\n{\"name\": \"weather\", \"arguments\": {\"city\": \"\"}}\n</tool_call>"));
}

TEST(OutputGrammar, AParameterSchemaTheCompilerRefusesIsAToolsError) {
  const std::vector<ToolFunction> patterned = {
      {"find", ordered_json::parse(R"({"type": "object", "properties": {"q": {"type": "string", "pattern": "a+"}}})")}};
  try {
    forced_tool_call_grammar(patterned, false);
    ADD_FAILURE() << "an unsupported keyword compiled";
  } catch (const RequestError& error) {
    EXPECT_EQ(error.field(), "tools");
    EXPECT_EQ(std::string(error.what()).rfind("the parameters of tool 'find': ", 0), 0u) << error.what();
  }
}

TEST(OutputGrammar, OnlyAChoiceThatForcesACallHasAGrammar) {
  const auto vocabulary = std::make_shared<const TokenVocabulary>(std::vector<std::string>{"a", "b"}, 1);
  EXPECT_EQ(tool_choice_grammar(kWeather, ToolChoice::from_text("auto"), false, vocabulary), nullptr);
  EXPECT_EQ(tool_choice_grammar(kWeather, ToolChoice::from_text("none"), false, vocabulary), nullptr);
  EXPECT_NE(tool_choice_grammar(kWeather, ToolChoice::from_text("weather"), false, vocabulary), nullptr);
  EXPECT_THROW(tool_choice_grammar(kWeather, ToolChoice::from_text("time"), false, vocabulary), RequestError);
}

TEST(OutputGrammar, AFormatAndAForcedCallCannotBothHold) {
  EXPECT_NO_THROW(check_one_output_grammar(true, false));
  EXPECT_NO_THROW(check_one_output_grammar(false, true));
  EXPECT_NO_THROW(check_one_output_grammar(false, false));
  try {
    check_one_output_grammar(true, true);
    ADD_FAILURE() << "a schema and a forced call were both allowed";
  } catch (const RequestError& error) {
    EXPECT_EQ(error.field(), "tool_choice");
    EXPECT_STREQ(error.what(), "a forced tool call cannot be combined with a JSON Schema or a JSON object");
  }
}

}  // namespace
}  // namespace minigen
