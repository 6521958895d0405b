#include "grammar/compiled_grammar.h"

#include <utility>

#include "core/error.h"

namespace minigen {
namespace {

std::string over_budget_message(int64_t max_steps, const MatchState& state) {
  return "the grammar's allowed-token mask here needs more than " + std::to_string(max_steps) + " matcher steps (" +
         std::to_string(state.stacks.size()) +
         " parses alive at once): the schema is too ambiguous at this point to generate from";
}

}  // namespace

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
  const TokenVocabulary& vocabulary = *vocabulary_;
  TokenMask mask;
  mask.bits.assign((static_cast<std::size_t>(vocabulary.size()) + 63) / 64, 0);
  const auto allow = [&mask](int id) {
    mask.bits[static_cast<std::size_t>(id) / 64] |= uint64_t{1} << (id % 64);
    ++mask.allowed_count;
  };
  if (state.accepts_end(grammar_)) allow(vocabulary.eos());

  // Depth-first over the trie in pre-order. The stacks reached after the first d bytes of the current path are
  // arena[level_begin[d], level_begin[d + 1]); moving to a node of depth d drops every deeper level first.
  std::vector<MatchStack> arena(state.stacks.begin(), state.stacks.end());
  std::vector<std::size_t> level_begin(static_cast<std::size_t>(vocabulary.max_token_bytes()) + 2, 0);
  level_begin[1] = arena.size();
  const std::vector<VocabularyTrieNode>& trie = vocabulary.trie();
  const std::vector<int>& token_ids = vocabulary.token_ids();
  int64_t steps = 0;
  std::size_t index = 0;
  while (index < trie.size()) {
    const VocabularyTrieNode& node = trie[index];
    const std::size_t parent_begin = level_begin[node.depth - 1];
    const std::size_t parent_end = level_begin[node.depth];
    arena.resize(parent_end);
    for (std::size_t i = parent_begin; i < parent_end; ++i) {
      const MatchStack parent = arena[i];  // a copy: advance() appends to the arena, which may reallocate
      advance(grammar_, parent, node.byte, arena, steps);
    }
    if (steps > max_mask_steps_) {
      throw MaskWorkLimit(over_budget_message(max_mask_steps_, state));
    }
    level_begin[node.depth + 1] = arena.size();
    if (arena.size() == parent_end) {
      index = node.subtree_end;  // no stack takes this byte: nothing below it can be allowed
      continue;
    }
    for (uint32_t t = node.tokens_begin; t < node.tokens_end; ++t) allow(token_ids[t]);
    ++index;
  }
  if (steps_used != nullptr) *steps_used = steps;
  return mask;
}

std::shared_ptr<const TokenMask> CompiledGrammar::allowed_tokens(const MatchState& state) const {
  if (!cache_options_.enabled) return std::make_shared<const TokenMask>(compute_allowed_tokens(state));
  std::string key = state.key();
  {
    const std::lock_guard<std::mutex> lock(cache_mutex_);
    const auto found = cache_.find(key);
    if (found != cache_.end()) {
      ++cache_stats_.hits;
      if (!found->second) throw MaskWorkLimit(over_budget_message(max_mask_steps_, state));
      return found->second;
    }
    ++cache_stats_.misses;
  }
  // Computed outside the lock: two threads may compute the same mask once each, and both results are equal.
  std::shared_ptr<const TokenMask> mask;
  try {
    mask = std::make_shared<const TokenMask>(compute_allowed_tokens(state));
  } catch (const MaskWorkLimit&) {
    remember(std::move(key), nullptr);  // every row that reaches this state would pay the budget again
    throw;
  }
  remember(std::move(key), mask);
  return mask;
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
