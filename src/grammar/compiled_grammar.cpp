#include "grammar/compiled_grammar.h"

#include <cassert>
#include <limits>
#include <utility>

#include "core/error.h"

namespace minigen {
namespace {

std::string over_budget_message(int64_t max_steps, const MatchState& state) {
  return "the grammar's allowed-token mask here needs more than " + std::to_string(max_steps) + " matcher steps (" +
         std::to_string(state.stacks.size()) +
         " parses alive at once): the schema is too ambiguous at this point to generate from";
}

TokenMask no_tokens(int vocab_size) {
  TokenMask mask;
  mask.bits.assign((static_cast<std::size_t>(vocab_size) + 63) / 64, 0);
  return mask;
}

// Each id sits in one trie node, which a walk visits once, so every id is counted once.
void allow(TokenMask& mask, int id) {
  mask.bits[static_cast<std::size_t>(id) / 64] |= uint64_t{1} << (id % 64);
  ++mask.allowed_count;
}

}  // namespace

MaskJob::MaskJob(const CompiledGrammar& grammar, MatchState state)
    : grammar_(&grammar),
      state_(std::move(state)),
      arena_(state_.stacks),
      level_begin_(static_cast<std::size_t>(grammar.vocabulary().max_token_bytes()) + 2, 0),
      mask_(no_tokens(grammar.vocab_size())) {
  level_begin_[1] = arena_.size();
  if (state_.accepts_end(grammar.grammar())) allow(mask_, grammar.vocabulary().eos());
}

bool MaskJob::done() const { return next_node_ == grammar_->vocabulary().trie().size(); }

bool MaskJob::walk(int64_t step_allowance) {
  const CompiledGrammar& grammar = *grammar_;
  const std::vector<VocabularyTrieNode>& trie = grammar.vocabulary().trie();
  const std::vector<int>& token_ids = grammar.vocabulary().token_ids();
  const int64_t steps_before = steps_;
  for (bool first = true; next_node_ < trie.size() && (first || steps_ - steps_before < step_allowance);
       first = false) {
    const VocabularyTrieNode& node = trie[next_node_];
    const std::size_t parent_begin = level_begin_[node.depth - 1];
    const std::size_t parent_end = level_begin_[node.depth];
    arena_.resize(parent_end);
    for (std::size_t i = parent_begin; i < parent_end; ++i) {
      const MatchStack parent = arena_[i];  // a copy: advance() appends to the arena, which may reallocate
      minigen::advance(grammar.grammar_, parent, node.byte, arena_, steps_);
    }
    if (steps_ > grammar.max_mask_steps_) {
      throw MaskWorkLimit(over_budget_message(grammar.max_mask_steps_, state_));
    }
    level_begin_[node.depth + 1] = arena_.size();
    if (arena_.size() == parent_end) {
      next_node_ = node.subtree_end;  // no stack takes this byte: nothing below it can be allowed
      continue;
    }
    for (uint32_t t = node.tokens_begin; t < node.tokens_end; ++t) allow(mask_, token_ids[t]);
    ++next_node_;
  }
  return done();
}

void MaskJob::advance(int64_t step_allowance) {
  if (finished_) return;
  const bool cached = grammar_->cache_options_.enabled;
  try {
    if (!walk(step_allowance)) return;
  } catch (const MaskWorkLimit&) {
    if (cached) grammar_->remember(state_.key(), nullptr);  // every row that reaches this state would pay again
    throw;
  }
  finished_ = std::make_shared<const TokenMask>(std::move(mask_));
  if (cached) grammar_->remember(state_.key(), finished_);
}

std::shared_ptr<const TokenMask> MaskJob::take() {
  assert(finished_ && "take() before the job is done");
  return std::move(finished_);
}

CompiledGrammar::CompiledGrammar(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocabulary,
                                 MaskCacheOptions cache_options, int64_t max_mask_steps)
    : grammar_(std::move(grammar)), vocabulary_(std::move(vocabulary)), cache_options_(cache_options) {
  if (!vocabulary_) throw Error("a compiled grammar needs a vocabulary");
  if (max_mask_steps < 0) throw Error("a mask's step budget cannot be negative");
  const int64_t trie_nodes = static_cast<int64_t>(vocabulary_->trie().size());
  max_mask_steps_ = max_mask_steps > 0
                        ? max_mask_steps
                        : kMaskWalks * trie_nodes + kMaskStepsPerAlternative * GrammarBudget{}.max_alternatives;
}

TokenMask CompiledGrammar::compute_allowed_tokens(const MatchState& state, int64_t* steps_used) const {
  MaskJob job(*this, state);
  job.walk(std::numeric_limits<int64_t>::max());
  if (steps_used != nullptr) *steps_used = job.steps();
  return std::move(job.mask_);
}

std::shared_ptr<const TokenMask> CompiledGrammar::cached_tokens(const MatchState& state) const {
  if (!cache_options_.enabled) return nullptr;
  const std::string key = state.key();
  const std::lock_guard<std::mutex> lock(cache_mutex_);
  const auto found = cache_.find(key);
  if (found == cache_.end()) {
    ++cache_stats_.misses;
    return nullptr;
  }
  ++cache_stats_.hits;
  if (!found->second) throw MaskWorkLimit(over_budget_message(max_mask_steps_, state));
  return found->second;
}

std::shared_ptr<const TokenMask> CompiledGrammar::allowed_tokens(const MatchState& state) const {
  if (std::shared_ptr<const TokenMask> cached = cached_tokens(state)) return cached;
  // Computed outside the cache's lock: two threads may compute the same mask once each, and both results are equal.
  MaskJob job(*this, state);
  job.advance(std::numeric_limits<int64_t>::max());
  return job.take();
}

void CompiledGrammar::remember(std::string key, std::shared_ptr<const TokenMask> mask) const {
  const std::size_t entry_bytes = key.size() + (mask ? mask->bits.size() * sizeof(uint64_t) : 0);
  const std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_bytes_ + entry_bytes > cache_options_.max_bytes) {
    cache_.clear();
    cache_bytes_ = 0;
  }
  if (cache_.emplace(std::move(key), std::move(mask)).second) cache_bytes_ += entry_bytes;
}

CompiledGrammar::CacheStats CompiledGrammar::cache_stats() const {
  const std::lock_guard<std::mutex> lock(cache_mutex_);
  return cache_stats_;
}

}  // namespace minigen
