#include "tokenizer/bpe_tokenizer.h"

#include <mutex>
#include <queue>

#include "core/error.h"
#include "tokenizer/pretokenizer.h"

namespace minigen {

// Real text repeats the same pieces (" the", ",", "\n") over and over, so their BPE results are kept. The lock makes
// encode() safe to call from several threads on one Tokenizer.
struct Tokenizer::PieceCache {
  static constexpr std::size_t kMaxEntries = 1 << 16;  // then start afresh: bounded memory, no eviction bookkeeping
  std::mutex mutex;
  std::unordered_map<std::string, std::vector<int>> ids_by_piece;
};

Tokenizer::Tokenizer() : cache_(std::make_unique<PieceCache>()) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

const Tokenizer::TokenEntry& Tokenizer::entry(int id) const {
  if (id < 0 || id >= vocab_size()) {
    throw Error("token id " + std::to_string(id) + " is out of range (vocabulary size " + std::to_string(vocab_size()) +
                ")");
  }
  const TokenEntry& token = tokens_[static_cast<std::size_t>(id)];
  if (token.kind == TokenKind::kUnused) throw Error("token id " + std::to_string(id) + " is not in the vocabulary");
  return token;
}

std::vector<int> Tokenizer::encode(std::string_view text) const {
  std::vector<int> ids;
  added_tokens_.split(
      text, [&](std::string_view ordinary) { encode_ordinary_text(ordinary, ids); },
      [&](int id) { ids.push_back(id); });
  return ids;
}

std::vector<int> Tokenizer::encode_parts(std::span<const TextPart> parts) const {
  std::vector<int> ids;
  std::string plain;  // the plain text since the last added token, across part boundaries
  const auto add_token = [&](int id) {
    encode_ordinary_text(plain, ids);
    plain.clear();
    ids.push_back(id);
  };
  for (const TextPart& part : parts) {
    if (part.markup) {
      added_tokens_.split(
          part.text, [&](std::string_view ordinary) { plain += ordinary; }, add_token);
    } else {
      plain += part.text;
    }
  }
  encode_ordinary_text(plain, ids);
  return ids;
}

void Tokenizer::encode_ordinary_text(std::string_view text, std::vector<int>& ids) const {
  for (const std::string_view piece : pretokenize(text)) encode_piece(piece, ids);
}

void Tokenizer::encode_piece(std::string_view piece, std::vector<int>& ids) const {
  if (piece.size() == 1) {
    ids.push_back(byte_token_ids_[static_cast<std::uint8_t>(piece[0])]);
    return;
  }
  if (ignore_merges_) {
    if (const auto whole = id_by_bytes_.find(std::string(piece)); whole != id_by_bytes_.end()) {
      ids.push_back(whole->second);
      return;
    }
  }
  std::string key(piece);
  {
    std::lock_guard lock(cache_->mutex);
    if (const auto cached = cache_->ids_by_piece.find(key); cached != cache_->ids_by_piece.end()) {
      ids.insert(ids.end(), cached->second.begin(), cached->second.end());
      return;
    }
  }
  std::vector<int> piece_ids = apply_merges(piece);
  ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
  std::lock_guard lock(cache_->mutex);
  if (cache_->ids_by_piece.size() >= PieceCache::kMaxEntries) cache_->ids_by_piece.clear();
  cache_->ids_by_piece.emplace(std::move(key), std::move(piece_ids));
}

std::vector<int> Tokenizer::apply_merges(std::string_view piece) const {
  // The symbols form a linked list (merging removes the right one of a pair) and the candidate pairs sit in a
  // min-heap keyed by (merge rank, position), so the lowest-ranked pair is merged first and, among equal ranks, the
  // leftmost: O(n log n) even for a very long piece, such as a run of ten thousand spaces.
  struct Symbol {
    int id;
    int previous;  // index of the previous live symbol, -1 at the start
    int next;      // index of the next live symbol, -1 at the end
  };
  struct Candidate {
    int rank;
    int left;
    int right;
    int left_id;
    int right_id;
    bool operator>(const Candidate& other) const { return rank != other.rank ? rank > other.rank : left > other.left; }
  };

  std::vector<Symbol> symbols;
  symbols.reserve(piece.size());
  for (std::size_t i = 0; i < piece.size(); ++i) {
    const int index = static_cast<int>(i);
    const int next = i + 1 < piece.size() ? index + 1 : -1;
    symbols.push_back({byte_token_ids_[static_cast<std::uint8_t>(piece[i])], index - 1, next});
  }

  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> candidates;
  const auto consider_pair = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const int left_id = symbols[static_cast<std::size_t>(left)].id;
    const int right_id = symbols[static_cast<std::size_t>(right)].id;
    const auto rule = merges_by_pair_.find(pair_key(left_id, right_id));
    if (rule != merges_by_pair_.end()) candidates.push({rule->second.rank, left, right, left_id, right_id});
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider_pair(i, i + 1);

  while (!candidates.empty()) {
    const Candidate best = candidates.top();
    candidates.pop();
    Symbol& left = symbols[static_cast<std::size_t>(best.left)];
    Symbol& right = symbols[static_cast<std::size_t>(best.right)];
    // A candidate is stale once either of its symbols has been merged into something else.
    if (left.next != best.right || left.id != best.left_id || right.id != best.right_id) continue;
    left.id = merges_by_pair_.at(pair_key(best.left_id, best.right_id)).merged_id;
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].previous = best.left;
    right.id = -1;  // dead: no candidate can match it again
    consider_pair(left.previous, best.left);
    consider_pair(best.left, left.next);
  }

  std::vector<int> ids;
  for (int index = 0; index >= 0; index = symbols[static_cast<std::size_t>(index)].next) {
    ids.push_back(symbols[static_cast<std::size_t>(index)].id);
  }
  return ids;
}

std::string Tokenizer::decode(std::span<const int> ids, bool skip_special_tokens) const {
  std::string text;
  for (const int id : ids) {
    const TokenEntry& token = entry(id);
    if (skip_special_tokens && token.kind == TokenKind::kAddedSpecial) continue;
    text += token.bytes;
  }
  return text;
}

std::string Tokenizer::token_bytes(int id) const { return entry(id).bytes; }

std::optional<int> Tokenizer::find_token(std::string_view text) const {
  const auto found = id_by_bytes_.find(std::string(text));
  if (found == id_by_bytes_.end()) return std::nullopt;
  return found->second;
}

bool Tokenizer::is_special(int id) const { return entry(id).kind == TokenKind::kAddedSpecial; }

bool Tokenizer::is_added(int id) const {
  const TokenKind kind = entry(id).kind;
  return kind == TokenKind::kAddedSpecial || kind == TokenKind::kAddedPlain;
}

bool Tokenizer::has_token(int id) const {
  return id >= 0 && id < vocab_size() && tokens_[static_cast<std::size_t>(id)].kind != TokenKind::kUnused;
}

int Tokenizer::required_role_id(int id, std::string_view role) const {
  if (id < 0) {
    throw Error("this tokenizer has no " + std::string(role) + " token: name one in tokenizer_config.json (e.g. \"" +
                std::string(role) + "_token\")");
  }
  return id;
}

int Tokenizer::bos_id() const { return required_role_id(bos_id_, "bos"); }
int Tokenizer::eos_id() const { return required_role_id(eos_id_, "eos"); }
int Tokenizer::pad_id() const { return required_role_id(pad_id_, "pad"); }

}  // namespace minigen
