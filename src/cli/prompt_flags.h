#pragma once
// How a prompt is given: raw text for a base model (-p, -f) or a user message rendered as ChatML (--chat).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "tokenizer/bpe_tokenizer.h"

namespace minigen::cli {

struct PromptFlags {
  std::string text;       // -p: base-model form, bos + text
  std::string chat;       // --chat: one user message, ChatML with the generation prompt
  std::string file;       // -f: base-model form from a file
  std::string system;     // --system: a system message for --chat
  bool thinking = false;  // --think: open a <think> block instead of the empty one

  void add_to(CLI::App& command);
  std::vector<int> encode(const Tokenizer& tokenizer) const;
};

}  // namespace minigen::cli
