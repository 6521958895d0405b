// The scheduler on plans alone, without a model: token budgets and chunked prefill, decodes first, admission,
// preemption of the newest, prefix-cache hits and the sharing of the mask allowance. The runner's side — the tokens
// a plan produces — is tested in model_runner_test.cpp.
#include "serve/scheduler.h"

#include <gtest/gtest.h>

#include <ostream>
#include <vector>

#include "model/test_models.h"
#include "serve/enum_grammar_test_util.h"

namespace minigen {
namespace {

SequenceRequest request_of(std::vector<int> prompt, int max_new_tokens) {
  SequenceRequest request;
  request.prompt = std::move(prompt);
  request.max_new_tokens = max_new_tokens;
  request.sampling.greedy = true;
  request.ignore_eos = true;
  return request;
}

// What a runner would do with the plan, without a model: every feed's positions are cached (their K/V left as
// zeros), every draw is made with the token 100 + the sequence's id, and draws told to wait (mask_steps −1) wait,
// with logits of zeros.
struct FakeRun {
  std::vector<float> logits;
  StepOutcome outcome;
};
FakeRun fake_run(Scheduler& scheduler, const SchedulePlan& plan, int vocab) {
  FakeRun run;
  for (const PlannedFeed& feed : plan.feeds) scheduler.running_sequence(feed.sequence).kv->advance(feed.count);
  run.logits.assign(plan.feeds.size() * static_cast<std::size_t>(vocab), 0.0f);
  run.outcome.logits = run.logits;
  for (const PlannedDraw& draw : plan.draws) {
    DrawOutcome drawn;
    if (draw.mask_steps >= 0) {
      drawn.kind = DrawOutcome::Kind::kDrawn;
      drawn.choice.token = 100 + static_cast<int>(draw.sequence);
    }
    run.outcome.draws.push_back(drawn);
  }
  return run;
}

std::vector<SequenceToken> apply_fake(Scheduler& scheduler, const SchedulePlan& plan) {
  const FakeRun run = fake_run(scheduler, plan, scheduler.vocab_size());
  return scheduler.apply(plan, run.outcome);
}

struct Feed {
  uint64_t sequence;
  int start;
  int count;
  bool prefill;
  bool operator==(const Feed&) const = default;
  friend std::ostream& operator<<(std::ostream& out, const Feed& feed) {
    return out << "{" << feed.sequence << ", " << feed.start << ", " << feed.count << ", " << feed.prefill << "}";
  }
};
std::vector<Feed> feeds_of(const SchedulePlan& plan) {
  std::vector<Feed> feeds;
  for (const PlannedFeed& feed : plan.feeds) feeds.push_back({feed.sequence, feed.start, feed.count, feed.prefill});
  return feeds;
}
std::vector<uint64_t> drawing(const SchedulePlan& plan) {
  std::vector<uint64_t> ids;
  for (const PlannedDraw& draw : plan.draws) ids.push_back(draw.sequence);
  return ids;
}

TEST(SchedulerPlan, ALongPromptIsReadInChunksOfTheBudgetAndDrawsOnceItIsRead) {
  const ModelConfig config = testing::test_config("tiny");
  BlockPool pool(config.kv_layout(), 8);
  Scheduler scheduler(config, pool, {4, 8});
  const uint64_t id = scheduler.add(request_of(testing::test_prompt(20, 1), 2));

  SchedulePlan plan = scheduler.schedule();
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{id, 0, 8, true}}));
  EXPECT_EQ(plan.admitted, std::vector<uint64_t>{id});
  EXPECT_TRUE(plan.draws.empty());
  EXPECT_TRUE(apply_fake(scheduler, plan).empty());

  plan = scheduler.schedule();
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{id, 8, 8, true}}));
  EXPECT_TRUE(plan.draws.empty());
  apply_fake(scheduler, plan);

  plan = scheduler.schedule();
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{id, 16, 4, true}}));
  ASSERT_EQ(plan.draws.size(), 1u);
  EXPECT_EQ(plan.draws[0].feed, 0);
  std::vector<SequenceToken> produced = apply_fake(scheduler, plan);
  ASSERT_EQ(produced.size(), 1u);
  EXPECT_EQ(produced[0].token, 100 + static_cast<int>(id));
  EXPECT_EQ(produced[0].step, 0);
  EXPECT_FALSE(produced[0].finished);

  plan = scheduler.schedule();  // the decode of the token just drawn
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{id, 20, 1, false}}));
  produced = apply_fake(scheduler, plan);
  ASSERT_EQ(produced.size(), 1u);
  EXPECT_TRUE(produced[0].finished);
  EXPECT_EQ(produced[0].finish_reason, "length");
  EXPECT_TRUE(scheduler.idle());
  EXPECT_EQ(scheduler.counters().prefill_tokens, 20);
  EXPECT_EQ(scheduler.counters().generated_tokens, 2);
  EXPECT_EQ(scheduler.counters().steps, 4);
  EXPECT_EQ(pool.referenced_blocks(), 0);
}

// Decodes go first and always go, even past the budget; a waiting sequence joins only with budget left.
TEST(SchedulerPlan, DecodesAreNeverHeldBackAndAdmissionWaitsForBudget) {
  const ModelConfig config = testing::test_config("tiny");
  BlockPool pool(config.kv_layout(), 8);
  Scheduler scheduler(config, pool, {4, 2});
  const uint64_t a = scheduler.add(request_of({5}, 2));
  const uint64_t b = scheduler.add(request_of({6}, 3));
  const uint64_t c = scheduler.add(request_of({7, 8, 9}, 2));

  SchedulePlan plan = scheduler.schedule();
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{a, 0, 1, true}, {b, 0, 1, true}}));
  EXPECT_EQ(drawing(plan), (std::vector<uint64_t>{a, b}));
  EXPECT_EQ(scheduler.waiting(), 1);
  apply_fake(scheduler, plan);

  plan = scheduler.schedule();  // two decodes take the whole budget of 2: c waits
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{a, 1, 1, false}, {b, 1, 1, false}}));
  EXPECT_TRUE(plan.admitted.empty());
  apply_fake(scheduler, plan);  // a is finished (2 tokens)

  plan = scheduler.schedule();  // b decodes first, c gets the one token of budget left
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{b, 2, 1, false}, {c, 0, 1, true}}));
  EXPECT_EQ(plan.admitted, std::vector<uint64_t>{c});
  EXPECT_EQ(drawing(plan), std::vector<uint64_t>{b});
}

// A short request arriving while a 30,000-token prompt is read does not wait for that prefill (issue 46): the
// prefills share the budget max-min fairly, so it is read whole in the next step and decodes from then on, while
// the long one goes on with what it leaves.
TEST(SchedulerPlan, AShortRequestIsNotHeldBehindALongPrefill) {
  const ModelConfig config = testing::test_config("tiny", 32768);
  BlockPool pool(config.kv_layout(), 30100 / BlockPool::kBlockTokens);
  Scheduler scheduler(config, pool, {4, 256});
  const uint64_t long_one = scheduler.add(request_of(testing::test_prompt(30000, 1), 2));
  SchedulePlan plan = scheduler.schedule();
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{long_one, 0, 256, true}}));
  apply_fake(scheduler, plan);

  const uint64_t short_one = scheduler.add(request_of({7, 8, 9, 10}, 3));
  plan = scheduler.schedule();  // the short prompt's 4 tokens, the rest to the long one
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{long_one, 256, 252, true}, {short_one, 0, 4, true}}));
  EXPECT_EQ(drawing(plan), std::vector<uint64_t>{short_one});
  std::vector<uint64_t> finished_order;
  int steps = 2;
  int short_done_at = 0;
  for (; !scheduler.idle() && steps < 1000; ++steps) {
    for (const SequenceToken& token : apply_fake(scheduler, plan)) {
      if (token.finished) finished_order.push_back(token.sequence);
      if (token.finished && token.sequence == short_one) short_done_at = steps;
    }
    if (!scheduler.idle()) plan = scheduler.schedule();
  }
  EXPECT_EQ(short_done_at, 4);  // drawn in steps 2, 3 and 4: its first token two steps after it arrived
  EXPECT_EQ(finished_order, (std::vector<uint64_t>{short_one, long_one}));
  // The long prefill lost 4 + 2 tokens of budget to it: 30,000 tokens in 118 steps (⌈30,006 / 256⌉ = 118) plus the
  // one decode of its second token.
  EXPECT_EQ(scheduler.counters().steps, 119);
  EXPECT_EQ(scheduler.counters().prefill_tokens, 30004);
  EXPECT_EQ(pool.referenced_blocks(), 0);
}

// Two long prompts read at once get half the budget each, a third one arriving later a third: none waits for the
// others' whole prefill. An uneven split gives its remainder to the oldest.
TEST(SchedulerPlan, LongPrefillsShareTheBudgetEvenly) {
  const ModelConfig config = testing::test_config("tiny", 4096);
  BlockPool pool(config.kv_layout(), 3 * 2048 / BlockPool::kBlockTokens);
  Scheduler scheduler(config, pool, {4, 256});
  const uint64_t a = scheduler.add(request_of(testing::test_prompt(2000, 1), 1));
  const uint64_t b = scheduler.add(request_of(testing::test_prompt(2000, 2), 1));
  SchedulePlan plan = scheduler.schedule();
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{a, 0, 128, true}, {b, 0, 128, true}}));
  apply_fake(scheduler, plan);
  const uint64_t c = scheduler.add(request_of(testing::test_prompt(600, 3), 1));
  plan = scheduler.schedule();
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{a, 128, 86, true}, {b, 128, 85, true}, {c, 0, 85, true}}));
  apply_fake(scheduler, plan);
  plan = scheduler.schedule();
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{a, 214, 86, true}, {b, 213, 85, true}, {c, 85, 85, true}}));
}

TEST(SchedulerPlan, AdmitsNoMoreThanMaxRunning) {
  const ModelConfig config = testing::test_config("tiny");
  BlockPool pool(config.kv_layout(), 8);
  Scheduler scheduler(config, pool, {2, 64});
  for (int i = 0; i < 3; ++i) scheduler.add(request_of(testing::test_prompt(4, i), 4));
  const SchedulePlan plan = scheduler.schedule();
  EXPECT_EQ(plan.admitted, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(scheduler.running(), 2);
  EXPECT_EQ(scheduler.waiting(), 1);
}

// Two sequences fill the pool's two blocks; when the older needs a third block, the newer is preempted: its block
// goes to the older one and it waits at the head of the queue, to be recomputed from its tokens.
TEST(SchedulerPlan, ThePoolRunningShortPreemptsTheNewestAndItIsRecomputedLater) {
  const ModelConfig config = testing::test_config("tiny");
  BlockPool pool(config.kv_layout(), 2);
  Scheduler scheduler(config, pool, {4, 64});
  const uint64_t older = scheduler.add(request_of(testing::test_prompt(15, 1), 4));
  const uint64_t newer = scheduler.add(request_of(testing::test_prompt(15, 2), 4));
  SchedulePlan plan = scheduler.schedule();
  EXPECT_EQ(plan.admitted, (std::vector<uint64_t>{older, newer}));
  apply_fake(scheduler, plan);  // each has drawn one token: 16 tokens, one full block each
  plan = scheduler.schedule();  // position 15 still fits each one's block
  EXPECT_TRUE(plan.preempted.empty());
  apply_fake(scheduler, plan);

  plan = scheduler.schedule();  // position 16 needs a second block each, and the pool has none
  EXPECT_EQ(plan.preempted, std::vector<uint64_t>{newer});
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{older, 16, 1, false}}));
  EXPECT_EQ(scheduler.waiting(), 1);
  apply_fake(scheduler, plan);
  EXPECT_EQ(scheduler.counters().preemptions, 1);

  plan = scheduler.schedule();  // the older finishes with its fourth token
  const std::vector<SequenceToken> produced = apply_fake(scheduler, plan);
  ASSERT_EQ(produced.size(), 1u);
  EXPECT_TRUE(produced[0].finished);

  // The newer joins again: prompt + its two tokens are fed (any of it still in the prefix cache is borrowed).
  plan = scheduler.schedule();
  EXPECT_EQ(plan.admitted, std::vector<uint64_t>{newer});
  ASSERT_EQ(plan.feeds.size(), 1u);
  EXPECT_EQ(plan.feeds[0].start, plan.prefix_cached_tokens);
  EXPECT_EQ(plan.feeds[0].start + plan.feeds[0].count, 17);
  EXPECT_EQ(drawing(plan), std::vector<uint64_t>{newer});
  const std::vector<SequenceToken> redrawn = apply_fake(scheduler, plan);
  ASSERT_EQ(redrawn.size(), 1u);
  EXPECT_EQ(redrawn[0].step, 2);  // it continues where it was, it does not start over
}

TEST(SchedulerPlan, ASecondSequenceBorrowsTheCachedFullBlocksOfASharedPrefix) {
  const ModelConfig config = testing::test_config("tiny");
  BlockPool pool(config.kv_layout(), 8);
  Scheduler scheduler(config, pool, {4, 64});
  std::vector<int> first = testing::test_prompt(40, 7);
  std::vector<int> second(first.begin(), first.begin() + 35);
  second.push_back(9);
  scheduler.add(request_of(first, 1));
  apply_fake(scheduler, scheduler.schedule());  // reads 40 tokens, publishes its two full blocks, finishes
  const uint64_t id = scheduler.add(request_of(second, 1));
  const SchedulePlan plan = scheduler.schedule();
  EXPECT_EQ(plan.prefix_cached_tokens, 32);
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{id, 32, 4, true}}));
  apply_fake(scheduler, plan);
  EXPECT_EQ(scheduler.counters().prefix_cached_tokens, 32);
  EXPECT_EQ(scheduler.counters().prefill_tokens, 44);
}

// The G copies of a rollout's prompt, queued together: the first reads the prompt; the copies wait one step (a later
// prompt passes them) and then borrow its full blocks, computing only the partial last block each.
TEST(SchedulerPlan, CopiesOfAPromptBeingReadWaitAndBorrowItsBlocks) {
  const ModelConfig config = testing::test_config("tiny");
  BlockPool pool(config.kv_layout(), 16);
  Scheduler scheduler(config, pool, {8, 256});
  const std::vector<int> prompt = testing::test_prompt(40, 7);
  const std::vector<int> other = testing::test_prompt(20, 3);
  const uint64_t first = scheduler.add(request_of(prompt, 2));
  const uint64_t copy_a = scheduler.add(request_of(prompt, 2));
  const uint64_t copy_b = scheduler.add(request_of(prompt, 2));
  const uint64_t later = scheduler.add(request_of(other, 2));
  const SchedulePlan step1 = scheduler.schedule();
  EXPECT_EQ(feeds_of(step1), (std::vector<Feed>{{first, 0, 40, true}, {later, 0, 20, true}}));
  apply_fake(scheduler, step1);
  const SchedulePlan step2 = scheduler.schedule();
  EXPECT_EQ(step2.prefix_cached_tokens, 64);
  EXPECT_EQ(
      feeds_of(step2),
      (std::vector<Feed>{{first, 40, 1, false}, {later, 20, 1, false}, {copy_a, 32, 8, true}, {copy_b, 32, 8, true}}));
  apply_fake(scheduler, step2);
  EXPECT_EQ(scheduler.counters().prefill_tokens, 40 + 20 + 8 + 8);
}

// Rows whose masks need work share the step's allowance: up to allowance / kMinimumMaskSlice rows get an equal
// share, the rest wait (−1) and keep their logits; the next step serves the one waiting longest first.
TEST(SchedulerPlan, RowsNeedingMaskWorkShareTheAllowanceAndTheRestWaitTheirTurn) {
  const ModelConfig config = testing::test_config("tiny");
  BlockPool pool(config.kv_layout(), 8);
  Scheduler scheduler(config, pool, {4, 64, 2 * kMinimumMaskSlice});
  std::vector<uint64_t> ids;
  for (int i = 0; i < 3; ++i) {
    SequenceRequest request = request_of(testing::test_prompt(3, i), 4);
    request.grammar = testing::fresh_enum_grammar(config);
    ids.push_back(scheduler.add(request));
  }
  SchedulePlan plan = scheduler.schedule();
  ASSERT_EQ(plan.draws.size(), 3u);
  EXPECT_EQ(plan.draws[0].mask_steps, kMinimumMaskSlice);
  EXPECT_EQ(plan.draws[1].mask_steps, kMinimumMaskSlice);
  EXPECT_EQ(plan.draws[2].mask_steps, -1);
  FakeRun run = fake_run(scheduler, plan, config.vocab_size);
  const int quote = 3 + '"';  // the enum vocabulary's byte tokens start at id 3; every value opens with a quote
  for (int i = 0; i < 2; ++i) run.outcome.draws[i].choice.token = quote;
  const std::vector<SequenceToken> produced = scheduler.apply(plan, run.outcome);
  EXPECT_EQ(produced.size(), 2u);
  EXPECT_EQ(scheduler.running_sequence(ids[2]).held_logits.size(), static_cast<std::size_t>(config.vocab_size));

  plan = scheduler.schedule();  // the third is not fed again, draws from its kept logits and goes first
  EXPECT_EQ(feeds_of(plan), (std::vector<Feed>{{ids[0], 3, 1, false}, {ids[1], 3, 1, false}}));
  ASSERT_EQ(plan.draws.size(), 3u);
  EXPECT_EQ(plan.draws[2].sequence, ids[2]);
  EXPECT_EQ(plan.draws[2].feed, -1);
  EXPECT_EQ(plan.draws[2].mask_steps, kMinimumMaskSlice);
}

TEST(SchedulerPlan, AnOutcomeThatDoesNotMatchThePlanIsRefused) {
  const ModelConfig config = testing::test_config("tiny");
  BlockPool pool(config.kv_layout(), 8);
  Scheduler scheduler(config, pool, {4, 64});
  scheduler.add(request_of({5}, 2));
  const SchedulePlan plan = scheduler.schedule();
  EXPECT_THROW(scheduler.apply(plan, StepOutcome{}), Error);
  EXPECT_THROW(scheduler.running_sequence(99), Error);
}

}  // namespace
}  // namespace minigen
