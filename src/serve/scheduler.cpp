#include "serve/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>

#include "core/error.h"

namespace minigen {

Scheduler::Scheduler(Transformer& transformer, BlockPool& pool, SchedulerOptions options)
    : transformer_(transformer), pool_(pool), options_(options) {
  if (options_.max_running < 1) throw Error("max_running must be at least 1");
  if (options_.token_budget < 1) throw Error("the per-step token budget must be at least 1");
  if (options_.mask_steps_per_step < 1) throw Error("the per-step mask allowance must be at least 1");
}

uint64_t Scheduler::add(SequenceRequest request) {
  check(request);
  auto sequence = std::make_unique<Sequence>(Sequence{next_id_++, request, SamplerChain(request.sampling),
                                                      request.prompt, 0, std::make_unique<PagedKvSequence>(pool_)});
  if (sequence->request.grammar) sequence->grammar = std::make_unique<GrammarMatcher>(sequence->request.grammar);
  const uint64_t id = sequence->id;
  waiting_.push_back(std::move(sequence));
  return id;
}

void Scheduler::check(const SequenceRequest& request) const {
  const ModelConfig& config = transformer_.model().config;
  if (request.prompt.empty()) throw Error("the prompt is empty");
  if (request.max_new_tokens < 1) throw Error("max_tokens must be at least 1");
  for (int id : request.prompt) {
    if (id < 0 || id >= config.vocab_size)
      throw Error("prompt token id " + std::to_string(id) + " is outside the vocabulary");
  }
  const int64_t total = static_cast<int64_t>(request.prompt.size()) + request.max_new_tokens;
  if (total > config.max_position_embeddings) {
    throw Error("prompt (" + std::to_string(request.prompt.size()) + " tokens) + max_tokens (" +
                std::to_string(request.max_new_tokens) + ") exceeds the model's context of " +
                std::to_string(config.max_position_embeddings) + " tokens");
  }
  const int64_t blocks = (total + BlockPool::kBlockTokens - 1) / BlockPool::kBlockTokens;
  if (blocks > pool_.total_blocks()) {
    throw Error("the request needs " + std::to_string(blocks) + " KV blocks (" + std::to_string(total) +
                " tokens) but the whole KV cache has " + std::to_string(pool_.total_blocks()) + " blocks (" +
                std::to_string(pool_.total_blocks() * BlockPool::kBlockTokens) + " tokens)");
  }
  request.sampling.validate();
  request.sampling.check_vocabulary(config.vocab_size);
  if (request.grammar && (request.grammar->vocab_size() != config.vocab_size ||
                          request.grammar->vocabulary().eos() != config.eos_token_id)) {
    throw Error("the request's grammar was compiled for another vocabulary");
  }
}

void Scheduler::cancel(uint64_t id) {
  if (running_.erase(id) > 0) return;  // destroying the sequence releases its blocks
  std::erase_if(waiting_, [id](const std::unique_ptr<Sequence>& s) { return s->id == id; });
}

void Scheduler::preempt(uint64_t id) {
  auto found = running_.find(id);
  std::unique_ptr<Sequence> sequence = std::move(found->second);
  running_.erase(found);
  sequence->kv->release();        // recomputed later from its tokens: prompt + what it generated so far
  sequence->held_logits.clear();  // the recomputation gives them again
  if (sequence->grammar) sequence->grammar->drop_mask_work();
  waiting_.push_front(std::move(sequence));
  ++counters_.preemptions;
}

// Finds `count` positions' worth of blocks for `sequence`, preempting the newest running sequences if the pool is
// short. Returns false when `sequence` itself was the newest and got preempted.
bool Scheduler::make_room(Sequence& sequence, int count) {
  const int needed = sequence.kv->blocks_needed(count);
  while (pool_.available_blocks() < needed) {
    const uint64_t newest = running_.rbegin()->first;
    preempt(newest);
    if (newest == sequence.id) return false;
  }
  sequence.kv->reserve_for(count);
  return true;
}

bool Scheduler::try_admit(Sequence& sequence, int& budget) {
  const int total = static_cast<int>(sequence.tokens.size());
  if (sequence.kv->length() == 0 && sequence.request.use_cache) {
    // Borrow every cached full block of the known tokens, leaving at least the last one to compute.
    counters_.prefix_cached_tokens += sequence.kv->attach_prefix(sequence.tokens, total - 1);
  }
  const int count = std::min(total - sequence.kv->length(), budget);
  if (sequence.kv->blocks_needed(count) > pool_.available_blocks()) {
    sequence.kv->release();  // do not sit on borrowed blocks while waiting
    return false;
  }
  sequence.kv->reserve_for(count);
  budget -= count;
  return true;
}

SequenceToken Scheduler::sample(Sequence& sequence, const float* logits) {
  const int vocab = transformer_.model().config.vocab_size;
  thread_local std::vector<float> row_logits;  // sample() runs on the pool's threads, one sequence each
  row_logits.assign(logits, logits + vocab);
  SamplingContext context{sequence.tokens, sequence.request.rng_row, static_cast<uint64_t>(sequence.generated)};
  int grammar_allowed = -1;
  if (sequence.grammar) {  // the grammar's mask comes first in the chain; the matcher follows the chosen token
    const TokenMask& allowed = sequence.grammar->allowed_tokens();
    context.allowed_tokens = allowed.bits;
    grammar_allowed = allowed.allowed_count;
  }
  const SampledToken chosen = sequence.sampler.sample(row_logits, context);  // filters in place
  if (sequence.grammar) sequence.grammar->accept(chosen.token);
  SequenceToken out;
  out.grammar_allowed = grammar_allowed;
  out.sequence = sequence.id;
  out.token = chosen.token;
  out.step = sequence.generated;
  out.kept_candidates = chosen.kept_count;
  if (sequence.request.top_candidates > 0) {
    DrawDistribution drawn = describe_draw(row_logits, chosen.token, sequence.request.top_candidates);
    out.probability = drawn.chosen_probability;
    out.top = std::move(drawn.top);
  }
  sequence.tokens.push_back(chosen.token);
  ++sequence.generated;
  if (!sequence.request.ignore_eos && chosen.token == transformer_.model().config.eos_token_id) {
    out.finished = true;
    out.finish_reason = "stop";
  } else if (sequence.generated >= sequence.request.max_new_tokens) {
    out.finished = true;
    out.finish_reason = "length";
  }
  return out;
}

// Each ready grammar row whose mask is not known gets a share of the step's mask allowance, the longest-waiting
// first: > 0 matcher steps, 0 when it needs none, −1 when it must wait for its turn.
std::vector<int64_t> Scheduler::share_mask_steps(const std::vector<Ready>& ready) {
  std::vector<int64_t> shares(ready.size(), 0);
  std::vector<std::size_t> needing;
  for (std::size_t i = 0; i < ready.size(); ++i) {
    const Sequence& sequence = *ready[i].sequence;
    if (sequence.grammar && sequence.grammar->mask_needs_work()) needing.push_back(i);
  }
  if (needing.empty()) return shares;
  std::stable_sort(needing.begin(), needing.end(), [&](std::size_t a, std::size_t b) {
    return ready[a].sequence->mask_turn < ready[b].sequence->mask_turn;  // ties: ready is in sequence order
  });
  const int64_t allowance = options_.mask_steps_per_step;
  const std::size_t turns =
      std::clamp<std::size_t>(static_cast<std::size_t>(allowance / kMinimumMaskSlice), 1, needing.size());
  const int64_t share = allowance / static_cast<int64_t>(turns);
  for (std::size_t k = 0; k < needing.size(); ++k) {
    if (k >= turns) {
      shares[needing[k]] = -1;
      continue;
    }
    shares[needing[k]] = share;
    ready[needing[k]].sequence->mask_turn = steps_taken_;
  }
  return shares;
}

// The mask phase and the draws, side by side on the pool: each depends only on its own sequence (counter-based
// randomness, its own matcher). Returns one token per ready sequence that drew, in the order of `ready`; the
// others keep their logits for a later step.
std::vector<SequenceToken> Scheduler::draw(const std::vector<Ready>& ready) {
  const std::vector<int64_t> shares = share_mask_steps(ready);
  std::vector<std::optional<SequenceToken>> produced(ready.size());
  transformer_.pool().parallel_for(static_cast<int64_t>(ready.size()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      Sequence& sequence = *ready[i].sequence;
      // A draw that cannot be made ends this sequence alone; its neighbours in the batch carry on. Two causes
      // are the request's own and show only at this step: a grammar state whose mask is over its work budget,
      // and a logit_bias that bans every token the grammar allows here. Anything else is a defence (requests are
      // validated), not a path.
      const auto fail = [&](const std::exception& error, int status) {
        SequenceToken failed;
        failed.sequence = sequence.id;
        failed.token = -1;
        failed.step = sequence.generated;
        failed.finished = true;
        failed.finish_reason = "error";
        failed.error = error.what();
        failed.error_status = status;
        produced[i] = std::move(failed);
      };
      try {
        if (shares[i] < 0 || (shares[i] > 0 && !sequence.grammar->work_on_mask(shares[i]))) continue;
        produced[i] = sample(sequence, ready[i].logits);
      } catch (const MaskWorkLimit& error) {
        fail(error, 400);
      } catch (const InvalidSamplingParam& error) {
        fail(error, 400);
      } catch (const std::exception& error) {
        fail(error, 500);
      }
    }
  });
  const int vocab = transformer_.model().config.vocab_size;
  std::vector<SequenceToken> drawn;
  for (std::size_t i = 0; i < ready.size(); ++i) {
    Sequence& sequence = *ready[i].sequence;
    if (!produced[i]) {
      if (sequence.held_logits.empty()) sequence.held_logits.assign(ready[i].logits, ready[i].logits + vocab);
      continue;
    }
    sequence.held_logits.clear();
    sequence.mask_turn = steps_taken_;  // its next mask, if it needs one, queues behind those already waiting
    drawn.push_back(std::move(*produced[i]));
  }
  return drawn;
}

std::vector<SequenceToken> Scheduler::step() {
  ++steps_taken_;
  struct Planned {
    Sequence* sequence;
    int count;
  };
  std::vector<Planned> plan;
  int budget = options_.token_budget;

  // Running sequences, oldest first: a decode feeds its one new token; a prefill feeds a chunk of what is left.
  std::vector<uint64_t> ids;
  for (const auto& [id, sequence] : running_) ids.push_back(id);
  for (uint64_t id : ids) {
    auto found = running_.find(id);
    if (found == running_.end()) continue;  // preempted by an older sequence's need
    Sequence& sequence = *found->second;
    const int remaining = static_cast<int>(sequence.tokens.size()) - sequence.kv->length();
    const int count = remaining == 1 ? 1 : std::min(remaining, budget);  // decodes are never held back
    if (count <= 0) continue;
    if (!make_room(sequence, count)) continue;
    budget -= count;
    plan.push_back({&sequence, count});
  }
  // New (or preempted) sequences join while there is budget, room in the batch and blocks in the pool.
  while (!waiting_.empty() && budget > 0 && static_cast<int>(running_.size()) < options_.max_running) {
    Sequence& sequence = *waiting_.front();
    const int before = budget;
    if (!try_admit(sequence, budget)) break;
    const uint64_t id = sequence.id;
    running_.emplace(id, std::move(waiting_.front()));
    waiting_.pop_front();
    plan.push_back({running_.at(id).get(), before - budget});
  }
  std::vector<Ready> ready;  // rows still waiting for their mask, then the rows this forward call completes
  for (const auto& [id, sequence] : running_) {
    if (!sequence->held_logits.empty()) ready.push_back({sequence.get(), sequence->held_logits.data()});
  }
  if (plan.empty() && ready.empty()) return {};

  if (!plan.empty()) {
    std::vector<ForwardRow> rows;
    for (const Planned& p : plan) {
      const int start = p.sequence->kv->length();
      rows.push_back(
          ForwardRow{p.sequence->kv.get(), std::span<const int>(p.sequence->tokens).subspan(start, p.count), false});
      const bool decode =
          p.count == 1 && start + 1 == static_cast<int>(p.sequence->tokens.size()) && p.sequence->generated > 0;
      if (!decode) counters_.prefill_tokens += p.count;
    }
    const float* logits = transformer_.forward(rows).data();
    ++counters_.steps;
    // Sequences whose every known token is now cached draw their next token.
    const int vocab = transformer_.model().config.vocab_size;
    for (std::size_t row = 0; row < plan.size(); ++row) {
      Sequence& sequence = *plan[row].sequence;
      if (sequence.request.use_cache) sequence.kv->publish_full_blocks(sequence.tokens);
      if (sequence.kv->length() == static_cast<int>(sequence.tokens.size())) {
        ready.push_back({&sequence, logits + row * vocab});
      }
    }
  }
  std::sort(ready.begin(), ready.end(), [](const Ready& a, const Ready& b) { return a.sequence->id < b.sequence->id; });

  std::vector<SequenceToken> produced = draw(ready);
  for (const SequenceToken& token : produced) {
    Sequence& sequence = *running_.at(token.sequence);
    if (token.token >= 0) ++counters_.generated_tokens;
    if (token.finished) {
      running_.erase(sequence.id);
    } else if (!sequence.request.use_cache) {
      sequence.kv->release();  // no cache: the next step feeds every token again, as MiniMind with use_cache=False
    }
  }
  return produced;
}

}  // namespace minigen
