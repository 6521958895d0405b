#include "cli/prompt_flags.h"

#include "checkpoint/model_settings.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/json_parse.h"
#include "grammar/token_vocabulary.h"
#include "request/chat_turn.h"
#include "request/output_grammar.h"
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
  command.add_option("--tools", tools_file, "for --chat: a JSON file with OpenAI function definitions (an array)")
      ->needs(chat_option);
  command
      .add_option("--tool-choice", tool_choice,
                  "with --tools: auto (the model may call), none, required or a function name (forces one call)")
      ->capture_default_str();
}

nlohmann::ordered_json PromptFlags::tools() const {
  if (tools_file.empty()) return nullptr;
  constexpr uint64_t kMaxToolsBytes = uint64_t{1} << 20;
  nlohmann::ordered_json parsed;
  const std::string text = [&] {
    try {
      return read_whole_file(tools_file, kMaxToolsBytes, "tools file");
    } catch (const Error& error) {
      throw Error("--tools " + tools_file + ": " + error.what());
    }
  }();
  try {
    parsed = parse_untrusted_json<nlohmann::ordered_json>(text);
  } catch (const Error& error) {
    throw Error("--tools " + tools_file + ": the file " + error.what());
  }
  try {
    tool_functions(parsed);
  } catch (const Error& error) {
    throw Error("--tools " + tools_file + ": " + error.what());
  }
  return parsed;
}

std::shared_ptr<const CompiledGrammar> PromptFlags::forced_tool_call(const Tokenizer& tokenizer,
                                                                     const ModelConfig& config) const {
  const ToolChoice choice = ToolChoice::from_text(tool_choice);
  if (!choice.forces_call()) return nullptr;
  if (tools_file.empty()) throw Error("--tool-choice " + tool_choice + " needs --tools FILE");
  const std::vector<ToolFunction> offered = tool_functions(tools());  // checked here: errors below are --tool-choice's
  try {
    return tool_choice_grammar(offered, choice, thinking,
                               TokenVocabulary::from_tokenizer(tokenizer, config.vocab_size, config.eos_token_id,
                                                               /*plain_added_tokens_as_text=*/true));
  } catch (const Error& error) {
    throw Error("--tool-choice " + tool_choice + ": " + error.what() + " in " + tools_file);
  }
}

std::vector<int> PromptFlags::encode(const Tokenizer& tokenizer) const {
  if (!chat.empty()) return encode_chat_turn(tokenizer, {system, chat, thinking, offers_tools() ? tools() : nullptr});
  std::string raw = text;
  if (!file.empty()) {
    try {
      raw = read_whole_file(resolve_user_file(file), kMaxPromptFileBytes, "prompt file");
    } catch (const Error& error) {
      throw Error(std::string("-f/--file: ") + error.what());
    }
  }
  if (raw.empty()) throw Error("give a prompt with -p TEXT, --chat TEXT or -f FILE");
  return encode_base_prompt(tokenizer, raw);
}

}  // namespace minigen::cli
