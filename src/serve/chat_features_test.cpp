// Over real HTTP, the chat features of minimind-3's template and MiniMind's server: thinking, tools with tool_choice,
// structured output by the grammar stage, and history with tool calls and tool responses — whole and streamed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "openai/chat_request.h"
#include "serve/live_server_test_util.h"
#include "tokenizer/chat_template.h"

namespace minigen {
namespace {

using nlohmann::json;
using testing::LiveServer;
using testing::post;
using testing::stream_chunks;

const json kWeatherTool = json::parse(R"({"type": "function", "function": {"name": "get_weather",
  "description": "Current weather of a city", "parameters": {"type": "object", "properties": {
  "city": {"type": "string", "maxLength": 12}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
  "required": ["city", "unit"], "additionalProperties": false}}})");
const json kTimeTool = json::parse(R"({"type": "function", "function": {"name": "get_time",
  "parameters": {"type": "object", "properties": {"zone": {"type": "string", "enum": ["UTC", "CET"]}},
  "required": ["zone"]}}})");

json user(const std::string& text) { return json::array({{{"role", "user"}, {"content", text}}}); }

// The arguments of a get_weather call: a JSON object with exactly city (≤ 12 characters) and a valid unit.
void expect_valid_weather_arguments(const std::string& arguments) {
  const json parsed = json::parse(arguments, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << arguments;
  EXPECT_EQ(parsed.size(), 2u) << arguments;
  ASSERT_TRUE(parsed.contains("city") && parsed["city"].is_string()) << arguments;
  EXPECT_LE(parsed["city"].get<std::string>().size(), 12u * 4) << arguments;  // ≤ 12 code points
  ASSERT_TRUE(parsed.contains("unit") && parsed["unit"].is_string()) << arguments;
  EXPECT_TRUE(parsed["unit"] == "celsius" || parsed["unit"] == "fahrenheit") << arguments;
}

// The shipped SFT model learned empty think blocks: opened, it closes the block at once ("\n</think>\n\n"), so the
// reasoning is empty and the rest is content. With </think> banned by logit_bias it cannot close it: all is reasoning.
TEST(ChatFeatures, ThinkingOpensTheThinkBlockAndItsTextIsReasoningContent) {
  LiveServer server;
  ASSERT_EQ(server.loaded.tokenizer->encode("</think>").size(), 1u);
  const json banned = {{std::to_string(server.loaded.tokenizer->encode("</think>").front()), -100}};
  const json plain =
      post(server, "/v1/chat/completions", {{"messages", user("Hello")}, {"temperature", 0}, {"max_tokens", 12}}, 200);
  EXPECT_FALSE(plain["choices"][0]["message"].contains("reasoning_content"));
  for (const json& flag : {json{{"open_thinking", true}}, json{{"chat_template_kwargs", {{"enable_thinking", true}}}},
                           json{{"chat_template_kwargs", {{"open_thinking", true}}}}}) {
    json body = {{"messages", user("Hello")}, {"temperature", 0}, {"max_tokens", 12}, {"ignore_eos", true}};
    body.update(flag);
    const json closed = post(server, "/v1/chat/completions", body, 200);
    // "<think>\n" instead of "<think>\n\n</think>\n\n": the prompt is shorter by what closing the block costs.
    const std::vector<ChatMessage> messages = {{"user", "Hello"}};
    ChatPromptOptions options;
    options.open_thinking = true;
    EXPECT_EQ(closed["usage"]["prompt_tokens"], encode_chat(*server.loaded.tokenizer, messages, options).size());
    EXPECT_LT(closed["usage"]["prompt_tokens"], plain["usage"]["prompt_tokens"]);
    const json& message = closed["choices"][0]["message"];
    EXPECT_FALSE(message.contains("reasoning_content")) << message.dump();
    EXPECT_EQ(message["content"].get<std::string>().find("think>"), std::string::npos) << message.dump();
    EXPECT_FALSE(message["content"].get<std::string>().empty());

    body["logit_bias"] = banned;
    const json open = post(server, "/v1/chat/completions", body, 200);
    EXPECT_FALSE(open["choices"][0]["message"]["reasoning_content"].get<std::string>().empty()) << open.dump();
    EXPECT_EQ(open["choices"][0]["message"]["content"], "") << open.dump();
  }
  // Streamed, the deltas are reasoning_content and add up to the same text.
  json body = {{"messages", user("Hello")}, {"temperature", 0},     {"max_tokens", 12},
               {"ignore_eos", true},        {"logit_bias", banned}, {"open_thinking", true}};
  const json whole = post(server, "/v1/chat/completions", body, 200);
  body["stream"] = true;
  std::string reasoning;
  for (const json& chunk : stream_chunks(server, "/v1/chat/completions", body)) {
    const json& delta = chunk["choices"][0]["delta"];
    EXPECT_FALSE(delta.contains("content")) << delta.dump();
    reasoning += delta.value("reasoning_content", "");
  }
  EXPECT_EQ(reasoning, whole["choices"][0]["message"]["reasoning_content"]);
  post(server, "/v1/chat/completions", {{"messages", user("Hi")}, {"chat_template_kwargs", {{"think", true}}}}, 400);
  post(server, "/v1/chat/completions", {{"messages", user("Hi")}, {"open_thinking", "yes"}}, 400);
}

TEST(ChatFeatures, RequiredAndNamedToolChoiceGiveAWellFormedCallEvenFromTheTinyModel) {
  LiveServer server;
  for (int seed = 1; seed <= 6; ++seed) {
    const json answer =
        post(server, "/v1/chat/completions",
             {{"messages", user("What's the weather in Paris?")},
              {"tools", {kWeatherTool, kTimeTool}},
              {"tool_choice",
               seed % 2 ? json("required") : json{{"type", "function"}, {"function", {{"name", "get_weather"}}}}},
              {"temperature", 1.0},
              {"seed", seed},
              {"max_tokens", 200},
              {"logprobs", true}},
             200);
    const json& choice = answer["choices"][0];
    ASSERT_EQ(choice["finish_reason"], "tool_calls") << answer.dump();
    const json& calls = choice["message"]["tool_calls"];
    ASSERT_EQ(calls.size(), 1u) << answer.dump();
    EXPECT_TRUE(choice["message"]["content"].is_null());
    EXPECT_EQ(calls[0]["type"], "function");
    EXPECT_EQ(calls[0]["id"].get<std::string>().rfind("call_chatcmpl-", 0), 0u);
    const std::string name = calls[0]["function"]["name"];
    if (seed % 2 == 0) {
      EXPECT_EQ(name, "get_weather");
    }
    if (name == "get_weather") {
      expect_valid_weather_arguments(calls[0]["function"]["arguments"]);
    } else {
      ASSERT_EQ(name, "get_time");
      const json arguments = json::parse(calls[0]["function"]["arguments"].get<std::string>());
      EXPECT_TRUE(arguments["zone"] == "UTC" || arguments["zone"] == "CET");
    }
    // Every step was masked: the logprobs say how many ids the grammar allowed, 1 where the text was forced.
    bool forced_step = false;
    for (const json& entry : choice["logprobs"]["content"]) {
      ASSERT_TRUE(entry.contains("grammar_allowed"));
      EXPECT_GE(entry["grammar_allowed"].get<int>(), 1);
      EXPECT_GE(entry["grammar_allowed"].get<int>(), entry["kept_candidates"].get<int>());
      forced_step = forced_step || entry["grammar_allowed"] == 1;
    }
    EXPECT_TRUE(forced_step);
  }
  // Streamed: the call arrives as one tool_calls delta with its index, then finish_reason tool_calls.
  const std::vector<json> chunks = stream_chunks(server, "/v1/chat/completions",
                                                 {{"messages", user("Weather in Rome?")},
                                                  {"tools", {kWeatherTool}},
                                                  {"tool_choice", "required"},
                                                  {"seed", 4},
                                                  {"max_tokens", 200},
                                                  {"stream", true}});
  json streamed_calls = json::array();
  for (const json& chunk : chunks) {
    const json& delta = chunk["choices"][0]["delta"];
    if (delta.contains("tool_calls"))
      streamed_calls.insert(streamed_calls.end(), delta["tool_calls"].begin(), delta["tool_calls"].end());
  }
  ASSERT_EQ(streamed_calls.size(), 1u);
  EXPECT_EQ(streamed_calls[0]["index"], 0);
  EXPECT_EQ(streamed_calls[0]["function"]["name"], "get_weather");
  expect_valid_weather_arguments(streamed_calls[0]["function"]["arguments"]);
  EXPECT_EQ(chunks.back()["choices"][0]["finish_reason"], "tool_calls");
}

TEST(ChatFeatures, ToolChoiceNoneLeavesTheToolsOutAndBadToolRequestsAre400) {
  LiveServer server;
  const json with_none =
      post(server, "/v1/chat/completions",
           {{"messages", user("Hi")}, {"tools", {kWeatherTool}}, {"tool_choice", "none"}, {"max_tokens", 4}}, 200);
  const json without = post(server, "/v1/chat/completions", {{"messages", user("Hi")}, {"max_tokens", 4}}, 200);
  EXPECT_EQ(with_none["usage"]["prompt_tokens"], without["usage"]["prompt_tokens"]);
  const json offered = post(server, "/v1/chat/completions",
                            {{"messages", user("Hi")}, {"tools", {kWeatherTool}}, {"max_tokens", 4}}, 200);
  EXPECT_GT(offered["usage"]["prompt_tokens"], without["usage"]["prompt_tokens"]);  // the # Tools system turn

  const auto expect_400 = [&](const json& extra, const std::string& words) {
    json body = {{"messages", user("Hi")}, {"max_tokens", 4}};
    body.update(extra);
    const json error = post(server, "/v1/chat/completions", body, 400)["error"];
    EXPECT_NE(error["message"].get<std::string>().find(words), std::string::npos) << error.dump();
  };
  expect_400({{"tool_choice", "required"}}, "no 'tools'");
  expect_400({{"tools", {kWeatherTool}}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "fly"}}}}}},
             "'fly'");
  expect_400({{"tools", {kWeatherTool}}, {"tool_choice", "always"}}, "'always'");
  expect_400({{"tools", json::array({{{"type", "retrieval"}}})}}, "\"type\": \"function\"");
  json pattern_tool = kWeatherTool;
  pattern_tool["function"]["parameters"]["properties"]["city"]["pattern"] = "^[A-Z]";
  expect_400({{"tools", {pattern_tool}}, {"tool_choice", "required"}}, "pattern");
  expect_400({{"tools", {kWeatherTool}}, {"tool_choice", "required"}, {"response_format", {{"type", "json_object"}}}},
             "cannot be combined");
}

TEST(ChatFeatures, HistoryWithToolCallsAndToolResponsesRendersAsTheTemplate) {
  LiveServer server;
  const json messages = json::parse(R"([
    {"role": "system", "content": "You answer briefly."},
    {"role": "user", "content": "Weather in Beijing?"},
    {"role": "assistant", "content": null, "reasoning_content": "use the tool",
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\": \"北京\", \"unit\": \"celsius\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp_c\": 21}"},
    {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "sunny"}]}])");
  const json answer =
      post(server, "/v1/chat/completions", {{"messages", messages}, {"tools", {kWeatherTool}}, {"max_tokens", 4}}, 200);
  nlohmann::ordered_json ordered_messages = nlohmann::ordered_json::parse(messages.dump());
  ordered_messages[4]["content"] = "sunny";  // text parts are joined before rendering
  const ChatConversation conversation =
      chat_conversation_from_json(ordered_messages, nlohmann::ordered_json::parse("[" + kWeatherTool.dump() + "]"));
  ChatPromptOptions options;
  options.tools = conversation.tools;
  const std::vector<int> expected = encode_chat(*server.loaded.tokenizer, conversation.messages, options);
  EXPECT_EQ(answer["usage"]["prompt_tokens"], expected.size());
  const std::string rendered = render_chat(conversation.messages, options);
  EXPECT_NE(rendered.find("<tool_response>\n{\"temp_c\": 21}\n</tool_response>\n<tool_response>\nsunny\n"),
            std::string::npos)
      << rendered;
}

TEST(ChatFeatures, ResponseFormatKeepsEveryAnswerInsideTheSchema) {
  LiveServer server;
  const json schema = json::parse(R"({"type": "object", "properties": {
    "word": {"type": "string", "minLength": 1, "maxLength": 10},
    "count": {"type": "integer"}, "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3}},
    "required": ["word", "count", "tags"], "additionalProperties": false})");
  for (int seed = 1; seed <= 8; ++seed) {
    const bool streamed = seed % 2 == 0;
    const json body = {
        {"messages", user("Describe a river as JSON.")},
        {"response_format",
         {{"type", "json_schema"}, {"json_schema", {{"name", "river"}, {"schema", schema}, {"strict", true}}}}},
        {"temperature", 1.0},
        {"seed", seed},
        {"max_tokens", 120},
        {"stream", streamed}};
    std::string text;
    std::string finish;
    if (streamed) {
      for (const json& chunk : stream_chunks(server, "/v1/chat/completions", body)) {
        text += chunk["choices"][0]["delta"].value("content", "");
        if (!chunk["choices"][0]["finish_reason"].is_null()) finish = chunk["choices"][0]["finish_reason"];
      }
    } else {
      const json answer = post(server, "/v1/chat/completions", body, 200);
      text = answer["choices"][0]["message"]["content"];
      finish = answer["choices"][0]["finish_reason"];
    }
    ASSERT_EQ(finish, "stop") << text;
    const json parsed = json::parse(text, nullptr, false);
    ASSERT_TRUE(parsed.is_object()) << text;
    EXPECT_EQ(parsed.size(), 3u) << text;
    EXPECT_TRUE(parsed["word"].is_string() && !parsed["word"].get<std::string>().empty()) << text;
    EXPECT_TRUE(parsed["count"].is_number_integer()) << text;
    ASSERT_TRUE(parsed["tags"].is_array()) << text;
    EXPECT_LE(parsed["tags"].size(), 3u) << text;
    for (const json& tag : parsed["tags"]) EXPECT_TRUE(tag == "a" || tag == "b") << text;
  }
  // json_object on the completions endpoint: a free-form object may run past max_tokens (then "length"), but what
  // stops by itself parses.
  int stopped = 0;
  for (int seed = 1; seed <= 6; ++seed) {
    const json object = post(server, "/v1/completions",
                             {{"prompt", "In the beginning"},
                              {"response_format", {{"type", "json_object"}}},
                              {"temperature", 1.0},
                              {"seed", seed},
                              {"max_tokens", 60}},
                             200);
    const std::string text = object["choices"][0]["text"];
    EXPECT_EQ(text.substr(0, 1), "{") << text;
    if (object["choices"][0]["finish_reason"] == "stop") {
      ++stopped;
      EXPECT_TRUE(json::parse(text, nullptr, false).is_object()) << text;
    }
  }
  EXPECT_GT(stopped, 0);
  const json cut =
      post(server, "/v1/chat/completions",
           {{"messages", user("JSON please")},
            {"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "s"}, {"schema", schema}}}}},
            {"max_tokens", 3}},
           200);
  EXPECT_EQ(cut["choices"][0]["finish_reason"], "length");
  json unsupported = schema;
  unsupported["properties"]["word"]["format"] = "email";
  unsupported["minProperties"] = 1;
  const json error =
      post(server, "/v1/chat/completions",
           {{"messages", user("x")},
            {"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "s"}, {"schema", unsupported}}}}}},
           400)["error"];
  EXPECT_NE(error["message"].get<std::string>().find("format"), std::string::npos) << error.dump();
  EXPECT_NE(error["message"].get<std::string>().find("minProperties"), std::string::npos) << error.dump();
  EXPECT_EQ(error["param"], "response_format");
}

}  // namespace
}  // namespace minigen
