#include "cli/prompt_flags.h"

#include "core/error.h"
#include "core/file_io.h"
#include "tokenizer/chat_template.h"

namespace minigen::cli {

void PromptFlags::add_to(CLI::App& command) {
  auto* text_option = command.add_option("-p,--prompt", text, "raw text to continue (base-model form: bos + text)");
  auto* chat_option = command.add_option("--chat", chat, "a user message, rendered with the ChatML template");
  auto* file_option = command.add_option("-f,--file", file, "read the raw prompt text from a file");
  text_option->excludes(chat_option)->excludes(file_option);
  chat_option->excludes(file_option);
  command.add_option("--system", system, "system message for --chat")->needs(chat_option);
  command.add_flag("--think", thinking, "for --chat: let the model think (open <think> block)")->needs(chat_option);
}

std::vector<int> PromptFlags::encode(const Tokenizer& tokenizer) const {
  if (!chat.empty()) {
    std::vector<ChatMessage> messages;
    if (!system.empty()) messages.push_back({"system", system});
    messages.push_back({"user", chat});
    return encode_chatml(tokenizer, messages, /*add_generation_prompt=*/true, thinking);
  }
  std::string raw = text;
  if (!file.empty()) {
    try {
      raw = read_whole_file(file, kMaxPromptFileBytes, "prompt file");
    } catch (const Error& error) {
      throw Error(std::string("-f/--file: ") + error.what());
    }
  }
  if (raw.empty()) throw Error("give a prompt with -p TEXT, --chat TEXT or -f FILE");
  return encode_base_prompt(tokenizer, raw);
}

}  // namespace minigen::cli
