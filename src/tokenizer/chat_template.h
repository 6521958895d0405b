#pragma once
// MiniMind's prompt formats. Chat models see ChatML turns (§4 of the spec); the assistant turn always carries a think
// block, empty unless thinking is on. Base (pretrain) models see bos followed by raw text.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/bpe_tokenizer.h"

namespace minigen {

// One call an assistant turn makes: rendered as <tool_call>\n{"name": "NAME", "arguments": ARGUMENTS}\n</tool_call>.
struct ChatToolCall {
  std::string name;
  // The JSON text written after "arguments": an OpenAI request's string as it is, an object as Python's json.dumps
  // spells it (core/python_json.h), since that is what the template does with each.
  std::string arguments;
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant" or "tool" (a tool's result)
  std::string content;
  // Assistant turns: the text inside the think block. When absent, a think block written into the content
  // ("<think>…</think>answer") is split off the way minimind-3's template does it.
  std::optional<std::string> reasoning_content = std::nullopt;
  std::vector<ChatToolCall> tool_calls = {};  // assistant turns
};

// What a request renders besides its messages.
struct ChatPromptOptions {
  // Each tool definition (an OpenAI {"type": "function", "function": {...}} object) as Python's json.dumps spells
  // it, in the request's order; none means no tools block in the system turn.
  std::vector<std::string> tools;
  bool add_generation_prompt = true;
  // The generation prompt opens the think block ("<think>\n") instead of closing an empty one. minimind-3's
  // template calls it open_thinking; MiniMind's server also takes chat_template_kwargs.enable_thinking for it.
  bool open_thinking = false;
};

// The chat formats minigen renders. A tokenizer_config.json carries its template as Jinja, which minigen does not
// run; it recognises MiniMind's templates by their fixed text and renders the matching format in C++.
enum class ChatFormat {
  kMiniMind3,  // minimind-3 and minigen's own: assistant turns carry a think block; no default system turn
  kMiniMind2,  // MiniMind2: a default system turn ("You are a helpful assistant") when the first message is not a
               // system message; assistant turns are plain; the generation prompt is "<|im_start|>assistant\n" alone
};

struct ChatFormatChoice {
  ChatFormat format = ChatFormat::kMiniMind3;
  std::string description;     // which template was recognised, for reports ("MiniMind2's template (…)")
  std::string description_zh;  // the same in Chinese, for the lab's --lang zh report
};

// Recognises a chat_template: MiniMind2's by its default system message, minimind-3's (and minigen's) by the think
// block; an empty or unrecognised template falls back to the minimind-3 form and says so in the description.
ChatFormatChoice recognise_chat_template(std::string_view chat_template);

// Renders the conversation as minimind-3's chat_template does, byte for byte (tests/data/chat_template holds the
// template's own renderings):
//   system turn  <|im_start|>system\n{first message if it is a system one}<|im_end|>\n, with, when there are tools,
//                "\n\n" (after a system message) and the "# Tools" block: one tool per line inside <tools></tools>
//                and the instruction to answer with <tool_call> tags; no system turn without either
//   system       (not first) <|im_start|>system\n{content}<|im_end|>\n
//   user         <|im_start|>user\n{content}<|im_end|>\n
//   assistant    <|im_start|>assistant\n<think>\n{reasoning}\n</think>\n\n{content}, then each tool call as
//                <tool_call>\n{"name": …, "arguments": …}\n</tool_call> on its own line, then <|im_end|>\n — every
//                assistant turn keeps its reasoning (minimind-3 drops none, unlike Qwen3's template)
//   tool         \n<tool_response>\n{content}\n</tool_response> inside one user turn per run of tool messages
// then, if add_generation_prompt, "<|im_start|>assistant\n" followed by "<think>\n" (thinking on: the model writes
// its reasoning) or "<think>\n\n</think>\n\n" (thinking off: an empty think block, what evaluation uses).
// Throws minigen::Error for any other role (the template would drop the message silently).
// MiniMind2's form renders system, user and assistant content without think blocks, after its default system turn,
// ignores open_thinking and reasoning (its template has neither), and refuses tools, tool calls and tool messages.
std::string render_chat(std::span<const ChatMessage> messages, const ChatPromptOptions& options,
                        ChatFormat format = ChatFormat::kMiniMind3);

// The ids of render_chat's text, with everything the request supplied (content, reasoning, tool definitions, call
// names and arguments) encoded as plain text: added tokens inside it are not matched ("<|im_end|><|im_start|>system"
// typed by a user stays text). Equal to encode(render_chat(...)) whenever no such text spells an added token. The
// format is the one the tokenizer's chat_template is recognised as.
std::vector<int> encode_chat(const Tokenizer& tokenizer, std::span<const ChatMessage> messages,
                             const ChatPromptOptions& options);

// render_chat and encode_chat without tools, as the CLI and the lab call them.
std::string render_chatml(std::span<const ChatMessage> messages, bool add_generation_prompt, bool enable_thinking,
                          ChatFormat format = ChatFormat::kMiniMind3);
std::vector<int> encode_chatml(const Tokenizer& tokenizer, std::span<const ChatMessage> messages,
                               bool add_generation_prompt, bool enable_thinking);

// The same format as minigen's own Jinja template (src/tokenizer/chat_template.jinja, embedded at build time), which
// the tokenizer writer puts into tokenizer_config.json for HF `transformers`' apply_chat_template; thinking is
// switched on by passing open_thinking=True (minimind-3's name) or enable_thinking=True.
std::string_view chatml_jinja_template();

// bos followed by the encoded text: how a base model is prompted.
std::vector<int> encode_base_prompt(const Tokenizer& tokenizer, std::string_view text);

}  // namespace minigen
