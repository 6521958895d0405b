#pragma once
// Structured output from the command line: --json-schema FILE (a JSON Schema the output must validate against) or
// --json-object (any JSON object). (--json is another thing: it prints the run's result as JSON.)
#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "grammar/compiled_grammar.h"
#include "model/config.h"
#include "tokenizer/bpe_tokenizer.h"

namespace minigen::cli {

struct GrammarFlags {
  std::string json_schema_file;
  bool json_object = false;

  void add_to(CLI::App& command);
  // The grammar every row follows, or nullptr without either flag. Throws minigen::Error naming the flag for an
  // unreadable file, a file that is not JSON, or a schema the compiler refuses.
  std::shared_ptr<const CompiledGrammar> compile(const Tokenizer& tokenizer, const ModelConfig& config) const;
};

}  // namespace minigen::cli
