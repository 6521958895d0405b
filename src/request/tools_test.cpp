#include "request/tools.h"

#include <gtest/gtest.h>

#include "request/request_error.h"

namespace minigen {
namespace {

using nlohmann::ordered_json;

using FieldAndMessage = std::pair<std::string, std::string>;

// The RequestError `tools` raises: its field and message.
FieldAndMessage tools_error(const char* tools) {
  try {
    tool_functions(ordered_json::parse(tools));
  } catch (const RequestError& error) {
    return {error.field(), error.what()};
  }
  return {"", "no error"};
}

TEST(Tools, FunctionsKeepTheirParametersInTheClientsKeyOrder) {
  const std::vector<ToolFunction> functions = tool_functions(ordered_json::parse(R"([
    {"type": "function", "function": {"name": "weather", "parameters": {"type": "object",
      "properties": {"zeta": {"type": "string"}, "alpha": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "time", "parameters": null}}])"));
  ASSERT_EQ(functions.size(), 2u);
  EXPECT_EQ(functions[0].name, "weather");
  EXPECT_EQ(functions[0].parameters["properties"].dump(), R"({"zeta":{"type":"string"},"alpha":{"type":"integer"}})");
  EXPECT_EQ(functions[1].name, "time");
  EXPECT_EQ(functions[1].parameters.dump(), R"({"type":"object"})");  // none given: any object
}

TEST(Tools, EveryMalformedShapeIsOneErrorOnTheToolsField) {
  EXPECT_EQ(tools_error(R"({"type": "function"})"),
            FieldAndMessage("tools", "'tools' must be an array of function definitions"));
  EXPECT_EQ(tools_error(R"([{"type": "retrieval"}])").second,
            "every tool must be {\"type\": \"function\", \"function\": {\"name\": …}}");
  EXPECT_EQ(tools_error(R"([{"type": "function", "function": {"name": ""}}])").second,
            "every tool function needs a non-empty string 'name'");
  EXPECT_EQ(tools_error(R"([{"type": "function", "function": {"name": "f", "parameters": [1]}}])").second,
            "the parameters of tool 'f' must be a JSON Schema object");
  EXPECT_EQ(tools_error(R"([{"type": "function", "function": {"name": "f", "parameters": [1]}}])").first, "tools");
}

TEST(Tools, ChoiceTextNamesAModeOrAFunction) {
  EXPECT_EQ(ToolChoice::from_text("auto").mode, ToolChoice::Mode::kAuto);
  EXPECT_EQ(ToolChoice::from_text("none").mode, ToolChoice::Mode::kNone);
  EXPECT_EQ(ToolChoice::from_text("required").mode, ToolChoice::Mode::kRequired);
  const ToolChoice named = ToolChoice::from_text("weather");
  EXPECT_EQ(named.mode, ToolChoice::Mode::kFunction);
  EXPECT_EQ(named.function, "weather");
  EXPECT_FALSE(ToolChoice::from_text("none").offers_tools());
  EXPECT_TRUE(ToolChoice::from_text("auto").offers_tools());
  EXPECT_FALSE(ToolChoice::from_text("auto").forces_call());
  EXPECT_TRUE(named.forces_call());
  EXPECT_TRUE(ToolChoice::from_text("required").forces_call());
}

TEST(Tools, ForcedFunctionsFollowTheChoice) {
  const std::vector<ToolFunction> functions = {{"weather", ordered_json{{"type", "object"}}},
                                               {"time", ordered_json{{"type", "object"}}}};
  EXPECT_TRUE(forced_functions(functions, ToolChoice::from_text("auto")).empty());
  EXPECT_TRUE(forced_functions(functions, ToolChoice::from_text("none")).empty());
  EXPECT_EQ(forced_functions(functions, ToolChoice::from_text("required")).size(), 2u);
  const std::vector<ToolFunction> named = forced_functions(functions, ToolChoice::from_text("time"));
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].name, "time");
  try {
    forced_functions(functions, ToolChoice::from_text("fly"));
    ADD_FAILURE() << "a function that is not offered was forced";
  } catch (const RequestError& error) {
    EXPECT_EQ(error.field(), "tool_choice");
    EXPECT_STREQ(error.what(), "no such function among the tools");
  }
}

}  // namespace
}  // namespace minigen
