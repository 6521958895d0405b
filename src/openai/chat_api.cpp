#include "openai/chat_api.h"

#include "core/error.h"
#include "openai/api_error.h"
#include "openai/chat_request.h"
#include "openai/response_format.h"
#include "request/output_grammar.h"
#include "request/reply_fields.h"
#include "request/request_error.h"
#include "request/tools.h"
#include "tokenizer/chat_template.h"

namespace minigen {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// A message's content given as OpenAI's array of content parts: minigen's text-only models take the "text" parts,
// joined in order; any other part type is a 400 that names it.
std::string text_of_parts(const ordered_json& parts) {
  std::string text;
  for (const ordered_json& part : parts) {
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
      throw ApiError(400, "every content part needs a string 'type'", "messages");
    }
    const std::string type = part["type"];
    if (type != "text") {
      throw ApiError(400, "content parts of type '" + type + "' are not supported: this model reads text only",
                     "messages");
    }
    if (!part.contains("text") || !part["text"].is_string()) {
      throw ApiError(400, "a text content part needs a string 'text'", "messages");
    }
    text += part["text"].get<std::string>();
  }
  return text;
}

// The messages with every content-part array joined into its text, and the checks the template leaves out.
ordered_json checked_messages(const ordered_json& body) {
  const auto found = body.find("messages");
  if (found == body.end() || !found->is_array() || found->empty()) {
    throw ApiError(400, "'messages' must be a non-empty array of {role, content}", "messages");
  }
  ordered_json messages = *found;
  for (ordered_json& message : messages) {
    if (!message.is_object() || !message.contains("role") || !message["role"].is_string()) {
      throw ApiError(400, "every message needs a string 'role'", "messages");
    }
    const auto content = message.find("content");
    const bool has_calls = message.contains("tool_calls") && !message["tool_calls"].is_null();
    if (content == message.end() || content->is_null()) {
      if (!(message["role"] == "assistant" && has_calls)) {
        throw ApiError(400, "every message needs a 'content' (null only for an assistant's tool calls)", "messages");
      }
    } else if (content->is_array()) {
      *content = text_of_parts(*content);
    } else if (!content->is_string()) {
      throw ApiError(400, "a message's 'content' must be a string or an array of text parts", "messages");
    }
  }
  return messages;
}

bool checked_flag(const ordered_json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return false;
  if (!found->is_boolean()) throw ApiError(400, std::string("'") + key + "' must be true or false", key);
  return found->get<bool>();
}

// Thinking, as MiniMind's server accepts it: "open_thinking": true, or chat_template_kwargs {"enable_thinking": true}
// or {"open_thinking": true}. The checks here; chat_request.h's open_thinking_requested reads the same fields.
bool thinking_requested(const ordered_json& body) {
  checked_flag(body, "open_thinking");
  if (const auto kwargs = body.find("chat_template_kwargs"); kwargs != body.end() && !kwargs->is_null()) {
    if (!kwargs->is_object()) throw ApiError(400, "'chat_template_kwargs' must be an object", "chat_template_kwargs");
    for (const auto& [key, value] : kwargs->items()) {
      if (key != "enable_thinking" && key != "open_thinking") {
        throw ApiError(400, "'chat_template_kwargs' takes enable_thinking and open_thinking, got '" + key + "'",
                       "chat_template_kwargs");
      }
      if (!value.is_boolean()) {
        throw ApiError(400, "'chat_template_kwargs." + key + "' must be true or false", "chat_template_kwargs");
      }
    }
  }
  return open_thinking_requested(body);
}

// tool_choice: "auto" (default), "none", "required", or {"type": "function", "function": {"name": …}}.
ToolChoice tool_choice_field(const ordered_json& body, const std::vector<ToolFunction>& functions) {
  const auto found = body.find("tool_choice");
  if (found == body.end() || found->is_null()) return {};
  if (found->is_string()) {
    const std::string text = *found;
    const ToolChoice choice = ToolChoice::from_text(text);
    if (choice.mode == ToolChoice::Mode::kFunction) {
      throw ApiError(400, "'tool_choice' must be auto, none, required or a named function, got '" + text + "'",
                     "tool_choice");
    }
    if (choice.mode == ToolChoice::Mode::kRequired && functions.empty()) {
      throw ApiError(400, "'tool_choice' is required but no 'tools' were given", "tool_choice");
    }
    return choice;
  }
  if (!found->is_object() || found->value("type", "") != "function" || !found->contains("function") ||
      !(*found)["function"].is_object() || !(*found)["function"].contains("name") ||
      !(*found)["function"]["name"].is_string()) {
    throw ApiError(400, "a named 'tool_choice' must be {\"type\": \"function\", \"function\": {\"name\": …}}",
                   "tool_choice");
  }
  return {ToolChoice::Mode::kFunction, (*found)["function"]["name"]};
}

// The functions a call must be made to (empty: no call forced), in the API's words when the name is not offered.
std::vector<ToolFunction> forced_functions_of(const std::vector<ToolFunction>& functions, const ToolChoice& choice) {
  try {
    return forced_functions(functions, choice);
  } catch (const RequestError&) {
    throw ApiError(400, "'tool_choice' names function '" + choice.function + "', which is not among the 'tools'",
                   "tool_choice");
  }
}

}  // namespace

ChatPromptRequest parse_chat_prompt(const ordered_json& body, const Tokenizer& tokenizer,
                                    const std::shared_ptr<const TokenVocabulary>& vocabulary) {
  const ordered_json messages = checked_messages(body);
  const auto tools_field = body.find("tools");
  const bool has_tools = tools_field != body.end() && !tools_field->is_null();
  const std::vector<ToolFunction> functions = has_tools ? tool_functions(*tools_field) : std::vector<ToolFunction>();
  const ToolChoice choice = tool_choice_field(body, functions);
  const bool offer_tools = !functions.empty() && choice.offers_tools();
  const std::vector<ToolFunction> forced = forced_functions_of(functions, choice);

  ChatPromptRequest request;
  request.thinking = thinking_requested(body);
  ChatConversation conversation;
  try {
    conversation = chat_conversation_from_json(messages, offer_tools ? *tools_field : ordered_json());
    ChatPromptOptions options;
    options.tools = conversation.tools;
    options.add_generation_prompt = true;
    options.open_thinking = request.thinking;
    request.prompt = encode_chat(tokenizer, conversation.messages, options);
  } catch (const ApiError&) {
    throw;
  } catch (const Error& error) {
    throw ApiError(400, error.what(), "messages");
  }
  const bool minimind3 = recognise_chat_template(tokenizer.chat_template()).format == ChatFormat::kMiniMind3;
  request.reply.prompt_opened_think = request.thinking && minimind3;
  request.reply.tool_calls = offer_tools;
  if (!forced.empty()) {
    request.grammar = server_grammar(forced_tool_call_grammar(forced, request.reply.prompt_opened_think), vocabulary);
  }
  return request;
}

json chat_message(const ParsedReply& reply) {
  json message = {{"role", "assistant"}};
  message["content"] = reply.content.empty() && !reply.tool_calls.empty() ? json() : json(reply.content);
  if (!reply.reasoning_content.empty()) message["reasoning_content"] = reply.reasoning_content;
  if (!reply.tool_calls.empty()) {
    json calls = json::array();
    for (const ParsedToolCall& call : reply.tool_calls) calls.push_back(tool_call_json(call));
    message["tool_calls"] = calls;
  }
  return message;
}

json streamed_tool_call(const ParsedToolCall& call) {
  json entry = tool_call_json(call);
  entry["index"] = call.index;
  return entry;
}

}  // namespace minigen
