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
//
// A mask has a work budget (matcher steps, MaskWorkLimit below): it runs inside a generation step that every row of
// the batch waits for, so a state whose walk would take longer ends its row with an error instead of holding the
// others. Steps, not time, so that whether a row is ended does not depend on the machine or its load.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
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

// One mask may cost kMaskWalks walks of the whole vocabulary trie with one parse alive (about one matcher step
// per trie node: the walk inside a string, where every token is allowed) plus kMaskStepsPerAlternative steps for
// each alternative of the largest choice a grammar may have (GrammarBudget::max_alternatives): right after an enum's
// opening quote every value is alive, and each is tried against every first byte of the vocabulary and a few more
// (measured: 336 steps per value for 1,000 values). At the shipped vocabulary (10,949 trie nodes) that is 612,000
// steps, 12–30 ms at 20–50 ns a step; the tests' and examples' schemas need at most 11,000, an enum of 1,000 values
// 336,000. Beyond it lie schemas that keep thousands of unbounded strings alive at once (11 M steps a token).
inline constexpr int64_t kMaskWalks = 8;
inline constexpr int64_t kMaskStepsPerAlternative = 512;

// The mask of a state would take more matcher steps than its budget.
class MaskWorkLimit : public Error {
 public:
  using Error::Error;
};

class CompiledGrammar {
 public:
  // `max_mask_steps` 0: the budget above for this vocabulary.
  CompiledGrammar(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocabulary,
                  MaskCacheOptions cache_options = {}, int64_t max_mask_steps = 0);

  const Grammar& grammar() const { return grammar_; }
  const TokenVocabulary& vocabulary() const { return *vocabulary_; }
  int vocab_size() const { return vocabulary_->size(); }

  // The ids allowed after `state`: every token whose bytes the grammar reads from there, and eos where the
  // document may end. Throws MaskWorkLimit when computing them would take more than max_mask_steps() (a state
  // that failed once fails again at once, from the cache).
  std::shared_ptr<const TokenMask> allowed_tokens(const MatchState& state) const;

  // The same without the cache (for tests and the benchmark); `steps`, if given, receives the matcher steps used.
  TokenMask compute_allowed_tokens(const MatchState& state, int64_t* steps = nullptr) const;
  int64_t max_mask_steps() const { return max_mask_steps_; }

  struct CacheStats {
    int64_t hits = 0;
    int64_t misses = 0;
  };
  CacheStats cache_stats() const;

 private:
  void remember(std::string key, std::shared_ptr<const TokenMask> mask) const;

  Grammar grammar_;
  std::shared_ptr<const TokenVocabulary> vocabulary_;
  MaskCacheOptions cache_options_;
  int64_t max_mask_steps_;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::shared_ptr<const TokenMask>> cache_;  // nullptr: over the budget
  mutable std::size_t cache_bytes_ = 0;
  mutable CacheStats cache_stats_;
};

}  // namespace minigen
