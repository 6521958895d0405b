#include "serve/scheduler.h"

#include <algorithm>
#include <utility>

#include "core/assert.h"
#include "core/error.h"
#include "generate/sequence_check.h"

namespace minigen {

Scheduler::Scheduler(const ModelConfig& config, BlockPool& pool, SchedulerOptions options)
    : config_(config), pool_(pool), options_(options) {
  if (options_.max_running < 1) throw Error("max_running must be at least 1");
  if (options_.token_budget < 1) throw Error("the per-step token budget must be at least 1");
  if (options_.mask_steps_per_step < 1) throw Error("the per-step mask allowance must be at least 1");
}

uint64_t Scheduler::add(SequenceRequest request) {
  check(request);
  const SequenceRules rules{request.max_new_tokens, request.ignore_eos, config_.eos_token_id, request.stop_token_ids};
  SequenceState state(request.prompt, request.sampling, request.rng_row, request.grammar, rules);
  auto kv = std::make_unique<PagedKvSequence>(pool_, request.prefix_root);
  auto sequence = std::make_unique<ScheduledSequence>(
      ScheduledSequence{next_id_++, std::move(request), std::move(state), std::move(kv)});
  const uint64_t id = sequence->id;
  waiting_.push_back(std::move(sequence));
  return id;
}

void Scheduler::check(const SequenceRequest& request) const {
  check_sequence(config_, {request.prompt, request.max_new_tokens, request.sampling, request.grammar.get()},
                 "max_tokens");
  const int64_t total = static_cast<int64_t>(request.prompt.size()) + request.max_new_tokens;
  const int64_t blocks = (total + BlockPool::kBlockTokens - 1) / BlockPool::kBlockTokens;
  if (blocks > pool_.total_blocks()) {
    throw Error("the request needs " + std::to_string(blocks) + " KV blocks (" + std::to_string(total) +
                " tokens) but the whole KV cache has " + std::to_string(pool_.total_blocks()) + " blocks (" +
                std::to_string(pool_.total_blocks() * BlockPool::kBlockTokens) + " tokens)");
  }
}

void Scheduler::cancel(uint64_t id) {
  if (running_.erase(id) > 0) return;  // destroying the sequence releases its blocks
  std::erase_if(waiting_, [id](const std::unique_ptr<ScheduledSequence>& s) { return s->id == id; });
}

ScheduledSequence& Scheduler::running_sequence(uint64_t id) {
  const auto found = running_.find(id);
  if (found == running_.end()) throw Error("internal: sequence " + std::to_string(id) + " is not running");
  return *found->second;
}

void Scheduler::preempt(uint64_t id, SchedulePlan& plan) {
  auto found = running_.find(id);
  MINIGEN_ASSERT(found != running_.end(), "preempting sequence ", id, ", which is not running");
  std::unique_ptr<ScheduledSequence> sequence = std::move(found->second);
  running_.erase(found);
  sequence->kv->release();        // recomputed later from its tokens: prompt + what it generated so far
  sequence->held_logits.clear();  // the recomputation gives them again
  if (sequence->state.grammar()) sequence->state.grammar()->drop_mask_work();
  // Only the sequence being planned or a newer one is preempted, so no feed planned earlier loses its blocks.
  plan.preempted.push_back(id);
  waiting_.push_front(std::move(sequence));
}

// Finds `count` positions' worth of blocks for `sequence`, preempting the newest running sequences if the pool is
// short. Returns false when `sequence` itself was the newest and got preempted.
bool Scheduler::make_room(ScheduledSequence& sequence, int count, SchedulePlan& plan) {
  const int needed = sequence.kv->blocks_needed(count);
  while (pool_.available_blocks() < needed) {
    // `sequence` is running, so there is a newest one to preempt until it is `sequence` itself.
    MINIGEN_ASSERT(!running_.empty(), "the pool is short but no sequence runs");
    const uint64_t newest = running_.rbegin()->first;
    preempt(newest, plan);
    if (newest == sequence.id) return false;
  }
  sequence.kv->reserve_for(count);
  MINIGEN_ASSERT(sequence.kv->blocks_needed(count) == 0, "sequence ", sequence.id, " fed without blocks");
  return true;
}

// Reserves the first chunk of a waiting sequence: `count` tokens within `budget`, `borrowed` from the prefix cache.
bool Scheduler::try_admit(ScheduledSequence& sequence, int budget, int& count, int64_t& borrowed) {
  const int total = static_cast<int>(sequence.state.tokens().size());
  borrowed = 0;
  if (sequence.kv->length() == 0 && sequence.request.use_cache) {
    // Borrow every cached full block of the known tokens, leaving at least the last one to compute.
    borrowed = sequence.kv->attach_prefix(sequence.state.tokens(), total - 1);
  }
  count = std::min(total - sequence.kv->length(), budget);
  if (sequence.kv->blocks_needed(count) > pool_.available_blocks()) {
    sequence.kv->release();  // do not sit on borrowed blocks while waiting
    return false;
  }
  sequence.kv->reserve_for(count);
  return true;
}

// A waiting sequence that shares at least one more full block with a running sequence still reading its prompt
// waits: those blocks reach the prefix cache when that prefill's step is applied, and it borrows them then instead of
// computing them again. So the G copies of a rollout's prompt, queued together, prefill it once.
bool Scheduler::waits_for_shared_prefill(const ScheduledSequence& sequence) const {
  if (!sequence.request.use_cache || sequence.kv->length() > 0) return false;
  const std::vector<int>& tokens = sequence.state.tokens();
  for (const auto& [id, running] : running_) {
    if (running->state.generated() > 0 || !running->request.use_cache ||
        running->request.prefix_root != sequence.request.prefix_root) {
      continue;
    }
    const std::vector<int>& other = running->state.tokens();
    const std::size_t limit = std::min(tokens.size() - 1, other.size());  // attach_prefix leaves the last token
    std::size_t common = 0;
    while (common < limit && tokens[common] == other[common]) ++common;
    const std::size_t shared_blocks = common / BlockPool::kBlockTokens;
    const std::size_t published_blocks = static_cast<std::size_t>(running->kv->length()) / BlockPool::kBlockTokens;
    if (shared_blocks > published_blocks) return true;
  }
  return false;
}

// Each drawing grammar row whose mask is not known gets a share of the step's mask allowance, the longest-waiting
// first: > 0 matcher steps, 0 when it needs none, −1 when it must wait for its turn.
void Scheduler::share_mask_steps(SchedulePlan& plan) {
  std::vector<PlannedDraw*> needing;
  for (PlannedDraw& draw : plan.draws) {
    GrammarMatcher* grammar = running_.at(draw.sequence)->state.grammar();
    if (grammar != nullptr && grammar->mask_needs_work()) needing.push_back(&draw);
  }
  if (needing.empty()) return;
  const auto turn = [this](const PlannedDraw* draw) { return running_.at(draw->sequence)->mask_turn; };
  // Ties: the draws are in sequence order.
  std::stable_sort(needing.begin(), needing.end(), [&](auto* a, auto* b) { return turn(a) < turn(b); });
  const int64_t allowance = options_.mask_steps_per_step;
  const std::size_t turns =
      std::clamp<std::size_t>(static_cast<std::size_t>(allowance / kMinimumMaskSlice), 1, needing.size());
  const int64_t share = allowance / static_cast<int64_t>(turns);
  for (std::size_t k = 0; k < needing.size(); ++k) {
    if (k >= turns) {
      needing[k]->mask_steps = -1;
      continue;
    }
    needing[k]->mask_steps = share;
    running_.at(needing[k]->sequence)->mask_turn = steps_taken_;
  }
}

namespace {

// The max-min fair split of `budget` tokens among `demands` (vLLM's chunked prefill shares its budget among
// partial prefills in the same spirit): a demand at or below the fair level gets all it asks for, and what it leaves
// goes to the larger ones, which get the level; the remainder of an uneven split goes to the first (oldest) ones.
// So a short prompt arriving behind a 30,000-token one is read in the next step instead of after it.
std::vector<int> fair_shares(const std::vector<int>& demands, int budget) {
  std::vector<int> shares(demands.size(), 0);
  std::vector<std::size_t> order(demands.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return demands[a] < demands[b]; });
  std::size_t next = 0;
  for (; next < order.size(); ++next) {  // the demands below the level: granted whole, smallest first
    const int left = static_cast<int>(order.size() - next);
    if (demands[order[next]] > budget / left) break;
    shares[order[next]] = demands[order[next]];
    budget -= demands[order[next]];
  }
  const int larger = static_cast<int>(order.size() - next);
  if (larger == 0) return shares;
  std::vector<std::size_t> rest(order.begin() + static_cast<std::ptrdiff_t>(next), order.end());
  std::sort(rest.begin(), rest.end());  // back to arrival order for the remainder
  for (std::size_t k = 0; k < rest.size(); ++k) {
    shares[rest[k]] = budget / larger + (static_cast<int>(k) < budget % larger ? 1 : 0);
  }
  return shares;
}

}  // namespace

// Splits what the decodes leave of the step's budget among the sequences that want prefill work: the running ones
// still reading their prompt (oldest first), then as many waiting ones as the batch has room for. Returns each
// one's chunk by sequence id; a waiting one takes its chunk when it is admitted.
std::map<uint64_t, int> Scheduler::prefill_chunks(int budget) const {
  std::vector<uint64_t> ids;
  std::vector<int> demands;
  for (const auto& [id, sequence] : running_) {
    const int remaining = static_cast<int>(sequence->state.tokens().size()) - sequence->kv->length();
    if (remaining > 1) {
      ids.push_back(id);
      demands.push_back(remaining);
    }
  }
  int room = options_.max_running - static_cast<int>(running_.size());
  for (std::size_t index = 0; index < waiting_.size() && room > 0; ++index) {
    if (waits_for_shared_prefill(*waiting_[index])) continue;
    // An upper bound: what it borrows from the prefix cache is known only when it is admitted.
    ids.push_back(waiting_[index]->id);
    demands.push_back(static_cast<int>(waiting_[index]->state.tokens().size()) - waiting_[index]->kv->length());
    --room;
  }
  const std::vector<int> shares = fair_shares(demands, std::max(budget, 0));
  std::map<uint64_t, int> chunks;
  for (std::size_t i = 0; i < ids.size(); ++i) chunks[ids[i]] = shares[i];
  return chunks;
}

SchedulePlan Scheduler::schedule() {
  SchedulePlan plan;
  plan.step = ++steps_taken_;
  int budget = options_.token_budget;

  // Running sequences, oldest first: a decode feeds its one new token (decodes are never held back); a prefill
  // feeds its fair share of what the decodes leave of the budget.
  std::vector<uint64_t> ids;
  int decodes = 0;
  for (const auto& [id, sequence] : running_) {
    ids.push_back(id);
    if (static_cast<int>(sequence->state.tokens().size()) - sequence->kv->length() == 1) ++decodes;
  }
  const std::map<uint64_t, int> chunks = prefill_chunks(budget - decodes);
  for (uint64_t id : ids) {
    auto found = running_.find(id);
    if (found == running_.end()) continue;  // preempted by an older sequence's need
    ScheduledSequence& sequence = *found->second;
    const int remaining = static_cast<int>(sequence.state.tokens().size()) - sequence.kv->length();
    if (remaining <= 0) continue;  // waiting for its grammar's mask, with its logits kept
    const int count = remaining == 1 ? 1 : std::min({remaining, budget, chunks.at(id)});
    if (count <= 0) continue;
    const int start = sequence.kv->length();
    if (!make_room(sequence, count, plan)) continue;
    budget -= count;
    const bool decode =
        count == 1 && sequence.state.generated() > 0 && start + 1 == static_cast<int>(sequence.state.tokens().size());
    plan.feeds.push_back({id, start, count, !decode});
  }
  // New (or preempted) sequences join while there is budget, room in the batch and blocks in the pool.
  // First come first served, but a sequence about to borrow a prefix another one is computing lets later ones pass.
  for (std::size_t index = 0;
       index < waiting_.size() && budget > 0 && static_cast<int>(running_.size()) < options_.max_running;) {
    ScheduledSequence& sequence = *waiting_[index];
    if (waits_for_shared_prefill(sequence)) {
      ++index;
      continue;
    }
    int count = 0;
    int64_t borrowed = 0;
    const auto share = chunks.find(sequence.id);
    const int chunk = share == chunks.end() ? budget : std::min(budget, share->second);
    if (chunk <= 0 || !try_admit(sequence, chunk, count, borrowed)) break;  // later ones' shares are no larger
    budget -= count;
    plan.prefix_cached_tokens += borrowed;
    if (sequence.cached_tokens < 0) sequence.cached_tokens = static_cast<int>(borrowed);
    const uint64_t id = sequence.id;
    plan.feeds.push_back({id, sequence.kv->length(), count, true});
    plan.admitted.push_back(id);
    running_.emplace(id, std::move(waiting_[index]));
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(index));
  }
  // Who draws: rows still waiting for their mask (from their kept logits), and rows whose every known token is
  // cached once this step's forward call is done.
  for (int feed = 0; feed < static_cast<int>(plan.feeds.size()); ++feed) {
    const PlannedFeed& planned = plan.feeds[feed];
    const ScheduledSequence& sequence = *running_.at(planned.sequence);
    if (planned.start + planned.count == static_cast<int>(sequence.state.tokens().size())) {
      plan.draws.push_back({planned.sequence, feed, 0});
    }
  }
  for (const auto& [id, sequence] : running_) {
    if (!sequence->held_logits.empty()) plan.draws.push_back({id, -1, 0});
  }
  std::sort(plan.draws.begin(), plan.draws.end(),
            [](const PlannedDraw& a, const PlannedDraw& b) { return a.sequence < b.sequence; });
  share_mask_steps(plan);
  return plan;
}

SequenceToken Scheduler::accept(ScheduledSequence& sequence, const DrawOutcome& drawn) {
  SequenceToken out;
  out.sequence = sequence.id;
  out.step = sequence.state.generated();
  if (drawn.kind == DrawOutcome::Kind::kFailed) {  // this sequence alone ends; its neighbours carry on
    out.token = -1;
    out.finished = true;
    out.finish_reason = "error";
    out.error = drawn.error;
    out.error_status = drawn.error_status;
    return out;
  }
  const TokenChoice& choice = drawn.choice;
  sequence.state.accept(choice.token);
  out.token = choice.token;
  out.probability = choice.probability;
  out.kept_candidates = choice.kept_candidates;
  out.grammar_allowed = choice.grammar_allowed;
  out.top = choice.top;
  out.has_raw_logprob = choice.has_raw_logprob;
  out.raw = choice.raw;
  out.cached_tokens = std::max(sequence.cached_tokens, 0);
  out.finished = sequence.state.finished();
  out.finish_reason = sequence.state.finish_reason();
  return out;
}

std::vector<SequenceToken> Scheduler::apply(const SchedulePlan& plan, const StepOutcome& outcome) {
  if (outcome.draws.size() != plan.draws.size()) throw Error("internal: one draw outcome per planned draw");
  counters_.prefix_cached_tokens += plan.prefix_cached_tokens;
  counters_.preemptions += static_cast<int64_t>(plan.preempted.size());
  if (!plan.feeds.empty()) ++counters_.steps;
  for (const PlannedFeed& feed : plan.feeds) {
    if (feed.prefill) counters_.prefill_tokens += feed.count;
    ScheduledSequence& sequence = *running_.at(feed.sequence);
    if (sequence.request.use_cache) sequence.kv->publish_full_blocks(sequence.state.tokens());
  }
  const std::size_t vocab = static_cast<std::size_t>(config_.vocab_size);
  std::vector<SequenceToken> produced;
  for (std::size_t i = 0; i < plan.draws.size(); ++i) {
    const PlannedDraw& draw = plan.draws[i];
    ScheduledSequence& sequence = *running_.at(draw.sequence);
    if (outcome.draws[i].kind == DrawOutcome::Kind::kWaiting) {
      if (sequence.held_logits.empty()) {
        const std::span<const float> logits =
            outcome.logits.subspan(static_cast<std::size_t>(draw.feed) * vocab, vocab);
        sequence.held_logits.assign(logits.begin(), logits.end());
      }
      continue;
    }
    sequence.held_logits.clear();
    sequence.mask_turn = steps_taken_;  // its next mask, if it needs one, queues behind those already waiting
    produced.push_back(accept(sequence, outcome.draws[i]));
  }
  for (const SequenceToken& token : produced) {
    if (token.token >= 0) ++counters_.generated_tokens;
    ScheduledSequence& sequence = *running_.at(token.sequence);
    if (token.finished) {
      running_.erase(token.sequence);
    } else if (!sequence.request.use_cache) {
      sequence.kv->release();  // no cache: the next step feeds every token again, as MiniMind with use_cache=False
    }
  }
  return produced;
}

}  // namespace minigen
