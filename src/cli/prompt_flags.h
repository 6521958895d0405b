#pragma once
// How a prompt is given: raw text for a base model (-p, -f) or a user message rendered as ChatML (--chat).
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "model/config.h"
#include "request/tools.h"
#include "tokenizer/bpe_tokenizer.h"

namespace minigen::cli {

struct PromptFlags {
  std::string text;                  // -p: base-model form, bos + text
  std::string chat;                  // --chat: one user message, ChatML with the generation prompt
  std::string file;                  // -f: base-model form from a file
  std::string system;                // --system: a system message for --chat
  bool thinking = false;             // --think: open a <think> block instead of the empty one
  std::string tools_file;            // --tools: OpenAI function definitions (a JSON array) for --chat
  std::string tool_choice = "auto";  // --tool-choice: auto, none, required or a function's name

  void add_to(CLI::App& command);
  std::vector<int> encode(const Tokenizer& tokenizer) const;
  // Whether the prompt offers tools (so <tool_call> blocks in the reply are calls).
  bool offers_tools() const { return !tools_file.empty() && ToolChoice::from_text(tool_choice).offers_tools(); }
  // With --tool-choice required or NAME: the grammar that forces one well-formed call; otherwise nullptr.
  std::shared_ptr<const CompiledGrammar> forced_tool_call(const Tokenizer& tokenizer, const ModelConfig& config) const;

 private:
  nlohmann::ordered_json tools() const;  // the --tools file in its key order, read and checked
};

}  // namespace minigen::cli
