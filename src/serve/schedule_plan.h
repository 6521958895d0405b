#pragma once
// What one serving step does, as plain data (vLLM v1's SchedulerOutput, in miniature). The scheduler writes a plan
// (schedule()), the model runner executes it — one forward call, then the draws — and the scheduler applies the
// outcome (apply()). A plan names sequences by id and token ranges only, so the scheduler is tested on plans alone.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "generate/sequence_state.h"

namespace minigen {

// One row of the step's forward call: the sequence's tokens [start, start + count) are fed, start being what its
// KV cache already holds.
struct PlannedFeed {
  uint64_t sequence = 0;
  int start = 0;
  int count = 0;
  bool prefill = false;  // prompt (or recomputation) work, as opposed to decoding the token drawn last step
};

// A sequence that draws its next token this step.
struct PlannedDraw {
  uint64_t sequence = 0;
  // The feed whose last logits it draws from; −1: the logits it kept while waiting for its grammar's mask.
  int feed = -1;
  // Grammar matcher steps it may spend on its mask before drawing: 0 when its mask needs none, −1 when it must
  // wait for its turn (the step's allowance went to rows waiting longer).
  int64_t mask_steps = 0;
};

struct SchedulePlan {
  int64_t step = 0;                  // the scheduler's step count, from 1
  std::vector<PlannedFeed> feeds;    // running sequences oldest first, then the ones admitted this step
  std::vector<PlannedDraw> draws;    // in sequence order
  std::vector<uint64_t> admitted;    // joined the batch this step (a preempted one joins again)
  std::vector<uint64_t> preempted;   // went back to the head of the queue, their blocks released
  int64_t prefix_cached_tokens = 0;  // prompt tokens the admitted sequences borrowed from the prefix cache

  bool empty() const { return feeds.empty() && draws.empty(); }
};

// What became of one planned draw.
struct DrawOutcome {
  enum class Kind { kDrawn, kWaiting, kFailed };
  Kind kind = Kind::kWaiting;  // kWaiting: its mask is not finished; it keeps its logits and draws later
  TokenChoice choice;          // for kDrawn
  std::string error;           // for kFailed: why the draw could not be made
  // 400 when the request's own settings made the draw impossible (its logit_bias bans every token its grammar
  // allows, its schema's mask is over the work budget), 500 otherwise.
  int error_status = 500;
};

// What the model runner returns for a plan.
struct StepOutcome {
  std::span<const float> logits;   // feeds.size() × vocab: each feed's last logits (valid until the next forward)
  std::vector<DrawOutcome> draws;  // one per plan.draws, in the same order
};

}  // namespace minigen
