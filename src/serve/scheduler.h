#pragma once
// Continuous batching over the paged KV cache (vLLM's scheduling, in miniature), as three steps:
//   schedule()  plans one step (serve/schedule_plan.h): which sequences feed which tokens, who draws, who waits;
//               admits waiting sequences and reserves their blocks, preempting the newest when the pool is short
//   run         the model runner executes the plan: one forward call, then the draws (serve/model_runner.h)
//   apply()     appends the drawn tokens, publishes full blocks to the prefix cache, ends finished sequences
// The scheduler holds no model: it is tested on plans alone.
//
// Every step is at most one forward call. It carries one token for every running sequence that is decoding, plus
// prefill chunks of sequences still reading their prompt, under a per-step token budget that the prefills share
// max-min fairly (a 4-token prompt behind a 30,000-token one is read in the next step, not after the long one);
// waiting sequences join between steps, first come first served, borrowing whatever prefix the prefix cache already
// holds. When a sequence needs a block and the pool has none, the newest running sequence is preempted: its blocks go
// back to the pool and it waits at the head of the queue to be recomputed (prompt + the tokens it already generated).
// A grammar row whose mask needs more matcher steps than its share of the step's allowance waits for the mask with
// its logits kept, and is not fed, while the other rows go on: one costly mask never holds the batch.
//
// A sequence's tokens never depend on its neighbours: the forward pass is batch-invariant, recomputed or
// prefix-cached K/V are the same bits as decoded ones, and each draw is keyed by (seed, row in its request, step).
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cache/block_pool.h"
#include "cache/paged_sequence.h"
#include "generate/sequence_state.h"
#include "model/config.h"
#include "request/job.h"
#include "sampling/candidates.h"
#include "serve/schedule_plan.h"

namespace minigen {

// One generated token of one sequence.
struct SequenceToken {
  uint64_t sequence = 0;
  int token = 0;
  int step = 0;           // 0 for the first generated token
  float probability = 0;  // of the chosen token in the distribution it was drawn from
  int kept_candidates = 0;
  int grammar_allowed = -1;    // ids the sequence's grammar allowed at this step; −1 without a grammar
  std::vector<Candidate> top;  // the most likely kept candidates, when asked for
  bool has_raw_logprob = false;
  RawLogprobs raw;
  int cached_tokens = 0;  // prompt tokens borrowed from the prefix cache when it was first admitted
  bool finished = false;
  std::string finish_reason;  // "stop" (eos) or "length" once finished; "error" when drawing failed (token −1)
  std::string error;          // why, for "error"
  // For "error": 400 when the request's own settings made the draw impossible (its logit_bias bans every token its
  // grammar allows, its schema's mask is over the work budget), 500 otherwise.
  int error_status = 500;
};

// Matcher steps of grammar masks per scheduler step, shared by every row whose mask misses the cache (a mask is
// computed in slices, grammar/compiled_grammar.h). 12,000 steps are about one walk of the shipped vocabulary's trie
// (10,949 nodes) with one parse alive, 0.25–0.6 ms at 20–50 ns a step (about 38 measured under load): about one
// decode step of the shipped model (0.5 ms), so a costly mask at most about doubles its neighbours' inter-token
// time. The tests' and examples' schemas need at most 11,000 steps a mask and finish in the step they are asked
// in; a 1,000-value enum's 336,000 take 28 steps.
inline constexpr int64_t kMaskStepsPerStep = 12'000;
// The smallest share of that allowance a row gets: up to three rows' masks advance each step; more rows take
// turns, the one waiting longest first. Smaller slices would spread every mask over more steps.
inline constexpr int64_t kMinimumMaskSlice = 4'000;

struct SchedulerOptions {
  int max_running = 32;    // sequences in the batch at once
  int token_budget = 256;  // tokens fed per step (decodes first, then prefill chunks)
  int64_t mask_steps_per_step = kMaskStepsPerStep;
};

struct SchedulerCounters {
  int64_t steps = 0;
  int64_t preemptions = 0;
  int64_t prefill_tokens = 0;        // prompt tokens computed (prefix-cache hits excluded)
  int64_t prefix_cached_tokens = 0;  // prompt tokens taken from the prefix cache
  int64_t generated_tokens = 0;
};

// A sequence the scheduler holds: the request, its generation state and its KV blocks.
struct ScheduledSequence {
  uint64_t id;
  SequenceRequest request;
  SequenceState state;  // prompt + generated tokens, sampler chain, grammar matcher, end rules
  std::unique_ptr<PagedKvSequence> kv;
  // The logits of its next draw, kept while its grammar's mask is computed over later steps (empty otherwise).
  // Meanwhile it is not fed (it has nothing new to feed); once the mask is done it draws from them, the same
  // token it would have drawn at once.
  std::vector<float> held_logits = {};
  int64_t mask_turn = 0;   // the step it last drew or got mask steps in: the one waiting longest goes first
  int cached_tokens = -1;  // prompt tokens borrowed from the prefix cache at its first admission; −1 before it
};

class Scheduler {
 public:
  // `config`: the model's shape, for the checks (vocabulary, context, eos).
  Scheduler(const ModelConfig& config, BlockPool& pool, SchedulerOptions options);

  // Queues a sequence. Throws minigen::Error (with a message for the client) when it can never fit: prompt plus
  // max_new_tokens beyond the model's context or beyond the whole pool.
  uint64_t add(SequenceRequest request);
  // The same checks without queueing; safe from any thread (reads only the model's shape and the pool's size).
  void check(const SequenceRequest& request) const;
  // Drops a sequence (finished by a stop string, or its client went away); its blocks return at once.
  void cancel(uint64_t sequence);

  // Plans the next step. Admits and preempts as it goes: the blocks of every planned feed are reserved.
  SchedulePlan schedule();
  // Applies what the runner did with `plan`; returns the tokens it produced (and the failed draws), in sequence
  // order. Finished sequences leave the batch and their blocks return to the pool.
  std::vector<SequenceToken> apply(const SchedulePlan& plan, const StepOutcome& outcome);

  // A running sequence (the runner reads its tokens and KV, and draws for it).
  ScheduledSequence& running_sequence(uint64_t id);

  bool idle() const { return running_.empty() && waiting_.empty(); }
  int running() const { return static_cast<int>(running_.size()); }
  int waiting() const { return static_cast<int>(waiting_.size()); }
  const SchedulerCounters& counters() const { return counters_; }
  const BlockPool& pool() const { return pool_; }
  int vocab_size() const { return config_.vocab_size; }

 private:
  bool try_admit(ScheduledSequence& sequence, int budget, int& count, int64_t& borrowed);
  bool waits_for_shared_prefill(const ScheduledSequence& sequence) const;
  std::map<uint64_t, int> prefill_chunks(int budget) const;
  bool make_room(ScheduledSequence& sequence, int count, SchedulePlan& plan);
  void preempt(uint64_t id, SchedulePlan& plan);
  void share_mask_steps(SchedulePlan& plan);
  SequenceToken accept(ScheduledSequence& sequence, const DrawOutcome& drawn);

  ModelConfig config_;
  BlockPool& pool_;
  SchedulerOptions options_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::unique_ptr<ScheduledSequence>> running_;  // by arrival: the newest is preempted first
  std::deque<std::unique_ptr<ScheduledSequence>> waiting_;
  SchedulerCounters counters_;
  int64_t steps_taken_ = 0;  // schedule() calls, with or without a forward
};

}  // namespace minigen
