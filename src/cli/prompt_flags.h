#pragma once
// How a prompt is given: raw text for a base model (-p, -f) or a user message rendered as ChatML (--chat).
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "model/config.h"
#include "tokenizer/bpe_tokenizer.h"

namespace minigen::cli {

// The ids of one user turn (after a system turn when `system` is not empty) with the generation prompt, as --chat
// renders it; `tools`, an OpenAI tools array or null, is offered in the template's tools block in its own key order
// (the template writes each definition as Python's json.dumps does). Throws Error for a malformed tools array.
std::vector<int> encode_chat_turn(const Tokenizer& tokenizer, const std::string& system, const std::string& user,
                                  bool thinking, const nlohmann::ordered_json& tools);

// Checks an OpenAI tools array as the API does; throws Error with the API's message.
void check_tools(const nlohmann::ordered_json& tools);

// tool_choice "required" or a function's name: the grammar that forces one call of a function in `tools` (an OpenAI
// tools array); "auto" and "none": nullptr. Throws Error with the API's message for malformed tools, or naming the
// function that is not there.
std::shared_ptr<const CompiledGrammar> tool_choice_grammar(const nlohmann::ordered_json& tools,
                                                           const std::string& tool_choice, bool thinking,
                                                           const Tokenizer& tokenizer, const ModelConfig& config);

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
  bool offers_tools() const { return !tools_file.empty() && tool_choice != "none"; }
  // With --tool-choice required or NAME: the grammar that forces one well-formed call; otherwise nullptr.
  std::shared_ptr<const CompiledGrammar> forced_tool_call(const Tokenizer& tokenizer, const ModelConfig& config) const;

 private:
  nlohmann::ordered_json tools() const;  // the --tools file in its key order, read and checked
};

}  // namespace minigen::cli
