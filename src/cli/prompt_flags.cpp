#include "cli/prompt_flags.h"

#include "chat/chat_request.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/json_parse.h"
#include "grammar/token_vocabulary.h"
#include "serve/openai_api.h"
#include "serve/structured_output.h"
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

std::vector<int> encode_chat_turn(const Tokenizer& tokenizer, const std::string& system, const std::string& user,
                                  bool thinking, const nlohmann::ordered_json& tools) {
  std::vector<ChatMessage> messages;
  if (!system.empty()) messages.push_back({"system", system});
  messages.push_back({"user", user});
  ChatPromptOptions options;
  options.open_thinking = thinking;
  if (!tools.is_null()) options.tools = chat_conversation_from_json(nlohmann::ordered_json::array(), tools).tools;
  return encode_chat(tokenizer, messages, options);
}

void check_tools(const nlohmann::ordered_json& tools) {
  try {
    tool_functions(tools);
  } catch (const ApiError& error) {
    throw Error(error.what());
  }
}

std::shared_ptr<const CompiledGrammar> tool_choice_grammar(const nlohmann::ordered_json& tools,
                                                           const std::string& tool_choice, bool thinking,
                                                           const Tokenizer& tokenizer, const ModelConfig& config) {
  if (tool_choice == "auto" || tool_choice == "none") return nullptr;
  try {
    std::vector<ToolFunction> functions = tool_functions(tools);
    if (tool_choice != "required") {
      std::erase_if(functions, [&](const ToolFunction& function) { return function.name != tool_choice; });
      if (functions.empty()) throw Error("no such function among the tools");
    }
    return forced_tool_call_grammar(functions, thinking,
                                    TokenVocabulary::from_tokenizer(tokenizer, config.vocab_size, config.eos_token_id,
                                                                    /*plain_added_tokens_as_text=*/true));
  } catch (const ApiError& error) {
    throw Error(error.what());
  }
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
    check_tools(parsed);
  } catch (const Error& error) {
    throw Error("--tools " + tools_file + ": " + error.what());
  }
  return parsed;
}

std::shared_ptr<const CompiledGrammar> PromptFlags::forced_tool_call(const Tokenizer& tokenizer,
                                                                     const ModelConfig& config) const {
  if (tool_choice == "auto" || tool_choice == "none") return nullptr;
  if (tools_file.empty()) throw Error("--tool-choice " + tool_choice + " needs --tools FILE");
  const nlohmann::ordered_json offered = tools();  // checked here, so that errors below are --tool-choice's
  try {
    return tool_choice_grammar(offered, tool_choice, thinking, tokenizer, config);
  } catch (const Error& error) {
    throw Error("--tool-choice " + tool_choice + ": " + error.what() + " in " + tools_file);
  }
}

std::vector<int> PromptFlags::encode(const Tokenizer& tokenizer) const {
  if (!chat.empty()) return encode_chat_turn(tokenizer, system, chat, thinking, offers_tools() ? tools() : nullptr);
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
