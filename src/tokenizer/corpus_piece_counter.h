#pragma once
// Counts how often each pre-tokenized piece occurs in a corpus: the only statistics BPE training needs. Text is cut
// the way Tokenizer::encode cuts it (added tokens removed whole, then the GPT-2 pre-tokenizer).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tokenizer/added_token_matcher.h"

namespace minigen {

class CorpusPieceCounter {
 public:
  CorpusPieceCounter();

  // Counts one whole document.
  void add_text(std::string_view text);

  static constexpr std::size_t kDefaultReadBlockBytes = std::size_t{4} << 20;

  // Text is only cut where no piece can span the cut; more than this many bytes without such a point is refused.
  static constexpr std::size_t kMaxUncutBytes = std::size_t{64} << 20;

  // Counts a regular file, reading it in blocks of about `read_block_bytes` (the counts do not depend on the block
  // size). Throws minigen::Error when it cannot be read, is not a regular file, or has no cut point for
  // kMaxUncutBytes.
  void add_file(const std::filesystem::path& path, std::size_t read_block_bytes = kDefaultReadBlockBytes);

  // Raw piece bytes → occurrences.
  const std::unordered_map<std::string, std::int64_t>& counts() const { return counts_; }

 private:
  void count_pieces(std::string_view ordinary_text);

  AddedTokenMatcher added_tokens_;
  std::unordered_map<std::string, std::int64_t> counts_;
};

}  // namespace minigen
