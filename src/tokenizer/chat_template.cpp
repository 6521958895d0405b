#include "tokenizer/chat_template.h"

#include "core/error.h"

namespace minigen {
namespace {

constexpr std::string_view kTurnStart = "<|im_start|>";
constexpr std::string_view kTurnEnd = "<|im_end|>\n";
constexpr std::string_view kEmptyThinkBlock = "<think>\n\n</think>\n\n";
constexpr std::string_view kOpenThinkBlock = "<think>\n";
// MiniMind2's template opens every conversation that has no system message with this one.
constexpr std::string_view kMiniMind2DefaultSystem = "You are a helpful assistant";
// The system turn's tools block around the tool lines, as minimind-3 was trained to read it.
constexpr std::string_view kToolsHeader =
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
constexpr std::string_view kToolsFooter =
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
    "<args-json-object>}\n</tool_call>";

// The turns as parts: the template's own text is markup (its added tokens are matched), what the request supplied is
// plain. Parts point into the messages, the options and the constants here.
class ChatParts {
 public:
  void markup(std::string_view text) { parts_.push_back({text, true}); }
  void plain(std::string_view text) { parts_.push_back({text, false}); }
  // <|im_start|>ROLE\nCONTENT<|im_end|>\n, the content as plain text (added tokens typed in it are not matched).
  void turn(std::string_view role, std::string_view content);
  std::vector<Tokenizer::TextPart> take() { return std::move(parts_); }

 private:
  std::vector<Tokenizer::TextPart> parts_;
};

void ChatParts::turn(std::string_view role, std::string_view content) {
  markup(kTurnStart);
  markup(role);
  markup("\n");
  plain(content);
  markup(kTurnEnd);
}

// Python's str.strip('\n'), lstrip('\n'), rstrip('\n'): the template trims newlines only, never spaces.
std::string_view lstrip_newlines(std::string_view text) {
  const std::size_t first = text.find_first_not_of('\n');
  return first == std::string_view::npos ? std::string_view() : text.substr(first);
}
std::string_view rstrip_newlines(std::string_view text) {
  const std::size_t last = text.find_last_not_of('\n');
  return last == std::string_view::npos ? std::string_view() : text.substr(0, last + 1);
}
std::string_view strip_newlines(std::string_view text) { return rstrip_newlines(lstrip_newlines(text)); }

struct AssistantText {
  std::string_view reasoning;  // before the template's strip('\n')
  std::string_view reply;      // before its lstrip('\n'); whether it is empty decides the first tool call's newline
};

// reasoning_content when given; else a think block written into the content: the reasoning is what precedes the
// first "</think>" (after the last "<think>" there), the reply what follows the last "</think>".
AssistantText split_assistant_text(const ChatMessage& message) {
  const std::string_view content = message.content;
  if (message.reasoning_content) return {*message.reasoning_content, content};
  constexpr std::string_view kClose = "</think>";
  constexpr std::string_view kOpen = "<think>";
  const std::size_t first_close = content.find(kClose);
  if (first_close == std::string_view::npos) return {{}, content};
  std::string_view reasoning = rstrip_newlines(content.substr(0, first_close));
  if (const std::size_t open = reasoning.rfind(kOpen); open != std::string_view::npos) {
    reasoning = reasoning.substr(open + kOpen.size());
  }
  const std::size_t last_close = content.rfind(kClose);
  return {lstrip_newlines(reasoning), lstrip_newlines(content.substr(last_close + kClose.size()))};
}

void check_role(const ChatMessage& message) {
  if (message.role != "system" && message.role != "user" && message.role != "assistant" && message.role != "tool") {
    throw Error("unknown chat role \"" + message.role + "\"; expected system, user, assistant or tool");
  }
}

void add_minimind3_system_turn(ChatParts& parts, std::span<const ChatMessage> messages,
                               const ChatPromptOptions& options) {
  const bool leading_system = !messages.empty() && messages.front().role == "system";
  const bool tools = !options.tools.empty();
  if (!leading_system && !tools) return;
  parts.markup(kTurnStart);
  parts.markup("system\n");
  if (leading_system) {
    parts.plain(messages.front().content);
    if (tools) parts.markup("\n\n");
  }
  if (tools) {
    parts.markup(kToolsHeader);
    for (const std::string& tool : options.tools) {
      parts.markup("\n");
      parts.plain(tool);
    }
    parts.markup(kToolsFooter);
  }
  parts.markup(kTurnEnd);
}

void add_minimind3_assistant_turn(ChatParts& parts, const ChatMessage& message) {
  const AssistantText text = split_assistant_text(message);
  parts.markup(kTurnStart);
  parts.markup("assistant\n<think>\n");
  parts.plain(strip_newlines(text.reasoning));
  parts.markup("\n</think>\n\n");
  parts.plain(lstrip_newlines(text.reply));
  for (std::size_t i = 0; i < message.tool_calls.size(); ++i) {
    // Calls go on lines of their own: after the reply when there is one (even a reply of newlines only, which the
    // template has already trimmed away), and after each other.
    if (i > 0 || !text.reply.empty()) parts.markup("\n");
    parts.markup("<tool_call>\n{\"name\": \"");
    parts.plain(message.tool_calls[i].name);
    parts.markup("\", \"arguments\": ");
    parts.plain(message.tool_calls[i].arguments);
    parts.markup("}\n</tool_call>");
  }
  parts.markup(kTurnEnd);
}

std::vector<Tokenizer::TextPart> minimind3_parts(std::span<const ChatMessage> messages,
                                                 const ChatPromptOptions& options, ChatParts& parts) {
  add_minimind3_system_turn(parts, messages, options);
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& message = messages[i];
    check_role(message);
    if (message.role == "assistant") {
      add_minimind3_assistant_turn(parts, message);
    } else if (message.role == "tool") {
      // A run of tool results shares one user turn.
      if (i == 0 || messages[i - 1].role != "tool") {
        parts.markup(kTurnStart);
        parts.markup("user");
      }
      parts.markup("\n<tool_response>\n");
      parts.plain(message.content);
      parts.markup("\n</tool_response>");
      if (i + 1 == messages.size() || messages[i + 1].role != "tool") parts.markup(kTurnEnd);
    } else if (i > 0 || message.role != "system") {  // a leading system message is in the system turn already
      parts.turn(message.role, message.content);
    }
  }
  if (options.add_generation_prompt) {
    parts.markup(kTurnStart);
    parts.markup("assistant\n");
    parts.markup(options.open_thinking ? kOpenThinkBlock : kEmptyThinkBlock);
  }
  return parts.take();
}

std::vector<Tokenizer::TextPart> minimind2_parts(std::span<const ChatMessage> messages,
                                                 const ChatPromptOptions& options, ChatParts& parts) {
  if (!options.tools.empty()) throw Error("MiniMind2's chat template has no tools");
  if (messages.empty() || messages.front().role != "system") {
    parts.markup(kTurnStart);
    parts.markup("system\n");
    parts.markup(kMiniMind2DefaultSystem);
    parts.markup(kTurnEnd);
  }
  for (const ChatMessage& message : messages) {
    check_role(message);
    if (message.role == "tool" || !message.tool_calls.empty()) {
      throw Error("MiniMind2's chat template has no tool calls or tool messages");
    }
    parts.turn(message.role, message.content);
  }
  if (options.add_generation_prompt) {
    parts.markup(kTurnStart);
    parts.markup("assistant\n");
  }
  return parts.take();
}

std::vector<Tokenizer::TextPart> chat_parts(std::span<const ChatMessage> messages, const ChatPromptOptions& options,
                                            ChatFormat format, ChatParts& parts) {
  return format == ChatFormat::kMiniMind2 ? minimind2_parts(messages, options, parts)
                                          : minimind3_parts(messages, options, parts);
}

ChatPromptOptions options_without_tools(bool add_generation_prompt, bool enable_thinking) {
  ChatPromptOptions options;
  options.add_generation_prompt = add_generation_prompt;
  options.open_thinking = enable_thinking;
  return options;
}

}  // namespace

ChatFormatChoice recognise_chat_template(std::string_view chat_template) {
  if (chat_template.empty()) {
    return {ChatFormat::kMiniMind3, "ChatML in the minimind-3 form (the tokenizer has no chat_template)",
            "minimind-3 形式的 ChatML（分词器没有 chat_template）"};
  }
  if (chat_template.find(kMiniMind2DefaultSystem) != std::string_view::npos) {
    return {ChatFormat::kMiniMind2,
            "MiniMind2's template (default system turn \"You are a helpful assistant\", no think block)",
            "MiniMind2 的模板（默认系统轮 \"You are a helpful assistant\"，没有 think 块）"};
  }
  if (chat_template.find("<think>") != std::string_view::npos) {
    return {ChatFormat::kMiniMind3,
            "minimind-3's template (generation prompt with the empty think block `<think>\\n\\n</think>\\n\\n`)",
            "minimind-3 的模板（生成提示带空的 think 块 `<think>\\n\\n</think>\\n\\n`）"};
  }
  return {ChatFormat::kMiniMind3, "ChatML in the minimind-3 form (the tokenizer's chat_template was not recognised)",
          "minimind-3 形式的 ChatML（没有认出分词器的 chat_template）"};
}

std::string render_chat(std::span<const ChatMessage> messages, const ChatPromptOptions& options, ChatFormat format) {
  ChatParts parts;
  std::string prompt;
  for (const Tokenizer::TextPart& part : chat_parts(messages, options, format, parts)) prompt += part.text;
  return prompt;
}

std::vector<int> encode_chat(const Tokenizer& tokenizer, std::span<const ChatMessage> messages,
                             const ChatPromptOptions& options) {
  const ChatFormat format = recognise_chat_template(tokenizer.chat_template()).format;
  ChatParts parts;
  return tokenizer.encode_parts(chat_parts(messages, options, format, parts));
}

std::string render_chatml(std::span<const ChatMessage> messages, bool add_generation_prompt, bool enable_thinking,
                          ChatFormat format) {
  return render_chat(messages, options_without_tools(add_generation_prompt, enable_thinking), format);
}

std::vector<int> encode_chatml(const Tokenizer& tokenizer, std::span<const ChatMessage> messages,
                               bool add_generation_prompt, bool enable_thinking) {
  return encode_chat(tokenizer, messages, options_without_tools(add_generation_prompt, enable_thinking));
}

std::vector<int> encode_base_prompt(const Tokenizer& tokenizer, std::string_view text) {
  std::vector<int> ids{tokenizer.bos_id()};
  const std::vector<int> text_ids = tokenizer.encode(text);
  ids.insert(ids.end(), text_ids.begin(), text_ids.end());
  return ids;
}

}  // namespace minigen
