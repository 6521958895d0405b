#include "tokenizer/corpus_piece_counter.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/file_io.h"
#include "tokenizer/minimind_vocab_layout.h"
#include "tokenizer/pretokenizer.h"

namespace minigen {
namespace {

// Where a block of text may be cut without changing any piece: just before a '\n' that follows a visible ASCII
// character. A piece never spans that point (the visible character ends a letter, number or punctuation run, and
// '\n' cannot join it), and the pattern only looks ahead, never behind, so pieces after the cut are unchanged too.
// Only cuts at or after `search_from` are considered (the text before it was searched already). Returns 0 when
// there is no such point.
std::size_t last_safe_cut(std::string_view text, std::size_t search_from) {
  for (std::size_t cut = text.size(); cut-- > std::max<std::size_t>(search_from, 1);) {
    const unsigned char before = static_cast<unsigned char>(text[cut - 1]);
    if (text[cut] == '\n' && before > ' ' && before < 0x7F) return cut;
  }
  return 0;
}

}  // namespace

CorpusPieceCounter::CorpusPieceCounter() {
  const auto added = minimind_added_tokens();
  for (std::size_t id = 0; id < added.size(); ++id) {
    added_tokens_.add(std::string(added[id].content), static_cast<int>(id));
  }
}

void CorpusPieceCounter::add_text(std::string_view text) {
  // Added tokens are never merged with anything, so only the text between them is counted.
  added_tokens_.split(
      text, [&](std::string_view ordinary) { count_pieces(ordinary); }, [](int) {});
}

void CorpusPieceCounter::count_pieces(std::string_view ordinary_text) {
  for (const std::string_view piece : pretokenize(ordinary_text)) ++counts_[std::string(piece)];
}

void CorpusPieceCounter::add_file(const std::filesystem::path& path, std::size_t read_block_bytes) {
  RegularFile file(path);
  std::string carried;  // text read but not yet counted: it may continue in the next block
  std::vector<char> block(std::max<std::size_t>(read_block_bytes, 1));
  while (true) {
    const std::size_t got = file.read_some(block);
    if (got == 0) break;
    const std::size_t searched_size = carried.size();
    carried.append(block.data(), got);
    const std::size_t cut = last_safe_cut(carried, searched_size);
    if (cut == 0) {
      // No safe point yet: keep reading, but not without end — text that never has one is not a text corpus.
      if (carried.size() > kMaxUncutBytes) {
        throw Error(path.string() + ": more than " + byte_count_text(kMaxUncutBytes) +
                    " without a line break after a visible ASCII character; the trainer reads text in lines");
      }
      continue;
    }
    add_text(std::string_view(carried).substr(0, cut));
    carried.erase(0, cut);
  }
  add_text(carried);
}

}  // namespace minigen
