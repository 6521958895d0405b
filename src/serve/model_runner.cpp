#include "serve/model_runner.h"

#include <exception>
#include <span>

#include "grammar/compiled_grammar.h"
#include "sampling/sampling_params.h"

namespace minigen {
namespace {

DrawOutcome failed(const std::exception& error, int status) {
  DrawOutcome outcome;
  outcome.kind = DrawOutcome::Kind::kFailed;
  outcome.error = error.what();
  outcome.error_status = status;
  return outcome;
}

// A draw that cannot be made ends this sequence alone; its neighbours in the batch carry on. Two causes are the
// request's own and show only at this step: a grammar state whose mask is over its work budget, and a logit_bias
// that bans every token the grammar allows here. Anything else is a defence (requests are validated), not a path.
DrawOutcome draw_one(ScheduledSequence& sequence, const PlannedDraw& draw, std::span<const float> logits) {
  try {
    GrammarMatcher* grammar = sequence.state.grammar();
    if (draw.mask_steps < 0 || (draw.mask_steps > 0 && !grammar->work_on_mask(draw.mask_steps))) return {};
    thread_local std::vector<float> row_logits;  // the chain filters in place; one per pool thread
    row_logits.assign(logits.begin(), logits.end());
    DrawOutcome outcome;
    outcome.kind = DrawOutcome::Kind::kDrawn;
    outcome.choice = sequence.state.choose(row_logits, sequence.request.top_candidates, sequence.request.raw_logprobs);
    return outcome;
  } catch (const MaskWorkLimit& error) {
    return failed(error, 400);
  } catch (const InvalidSamplingParam& error) {
    return failed(error, 400);
  } catch (const std::exception& error) {
    return failed(error, 500);
  }
}

}  // namespace

StepOutcome ModelRunner::run(const SchedulePlan& plan, Scheduler& scheduler) {
  StepOutcome outcome;
  if (!plan.feeds.empty()) {
    std::vector<ForwardRow> rows;
    for (const PlannedFeed& feed : plan.feeds) {
      ScheduledSequence& sequence = scheduler.running_sequence(feed.sequence);
      rows.push_back(ForwardRow{sequence.kv.get(),
                                std::span<const int>(sequence.state.tokens()).subspan(feed.start, feed.count), false,
                                sequence.request.adapter.get()});
    }
    outcome.logits = transformer_->forward(rows);
  }
  const std::size_t vocab = static_cast<std::size_t>(transformer_->model().config.vocab_size);
  std::vector<ScheduledSequence*> sequences;  // looked up here: the pool's threads only read their own entry
  for (const PlannedDraw& draw : plan.draws) sequences.push_back(&scheduler.running_sequence(draw.sequence));
  outcome.draws.resize(plan.draws.size());
  transformer_->pool().parallel_for(static_cast<int64_t>(plan.draws.size()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const PlannedDraw& draw = plan.draws[i];
      ScheduledSequence& sequence = *sequences[i];
      const std::span<const float> logits =
          draw.feed >= 0 ? outcome.logits.subspan(static_cast<std::size_t>(draw.feed) * vocab, vocab)
                         : std::span<const float>(sequence.held_logits);
      outcome.draws[i] = draw_one(sequence, draw, logits);
    }
  });
  return outcome;
}

std::vector<SequenceToken> serve_step(Scheduler& scheduler, ModelRunner& runner) {
  const SchedulePlan plan = scheduler.schedule();
  if (plan.empty()) return {};
  return scheduler.apply(plan, runner.run(plan, scheduler));
}

}  // namespace minigen
