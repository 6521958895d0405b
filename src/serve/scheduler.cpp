#include "serve/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "core/error.h"

namespace minigen {

Scheduler::Scheduler(Transformer& transformer, BlockPool& pool, SchedulerOptions options)
    : transformer_(transformer), pool_(pool), options_(options) {
  if (options_.max_running < 1) throw Error("max_running must be at least 1");
  if (options_.token_budget < 1) throw Error("the per-step token budget must be at least 1");
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
  sequence->kv->release();  // recomputed later from its tokens: prompt + what it generated so far
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

std::vector<SequenceToken> Scheduler::step() {
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
  if (plan.empty()) return {};

  std::vector<ForwardRow> rows;
  for (const Planned& p : plan) {
    const int start = p.sequence->kv->length();
    rows.push_back(
        ForwardRow{p.sequence->kv.get(), std::span<const int>(p.sequence->tokens).subspan(start, p.count), false});
    const bool decode =
        p.count == 1 && start + 1 == static_cast<int>(p.sequence->tokens.size()) && p.sequence->generated > 0;
    if (!decode) counters_.prefill_tokens += p.count;
  }
  const std::vector<float>& logits = transformer_.forward(rows);
  ++counters_.steps;

  // Sequences whose every known token is now cached draw their next token. Each draw depends only on its own
  // sequence (counter-based randomness), so they run side by side on the pool.
  std::vector<Planned*> ready;
  for (Planned& p : plan) {
    if (p.sequence->request.use_cache) p.sequence->kv->publish_full_blocks(p.sequence->tokens);
    if (p.sequence->kv->length() == static_cast<int>(p.sequence->tokens.size())) ready.push_back(&p);
  }
  std::vector<SequenceToken> produced(ready.size());
  const int vocab = transformer_.model().config.vocab_size;
  transformer_.pool().parallel_for(static_cast<int64_t>(ready.size()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const std::size_t row = static_cast<std::size_t>(ready[i] - plan.data());
      // A draw that cannot be made ends this sequence alone; its neighbours in the batch carry on. Two causes
      // are the request's own and show only at this step: a grammar state whose mask is over its work budget
      // (instead of holding the whole batch while it is computed), and a logit_bias that bans every token the
      // grammar allows here. Anything else is a defence (requests are validated), not a path.
      const auto fail = [&](const std::exception& error, int status) {
        SequenceToken failed;
        failed.sequence = ready[i]->sequence->id;
        failed.token = -1;
        failed.step = ready[i]->sequence->generated;
        failed.finished = true;
        failed.finish_reason = "error";
        failed.error = error.what();
        failed.error_status = status;
        produced[i] = std::move(failed);
      };
      try {
        produced[i] = sample(*ready[i]->sequence, logits.data() + row * vocab);
      } catch (const MaskWorkLimit& error) {
        fail(error, 400);
      } catch (const InvalidSamplingParam& error) {
        fail(error, 400);
      } catch (const std::exception& error) {
        fail(error, 500);
      }
    }
  });
  for (std::size_t i = 0; i < ready.size(); ++i) {
    Sequence& sequence = *ready[i]->sequence;
    if (produced[i].token >= 0) ++counters_.generated_tokens;
    if (produced[i].finished) {
      running_.erase(sequence.id);
    } else if (!sequence.request.use_cache) {
      sequence.kv->release();  // no cache: the next step feeds every token again, as MiniMind with use_cache=False
    }
  }
  return produced;
}

}  // namespace minigen
