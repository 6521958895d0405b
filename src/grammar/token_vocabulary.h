#pragma once
// The model's vocabulary as the grammar sees it: each id's raw bytes, arranged as a trie so that the allowed-token
// mask is one walk over shared prefixes instead of one grammar check per token (llama.cpp's first grammar sampler
// matched every token separately, which its users found slow at 128k-token vocabularies). A prefix the grammar
// refuses prunes its whole subtree: inside a number, every token starting with a letter is skipped at once.
//
// Ids that never stand for text the grammar can match are left out of the trie and always masked: special tokens
// (<|im_start|>, and eos, which the mask allows only where the document is complete), by default the other added
// tokens (<tool_call>, <think>), unused ids, and ids past the tokenizer's vocabulary that the model's output has.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace minigen {

class Tokenizer;

struct VocabularyTrieNode {
  uint8_t byte = 0;           // the byte that leads here from the parent
  uint16_t depth = 0;         // bytes from the root: 1 for a first byte
  uint32_t subtree_end = 0;   // index just past this node's subtree in the pre-order array (for pruning)
  uint32_t tokens_begin = 0;  // ids whose bytes end here: token_ids()[tokens_begin, tokens_end)
  uint32_t tokens_end = 0;
};

class TokenVocabulary {
 public:
  // `token_bytes[id]` empty for ids the grammar never allows; `eos` the id allowed where the document is complete.
  TokenVocabulary(std::vector<std::string> token_bytes, int eos);

  // `vocab_size`: the model's (its logits' length), which may exceed the tokenizer's. When
  // plain_added_tokens_as_text, added tokens that are not special (<tool_call>) count as their text.
  static std::shared_ptr<const TokenVocabulary> from_tokenizer(const Tokenizer& tokenizer, int vocab_size, int eos,
                                                               bool plain_added_tokens_as_text = false);

  int size() const { return static_cast<int>(token_bytes_.size()); }
  int eos() const { return eos_; }
  const std::string& token_bytes(int id) const { return token_bytes_[static_cast<std::size_t>(id)]; }
  // The trie in pre-order (a node's subtree follows it), without the root.
  const std::vector<VocabularyTrieNode>& trie() const { return trie_; }
  const std::vector<int>& token_ids() const { return token_ids_; }
  int max_token_bytes() const { return max_token_bytes_; }

 private:
  std::vector<std::string> token_bytes_;
  int eos_;
  std::vector<VocabularyTrieNode> trie_;
  std::vector<int> token_ids_;
  int max_token_bytes_ = 0;
};

}  // namespace minigen
