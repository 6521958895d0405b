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
//
// Within that budget a mask can still cost a batch tens of milliseconds, so it can also be computed in slices
// (MaskJob) that a scheduler spreads over several steps while the other rows keep decoding.
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

class CompiledGrammar;

// One state's mask, computed a slice at a time: the depth-first walk of the vocabulary trie, paused between trie
// nodes. It pauses between nodes rather than between the state's stacks because one stack can fan out (before an
// enum's opening quote there is one parse; after it, 1,000), so a stack's share of a walk has no useful bound while
// a node's is one matcher advance per live parse. The walk and its step count are those of an unsliced mask, so
// the result is the same bit for bit and max_mask_steps() applies to the job's total. A finished mask (or a
// refusal) goes into the grammar's cache, as allowed_tokens() does.
class MaskJob {
 public:
  // The grammar must outlive the job.
  MaskJob(const CompiledGrammar& grammar, MatchState state);

  // Walks trie nodes until `step_allowance` matcher steps have been used in this call or the mask is done. At
  // least one node is walked, so every call makes progress. Throws MaskWorkLimit once the job's total passes the
  // grammar's budget.
  void advance(int64_t step_allowance);
  bool done() const;
  int64_t steps() const { return steps_; }
  // The finished mask (done() must hold); the job is spent.
  std::shared_ptr<const TokenMask> take();

 private:
  friend class CompiledGrammar;
  bool walk(int64_t step_allowance);  // the walk alone, without the cache; returns done()

  const CompiledGrammar* grammar_;
  MatchState state_;
  // Depth-first over the trie in pre-order. The stacks reached after the first d bytes of the current path are
  // arena_[level_begin_[d], level_begin_[d + 1]); moving to a node of depth d drops every deeper level first.
  std::vector<MatchStack> arena_;
  std::vector<std::size_t> level_begin_;
  std::size_t next_node_ = 0;
  int64_t steps_ = 0;
  TokenMask mask_;                             // the tokens allowed so far
  std::shared_ptr<const TokenMask> finished_;  // once done, until taken
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
  // The cached mask of `state`, or nullptr when it is not cached (a miss; a MaskJob computes it). Throws
  // MaskWorkLimit for a state already found over the budget.
  std::shared_ptr<const TokenMask> cached_tokens(const MatchState& state) const;

  // The same without the cache (for tests and the benchmark); `steps`, if given, receives the matcher steps used.
  TokenMask compute_allowed_tokens(const MatchState& state, int64_t* steps = nullptr) const;
  int64_t max_mask_steps() const { return max_mask_steps_; }

  struct CacheStats {
    int64_t hits = 0;
    int64_t misses = 0;
  };
  CacheStats cache_stats() const;

 private:
  friend class MaskJob;
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
