#pragma once
// A grammar whose masks are costly, for the tests of mask work in the scheduler and the runner.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/json_schema_compiler.h"
#include "model/config.h"

namespace minigen::testing {

// The test model's 6,400 ids as text (eos 2): every byte, then pieces of the enum's values below.
inline std::shared_ptr<const TokenVocabulary> enum_vocabulary(const ModelConfig& config) {
  std::vector<std::string> tokens(3);  // ids 0, 1 and eos are never text
  for (int byte = 0; byte < 256; ++byte) tokens.emplace_back(1, static_cast<char>(byte));
  const std::string alphabet = "\"value-0123456789";
  const int letters = static_cast<int>(alphabet.size());
  for (int i = letters; static_cast<int>(tokens.size()) < config.vocab_size; ++i) {
    std::string piece;
    for (int rest = i; rest > 0; rest /= letters) piece += alphabet[static_cast<std::size_t>(rest % letters)];
    tokens.push_back(piece);
  }
  return std::make_shared<const TokenVocabulary>(std::move(tokens), config.eos_token_id);
}

// One of 300 strings: right after the opening quote all 300 are alive, so its masks take thousands of matcher
// steps. Each call compiles a new grammar, so no run finds another's masks in the cache.
inline std::shared_ptr<const CompiledGrammar> fresh_enum_grammar(const ModelConfig& config) {
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  for (int i = 0; i < 300; ++i) values.push_back("value-" + std::to_string(i));
  return std::make_shared<const CompiledGrammar>(compile_json_schema({{"enum", values}}), enum_vocabulary(config));
}

}  // namespace minigen::testing
