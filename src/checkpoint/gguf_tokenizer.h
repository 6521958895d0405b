#pragma once
// minigen's byte-level BPE tokenizer ↔ GGUF's tokenizer metadata, as llama.cpp reads it for a "gpt2" tokenizer:
//
//   tokenizer.ggml.model           "gpt2" (byte-level BPE)
//   tokenizer.ggml.pre             "gpt-2": the GPT-2 split pattern, which is what the ByteLevel pre-tokenizer of
//                                  MiniMind's tokenizer.json uses (llama.cpp picks its split regex by this name)
//   tokenizer.ggml.tokens          every id's text: the byte-level spelling of a vocabulary token, the content of
//                                  an added token, "[PAD<id>]" for ids no token uses (the embedding has more rows)
//   tokenizer.ggml.token_type      1 normal, 3 control (special added tokens), 4 user-defined (other added), 5 unused
//   tokenizer.ggml.merges          "left right", in rank order
//   tokenizer.ggml.bos/eos/padding_token_id
//   tokenizer.ggml.add_bos_token   true: llama.cpp then puts bos (<|im_start|>) in front of a prompt, which is what
//                                  minigen does with a completion prompt (bos + text); and llama-server --jinja
//                                  removes the bos text from the start of a rendered chat template before
//                                  tokenizing, so without it a chat prompt would lose its first <|im_start|>
//                                  (18 tokens instead of minigen's 25). minigen's own readers never add bos
//                                  implicitly, and tokenizer_config.json keeps MiniMind's false (Hugging Face
//                                  tokenizers read it)
//   tokenizer.chat_template        the Jinja text of tokenizer_config.json
#include <optional>
#include <string>

#include "model/io/gguf_reader.h"
#include "tokenizer/bpe_tokenizer.h"

namespace minigen {

// Appends the tokenizer keys for `tokenizer_json` (the tokenizer.json text `tokenizer` was loaded from; its vocab and
// merges are read from the text, its bos/eos/pad ids and chat template from `tokenizer`), padded to `vocab_size` ids.
void append_gguf_tokenizer(GgufMetadata& metadata, const std::string& tokenizer_json, const Tokenizer& tokenizer,
                           int vocab_size);

// The tokenizer.json and tokenizer_config.json texts the GGUF's keys describe, for Tokenizer::from_json_text.
// Throws minigen::Error naming the key for a missing or mistyped key, or a tokenizer other than "gpt2"/"gpt-2".
struct GgufTokenizerFiles {
  std::string tokenizer_json;
  std::string tokenizer_config_json;
};
GgufTokenizerFiles gguf_tokenizer_files(const GgufFile& file, const std::string& name);

}  // namespace minigen
