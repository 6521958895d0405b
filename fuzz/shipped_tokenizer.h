#pragma once
// The shipped tokenizer, loaded once per fuzz process, for the targets that encode text (MINIGEN_SOURCE_DIR is set by
// fuzz/CMakeLists.txt).
#include <filesystem>

#include "tokenizer/bpe_tokenizer.h"

namespace minigen::fuzz {

inline const Tokenizer& shipped_tokenizer() {
  static const Tokenizer tokenizer =
      Tokenizer::from_files(MINIGEN_SOURCE_DIR "/tokenizers/minigen-6400/tokenizer.json",
                            std::filesystem::path(MINIGEN_SOURCE_DIR "/tokenizers/minigen-6400/tokenizer_config.json"));
  return tokenizer;
}

}  // namespace minigen::fuzz
