#include "tokenizer/bpe_trainer.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <queue>
#include <unordered_map>

#include "core/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/corpus_piece_counter.h"
#include "tokenizer/minimind_vocab_layout.h"

namespace minigen {
namespace {

using PairKey = std::uint64_t;

PairKey pair_key(int left, int right) {
  return (static_cast<PairKey>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}
int left_of(PairKey key) { return static_cast<int>(key >> 32); }
int right_of(PairKey key) { return static_cast<int>(key & 0xFFFFFFFFu); }

// A distinct piece of the corpus, as its current symbols, and how often it occurs.
struct Word {
  std::vector<int> symbols;
  std::int64_t count;
};

// A pair's count when it was queued. Counts of queued pairs only fall (a merge consumes them), so an entry is checked
// against the live count when it reaches the top and re-queued with that count if it has gone stale.
struct QueuedPair {
  std::int64_t count;
  PairKey key;
};

class BpeMerger {
 public:
  BpeMerger(const std::unordered_map<std::string, std::int64_t>& piece_counts, const BpeTrainOptions& options)
      : options_(options), queue_(QueueOrder{this}) {
    const auto added = minimind_added_tokens();
    for (const AddedTokenSpec& token : added) add_token(std::string(token.content));
    // Byte symbols in the order of the code points that spell them.
    std::array<int, 256> bytes_by_spelling{};
    for (int byte = 0; byte < 256; ++byte) bytes_by_spelling[static_cast<std::size_t>(byte)] = byte;
    std::sort(bytes_by_spelling.begin(), bytes_by_spelling.end(), [](int a, int b) {
      return byte_to_code_point(static_cast<std::uint8_t>(a)) < byte_to_code_point(static_cast<std::uint8_t>(b));
    });
    for (const int byte : bytes_by_spelling) {
      byte_token_ids_[static_cast<std::size_t>(byte)] = add_token(std::string(1, static_cast<char>(byte)));
    }
    first_merged_id_ = static_cast<int>(token_bytes_.size());
    load_words(piece_counts);
  }

  TrainedBpe run() {
    const int total = options_.vocab_size - first_merged_id_;
    while (static_cast<int>(token_bytes_.size()) < options_.vocab_size && !queue_.empty()) {
      const QueuedPair top = queue_.top();
      queue_.pop();
      const auto live = pair_counts_.find(top.key);
      const std::int64_t live_count = live == pair_counts_.end() ? 0 : live->second;
      if (live_count != top.count) {
        if (live_count > 0) queue_.push({live_count, top.key});
        continue;
      }
      if (live_count < options_.min_frequency) break;
      merge(top.key);
      if (options_.progress) options_.progress(static_cast<int>(token_bytes_.size()) - first_merged_id_, total);
    }
    return result();
  }

 private:
  // Highest count first; ties by the left token's bytes, then the right token's (see the header).
  struct QueueOrder {
    const BpeMerger* merger;
    bool operator()(const QueuedPair& a, const QueuedPair& b) const {  // true when a comes out after b
      if (a.count != b.count) return a.count < b.count;
      const std::string& a_left = merger->token_bytes_[static_cast<std::size_t>(left_of(a.key))];
      const std::string& b_left = merger->token_bytes_[static_cast<std::size_t>(left_of(b.key))];
      if (a_left != b_left) return a_left > b_left;
      return merger->token_bytes_[static_cast<std::size_t>(right_of(a.key))] >
             merger->token_bytes_[static_cast<std::size_t>(right_of(b.key))];
    }
  };

  int add_token(std::string bytes) {
    const int id = static_cast<int>(token_bytes_.size());
    id_by_bytes_.emplace(bytes, id);
    token_bytes_.push_back(std::move(bytes));
    return id;
  }

  void load_words(const std::unordered_map<std::string, std::int64_t>& piece_counts) {
    // Sorted so that word indices, and with them every later step, are the same on every run.
    std::vector<const std::pair<const std::string, std::int64_t>*> sorted;
    sorted.reserve(piece_counts.size());
    for (const auto& entry : piece_counts) sorted.push_back(&entry);
    std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->first < b->first; });

    words_.reserve(sorted.size());
    for (const auto* entry : sorted) {
      Word word{{}, entry->second};
      for (const char byte : entry->first) word.symbols.push_back(byte_token_ids_[static_cast<std::uint8_t>(byte)]);
      const int word_index = static_cast<int>(words_.size());
      for (std::size_t i = 0; i + 1 < word.symbols.size(); ++i) {
        const PairKey key = pair_key(word.symbols[i], word.symbols[i + 1]);
        pair_counts_[key] += word.count;
        note_occurrence(key, word_index);
      }
      words_.push_back(std::move(word));
    }
    for (const auto& [key, count] : pair_counts_) queue_.push({count, key});
  }

  // Remembers that a word holds a pair. Words are visited in index order, so checking the last entry avoids repeats.
  void note_occurrence(PairKey key, int word_index) {
    std::vector<int>& holders = words_holding_pair_[key];
    if (holders.empty() || holders.back() != word_index) holders.push_back(word_index);
  }

  void merge(PairKey key) {
    const int left = left_of(key);
    const int right = right_of(key);
    std::string merged_bytes =
        token_bytes_[static_cast<std::size_t>(left)] + token_bytes_[static_cast<std::size_t>(right)];
    const auto existing = id_by_bytes_.find(merged_bytes);
    const int merged = existing != id_by_bytes_.end() ? existing->second : add_token(std::move(merged_bytes));
    merges_.emplace_back(left, right);

    // Every word holding the pair loses all its old pairs and gains its new ones; summing these changes first means
    // each pair's count is touched once per merge, and only pairs that grew need a fresh queue entry.
    std::unordered_map<PairKey, std::int64_t> count_changes;
    const std::vector<int> holders = std::move(words_holding_pair_[key]);
    words_holding_pair_.erase(key);
    for (const int word_index : holders) {
      Word& word = words_[static_cast<std::size_t>(word_index)];
      std::vector<int> merged_symbols;
      merged_symbols.reserve(word.symbols.size());
      for (std::size_t i = 0; i < word.symbols.size(); ++i) {
        if (i + 1 < word.symbols.size() && word.symbols[i] == left && word.symbols[i + 1] == right) {
          merged_symbols.push_back(merged);
          ++i;
        } else {
          merged_symbols.push_back(word.symbols[i]);
        }
      }
      if (merged_symbols.size() == word.symbols.size()) continue;  // the pair had already left this word
      for (std::size_t i = 0; i + 1 < word.symbols.size(); ++i) {
        count_changes[pair_key(word.symbols[i], word.symbols[i + 1])] -= word.count;
      }
      for (std::size_t i = 0; i + 1 < merged_symbols.size(); ++i) {
        const PairKey new_key = pair_key(merged_symbols[i], merged_symbols[i + 1]);
        count_changes[new_key] += word.count;
        if (merged_symbols[i] == merged || merged_symbols[i + 1] == merged) note_occurrence(new_key, word_index);
      }
      word.symbols = std::move(merged_symbols);
    }
    for (const auto& [changed_key, change] : count_changes) {
      if (change == 0) continue;
      std::int64_t& count = pair_counts_[changed_key];
      count += change;
      if (count <= 0) {
        pair_counts_.erase(changed_key);
      } else if (change > 0) {
        queue_.push({count, changed_key});
      }
    }
  }

  TrainedBpe result() const {
    TrainedBpe trained;
    trained.vocab.reserve(token_bytes_.size());
    for (int id = 0; id < static_cast<int>(token_bytes_.size()); ++id) {
      const std::string& bytes = token_bytes_[static_cast<std::size_t>(id)];
      trained.vocab.push_back(id < first_byte_id() ? bytes : bytes_to_byte_level(bytes));
    }
    trained.merges.reserve(merges_.size());
    for (const auto& [left, right] : merges_) {
      trained.merges.emplace_back(trained.vocab[static_cast<std::size_t>(left)],
                                  trained.vocab[static_cast<std::size_t>(right)]);
    }
    return trained;
  }

  static int first_byte_id() { return static_cast<int>(minimind_added_tokens().size()); }

  const BpeTrainOptions& options_;
  std::vector<std::string> token_bytes_;  // raw bytes by id (added tokens: their content)
  std::unordered_map<std::string, int> id_by_bytes_;
  std::array<int, 256> byte_token_ids_{};
  int first_merged_id_ = 0;
  std::vector<Word> words_;
  std::unordered_map<PairKey, std::int64_t> pair_counts_;
  // Which words (may) hold each pair; an entry can outlive the pair in that word, which merge() tolerates.
  std::unordered_map<PairKey, std::vector<int>> words_holding_pair_;
  std::priority_queue<QueuedPair, std::vector<QueuedPair>, QueueOrder> queue_;
  std::vector<std::pair<int, int>> merges_;
};

void check_options(const BpeTrainOptions& options) {
  const int fixed_tokens = static_cast<int>(minimind_added_tokens().size()) + 256;
  if (options.vocab_size < fixed_tokens) {
    throw Error("vocab_size " + std::to_string(options.vocab_size) + " is too small: the " +
                std::to_string(minimind_added_tokens().size()) + " added tokens and 256 byte symbols take " +
                std::to_string(fixed_tokens) + " ids");
  }
}

}  // namespace

TrainedBpe train_bpe(std::span<const std::filesystem::path> text_files, const BpeTrainOptions& options) {
  check_options(options);
  CorpusPieceCounter counter;
  for (const std::filesystem::path& file : text_files) counter.add_file(file);
  return BpeMerger(counter.counts(), options).run();
}

TrainedBpe train_bpe_on_texts(std::span<const std::string> texts, const BpeTrainOptions& options) {
  check_options(options);
  CorpusPieceCounter counter;
  for (const std::string& text : texts) counter.add_text(text);
  return BpeMerger(counter.counts(), options).run();
}

}  // namespace minigen
