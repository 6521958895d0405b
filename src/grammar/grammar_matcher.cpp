#include "grammar/grammar_matcher.h"

#include <limits>
#include <string>
#include <utility>

#include "core/assert.h"
#include "core/error.h"
#include "core/profiler.h"

namespace minigen {

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar) : grammar_(std::move(grammar)) {
  if (!grammar_) throw Error("a grammar matcher needs a grammar");
  state_ = MatchState::initial(grammar_->grammar());
}

const TokenMask& GrammarMatcher::allowed_tokens() {
  ProfileZone zone(Zone::kGrammarMask);
  if (mask_) return *mask_;
  if (finished_) {
    auto only_eos = std::make_shared<TokenMask>();
    only_eos->bits.assign((static_cast<std::size_t>(grammar_->vocab_size()) + 63) / 64, 0);
    const int eos = grammar_->vocabulary().eos();
    only_eos->bits[static_cast<std::size_t>(eos) / 64] |= uint64_t{1} << (eos % 64);
    only_eos->allowed_count = 1;
    mask_ = std::move(only_eos);
  } else if (job_) {
    job_->advance(std::numeric_limits<int64_t>::max());
    mask_ = job_->take();
    job_.reset();
  } else {
    mask_ = grammar_->allowed_tokens(state_);
  }
  // mask() and the sampler read a bit for every id of the vocabulary without checking.
  MINIGEN_ASSERT(mask_ && mask_->bits.size() * 64 >= static_cast<std::size_t>(grammar_->vocab_size()),
                 "grammar: the mask of the current state does not cover the ", grammar_->vocab_size(), " ids");
  return *mask_;
}

bool GrammarMatcher::mask_needs_work() {
  if (mask_ || finished_) return false;
  if (job_) return true;
  try {
    mask_ = grammar_->cached_tokens(state_);
  } catch (const MaskWorkLimit&) {
    return false;
  }
  return !mask_;
}

bool GrammarMatcher::work_on_mask(int64_t step_allowance) {
  ProfileZone zone(Zone::kGrammarMask);
  if (!mask_needs_work()) return true;
  if (!job_) job_ = std::make_unique<MaskJob>(*grammar_, state_);
  job_->advance(step_allowance);
  if (!job_->done()) return false;
  mask_ = job_->take();
  job_.reset();
  return true;
}

int GrammarMatcher::mask(std::span<float> logits) {
  if (logits.size() != static_cast<std::size_t>(grammar_->vocab_size())) {
    throw Error("the grammar's vocabulary has " + std::to_string(grammar_->vocab_size()) + " ids, the logits " +
                std::to_string(logits.size()));
  }
  const TokenMask& allowed = allowed_tokens();
  for (std::size_t id = 0; id < logits.size(); ++id) {
    if (!((allowed.bits[id / 64] >> (id % 64)) & 1)) logits[id] = -std::numeric_limits<float>::infinity();
  }
  return allowed.allowed_count;
}

void GrammarMatcher::accept(int token) {
  const TokenVocabulary& vocabulary = grammar_->vocabulary();
  if (token < 0 || token >= vocabulary.size()) throw Error("token " + std::to_string(token) + " is out of range");
  if (token == vocabulary.eos()) {
    if (!finished_ && !state_.accepts_end(grammar_->grammar())) {
      throw Error("eos is not allowed here: the document is not complete");
    }
    finished_ = true;
  } else {
    const std::string& bytes = vocabulary.token_bytes(token);
    if (finished_ || bytes.empty() || !state_.advance_bytes(grammar_->grammar(), bytes)) {
      throw Error("token " + std::to_string(token) + " is not allowed by the grammar here");
    }
  }
  mask_.reset();
  job_.reset();
}

bool GrammarMatcher::is_complete() const { return finished_ || state_.accepts_end(grammar_->grammar()); }

}  // namespace minigen
