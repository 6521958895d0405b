#pragma once
// Writes a trained vocabulary as Hugging Face files in minimind-3's layout, loadable both by Tokenizer::from_files
// and by HF `tokenizers` / `transformers` (PreTrainedTokenizerFast).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tokenizer/bpe_trainer.h"

namespace minigen {

// One entry of tokenizer.json's "added_tokens": matched as written (no stripping, not normalized).
nlohmann::ordered_json added_token_json(std::size_t id, std::string_view content, bool special);
// tokenizer.json for a byte-level BPE as HF `tokenizers` writes it: ByteLevel pre-tokenizer and decoder (no prefix
// space, GPT-2 regex), no normalizer or post-processor, and the BPE model over `vocab` (text → id) and `merges`.
nlohmann::ordered_json byte_level_bpe_json(nlohmann::ordered_json added_tokens, nlohmann::ordered_json vocab,
                                           nlohmann::ordered_json merges);

// tokenizer.json: the 36 added tokens, ByteLevel pre-tokenizer (no prefix space, GPT-2 regex) and decoder, no
// normalizer, and the BPE model (vocab by id, merges as [left, right] pairs). Throws minigen::Error if `trained` does
// not start with minimind-3's added tokens.
std::string tokenizer_json_text(const TrainedBpe& trained);

// tokenizer_config.json: bos <|im_start|>, eos <|im_end|>, pad and unk <|endoftext|>, model_max_length, and the
// ChatML chat template.
std::string tokenizer_config_json_text();

// Creates `directory` if needed and writes both files into it, each atomically (a failure leaves no partial file).
void write_tokenizer_files(const TrainedBpe& trained, const std::filesystem::path& directory);

}  // namespace minigen
