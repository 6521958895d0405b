#pragma once
// A grammar paired with a model's vocabulary: it computes which token ids may come next in a given matcher state.
// Immutable apart from its mask cache, and safe to share between rows, requests and threads.
//
// The mask of a state is one walk of the vocabulary trie (grammar/token_vocabulary.h) with the byte matcher,
// pruning every subtree whose prefix the grammar refuses. Walks are cached per state (the stacks' bytes are the
// key): inside a string, between properties, in every row that reaches the same place of the same schema, the
// state repeats and the mask is a lookup. (xgrammar goes further and precomputes, per automaton position, the
// tokens whose fate does not depend on the stack; a per-state cache gets most of that for JSON schemas, whose
// states repeat, without an ahead-of-time pass over the vocabulary.) The cache only saves time: a mask is the same
// whether it was computed or looked up.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/byte_matcher.h"
#include "grammar/grammar.h"
#include "grammar/token_vocabulary.h"

namespace minigen {

struct TokenMask {
  std::vector<uint64_t> bits;  // bit (id % 64) of word id / 64 is set when the id is allowed
  int allowed_count = 0;

  bool allows(int id) const { return (bits[static_cast<std::size_t>(id) / 64] >> (id % 64)) & 1; }
};

struct MaskCacheOptions {
  bool enabled = true;
  std::size_t max_bytes = std::size_t{64} << 20;  // masks kept; the cache starts over when it is full
};

class CompiledGrammar {
 public:
  CompiledGrammar(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocabulary,
                  MaskCacheOptions cache_options = {});

  const Grammar& grammar() const { return grammar_; }
  const TokenVocabulary& vocabulary() const { return *vocabulary_; }
  int vocab_size() const { return vocabulary_->size(); }

  // The ids allowed after `state`: every token whose bytes the grammar reads from there, and eos where the
  // document may end.
  std::shared_ptr<const TokenMask> allowed_tokens(const MatchState& state) const;

  // The same without the cache (for tests and the benchmark).
  TokenMask compute_allowed_tokens(const MatchState& state) const;

  struct CacheStats {
    int64_t hits = 0;
    int64_t misses = 0;
  };
  CacheStats cache_stats() const;

 private:
  Grammar grammar_;
  std::shared_ptr<const TokenVocabulary> vocabulary_;
  MaskCacheOptions cache_options_;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::shared_ptr<const TokenMask>> cache_;
  mutable std::size_t cache_bytes_ = 0;
  mutable CacheStats cache_stats_;
};

}  // namespace minigen
