#include "grammar/token_vocabulary.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "tokenizer/bpe_tokenizer.h"

namespace minigen {

TokenVocabulary::TokenVocabulary(std::vector<std::string> token_bytes, int eos)
    : token_bytes_(std::move(token_bytes)), eos_(eos) {
  if (eos_ < 0 || eos_ >= size()) throw Error("the grammar's vocabulary needs an eos id inside it");
  token_bytes_[static_cast<std::size_t>(eos_)].clear();
  // Sorted byte strings list the trie's nodes in pre-order: each string adds the nodes past its longest common
  // prefix with the one before, and a node's subtree ends where a later string leaves its prefix.
  std::vector<std::pair<std::string_view, int>> sorted;
  for (int id = 0; id < size(); ++id) {
    const std::string& bytes = token_bytes_[static_cast<std::size_t>(id)];
    if (!bytes.empty()) sorted.emplace_back(bytes, id);
  }
  std::sort(sorted.begin(), sorted.end());
  std::vector<uint32_t> path;  // indices of the nodes on the previous string's path
  std::string_view previous;
  for (const auto& [bytes, id] : sorted) {
    if (bytes.size() > UINT16_MAX) throw Error("token " + std::to_string(id) + " is too long for the grammar");
    std::size_t common = 0;
    while (common < previous.size() && common < bytes.size() && previous[common] == bytes[common]) ++common;
    while (path.size() > common) {
      trie_[path.back()].subtree_end = static_cast<uint32_t>(trie_.size());
      path.pop_back();
    }
    for (std::size_t i = common; i < bytes.size(); ++i) {
      VocabularyTrieNode node;
      node.byte = static_cast<uint8_t>(bytes[i]);
      node.depth = static_cast<uint16_t>(i + 1);
      node.tokens_begin = node.tokens_end = static_cast<uint32_t>(token_ids_.size());
      path.push_back(static_cast<uint32_t>(trie_.size()));
      trie_.push_back(node);
    }
    // Equal strings (two ids with the same bytes) share the last node; sorted order keeps their ids adjacent.
    token_ids_.push_back(id);
    trie_[path.back()].tokens_end = static_cast<uint32_t>(token_ids_.size());
    max_token_bytes_ = std::max(max_token_bytes_, static_cast<int>(bytes.size()));
    previous = bytes;
  }
  for (const uint32_t index : path) trie_[index].subtree_end = static_cast<uint32_t>(trie_.size());
}

std::shared_ptr<const TokenVocabulary> TokenVocabulary::from_tokenizer(const Tokenizer& tokenizer, int vocab_size,
                                                                       int eos, bool plain_added_tokens_as_text) {
  std::vector<std::string> token_bytes(static_cast<std::size_t>(vocab_size));
  const int known = std::min(vocab_size, tokenizer.vocab_size());
  for (int id = 0; id < known; ++id) {
    if (!tokenizer.has_token(id) || tokenizer.is_special(id)) continue;
    if (tokenizer.is_added(id) && !plain_added_tokens_as_text) continue;
    token_bytes[static_cast<std::size_t>(id)] = tokenizer.token_bytes(id);
  }
  return std::make_shared<const TokenVocabulary>(std::move(token_bytes), eos);
}

}  // namespace minigen
