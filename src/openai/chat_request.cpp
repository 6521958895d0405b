#include "openai/chat_request.h"

#include "core/error.h"
#include "core/python_json.h"

namespace minigen {
namespace {

using nlohmann::ordered_json;

std::string string_or_empty(const ordered_json& object, const char* key) {
  const auto field = object.find(key);
  return field != object.end() && field->is_string() ? field->get<std::string>() : std::string();
}

// The template's `if tool_call.function` takes the wrapper when it is there and not empty.
ChatToolCall tool_call_from_json(const ordered_json& call, const std::string& where) {
  if (!call.is_object()) throw Error(where + " must be an object");
  const auto wrapped = call.find("function");
  const bool has_function = wrapped != call.end() && !wrapped->is_null() && !wrapped->empty();
  const ordered_json& function = has_function ? *wrapped : call;
  if (!function.is_object()) throw Error(where + ".function must be an object");
  const auto name = function.find("name");
  if (name == function.end() || !name->is_string()) throw Error(where + " needs a string \"name\"");
  const auto arguments = function.find("arguments");
  if (arguments == function.end() || arguments->is_null()) throw Error(where + " needs \"arguments\"");
  return {name->get<std::string>(),
          arguments->is_string() ? arguments->get<std::string>() : python_json_dumps(*arguments)};
}

ChatMessage message_from_json(const ordered_json& message, const std::string& where) {
  if (!message.is_object()) throw Error(where + " must be an object");
  const auto role = message.find("role");
  if (role == message.end() || !role->is_string()) throw Error(where + " needs a string \"role\"");
  ChatMessage chat{role->get<std::string>(), string_or_empty(message, "content")};
  if (const auto reasoning = message.find("reasoning_content"); reasoning != message.end() && reasoning->is_string()) {
    chat.reasoning_content = reasoning->get<std::string>();
  }
  if (const auto calls = message.find("tool_calls"); calls != message.end() && !calls->is_null()) {
    if (!calls->is_array()) throw Error(where + ".tool_calls must be an array");
    for (std::size_t i = 0; i < calls->size(); ++i) {
      chat.tool_calls.push_back(tool_call_from_json((*calls)[i], where + ".tool_calls[" + std::to_string(i) + "]"));
    }
  }
  return chat;
}

bool flag_is_true(const ordered_json& object, const char* key) {
  const auto field = object.find(key);
  return field != object.end() && field->is_boolean() && field->get<bool>();
}

}  // namespace

ChatConversation chat_conversation_from_json(const ordered_json& messages, const ordered_json& tools) {
  if (!messages.is_array()) throw Error("\"messages\" must be an array");
  ChatConversation conversation;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    conversation.messages.push_back(message_from_json(messages[i], "messages[" + std::to_string(i) + "]"));
  }
  if (!tools.is_null()) {
    if (!tools.is_array()) throw Error("\"tools\" must be an array");
    for (const ordered_json& tool : tools) conversation.tools.push_back(python_json_dumps(tool));
  }
  return conversation;
}

bool open_thinking_requested(const ordered_json& request) {
  if (!request.is_object()) return false;
  if (flag_is_true(request, "open_thinking")) return true;
  const auto kwargs = request.find("chat_template_kwargs");
  return kwargs != request.end() && kwargs->is_object() &&
         (flag_is_true(*kwargs, "open_thinking") || flag_is_true(*kwargs, "enable_thinking"));
}

}  // namespace minigen
