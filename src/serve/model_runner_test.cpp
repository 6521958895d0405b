// The serving promise: a request's tokens are the same whether it ran alone (as `minigen generate`), among 31
// others, with prefix-cache hits, or after being preempted and recomputed — and no KV block is ever leaked.
#include "serve/model_runner.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generate/generate.h"
#include "grammar/json_schema_compiler.h"
#include "model/test_models.h"
#include "serve/enum_grammar_test_util.h"

namespace minigen {
namespace {

SequenceRequest make_request(std::vector<int> prompt, int max_new, uint64_t seed, bool greedy) {
  SequenceRequest request;
  request.prompt = std::move(prompt);
  request.max_new_tokens = max_new;
  request.sampling.greedy = greedy;
  request.sampling.seed = seed;
  request.sampling.temperature = 1.2f;  // wide distributions: a wrong draw would show at once
  request.ignore_eos = true;
  return request;
}

// What `minigen generate` produces for the request alone (contiguous KvCache, no server involved).
std::vector<int> generated_alone(Transformer& transformer, const SequenceRequest& request) {
  GenerateOptions options;
  options.max_new_tokens = request.max_new_tokens;
  options.sampling = request.sampling;
  options.ignore_eos = request.ignore_eos;
  options.rng_rows = {request.rng_row};
  if (request.grammar) options.grammars = {request.grammar};
  const std::vector<std::vector<int>> prompts = {request.prompt};
  return generate(transformer, prompts, options).sequences[0].token_ids;
}

// Runs every request through one scheduler; returns the tokens of each, in the order added. `finished_at`, if
// given, receives the step() call (counting from 1) that gave each request its last token.
std::vector<std::vector<int>> serve_all(Scheduler& scheduler, ModelRunner& runner,
                                        const std::vector<SequenceRequest>& requests,
                                        std::vector<int>* finished_at = nullptr) {
  std::map<uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < requests.size(); ++i) index[scheduler.add(requests[i])] = i;
  std::vector<std::vector<int>> tokens(requests.size());
  if (finished_at != nullptr) finished_at->assign(requests.size(), 0);
  for (int steps = 0; !scheduler.idle(); ++steps) {
    EXPECT_LT(steps, 100000) << "the scheduler stopped making progress";
    if (steps >= 100000) break;
    for (const SequenceToken& out : serve_step(scheduler, runner)) {
      tokens[index.at(out.sequence)].push_back(out.token);
      if (out.finished && finished_at != nullptr) (*finished_at)[index.at(out.sequence)] = steps + 1;
    }
  }
  return tokens;
}

struct Fixture {
  std::unique_ptr<Model> model = testing::random_test_model("tiny");
  ThreadPool threads{2};
  Transformer transformer{*model, threads};
  ModelRunner runner{transformer};
};

std::vector<SequenceRequest> mixed_requests(int count, const std::vector<int>& shared_prefix) {
  std::vector<SequenceRequest> requests;
  for (int i = 0; i < count; ++i) {
    std::vector<int> prompt = shared_prefix;
    const std::vector<int> own = testing::test_prompt(1 + (i * 7) % 30, 50 + i);
    prompt.insert(prompt.end(), own.begin(), own.end());
    requests.push_back(make_request(prompt, 4 + (i * 5) % 20, 1000 + i, i % 3 == 0));
  }
  return requests;
}

TEST(Scheduler, ThirtyTwoRequestsTogetherMatchEachAlone) {
  Fixture f;
  BlockPool pool(f.model->config.kv_layout(), 512);
  Scheduler scheduler(f.model->config, pool, {32, 64});
  const auto requests = mixed_requests(32, {});
  const auto served = serve_all(scheduler, f.runner, requests);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(served[i], generated_alone(f.transformer, requests[i])) << "request " << i;
  }
  EXPECT_EQ(pool.referenced_blocks(), 0);
  EXPECT_GT(scheduler.counters().steps, 0);
}

TEST(Scheduler, PrefixCacheHitsGiveTheSameTokens) {
  Fixture f;
  BlockPool pool(f.model->config.kv_layout(), 512);
  Scheduler scheduler(f.model->config, pool, {8, 64});
  const auto requests = mixed_requests(24, testing::test_prompt(40, 9));  // a shared 40-token "system prompt"
  const auto served = serve_all(scheduler, f.runner, requests);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(served[i], generated_alone(f.transformer, requests[i])) << "request " << i;
  }
  // After the first wave, later requests borrow the two full blocks (32 tokens) of the shared prefix.
  EXPECT_GE(scheduler.counters().prefix_cached_tokens, 32 * 8);
  EXPECT_GT(pool.hits(), 0);
  EXPECT_EQ(pool.referenced_blocks(), 0);
}

TEST(Scheduler, PreemptedRequestsAreRecomputedToTheSameTokens) {
  Fixture f;
  BlockPool pool(f.model->config.kv_layout(), 10);  // 160 positions for 12 requests of up to ~70: preemption is certain
  Scheduler scheduler(f.model->config, pool, {12, 48});
  const auto requests = mixed_requests(12, testing::test_prompt(20, 3));
  const auto served = serve_all(scheduler, f.runner, requests);
  EXPECT_GT(scheduler.counters().preemptions, 0);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(served[i], generated_alone(f.transformer, requests[i])) << "request " << i;
  }
  EXPECT_EQ(pool.referenced_blocks(), 0);
}

TEST(Scheduler, RejectsWhatCanNeverFitAndCancelFreesBlocksAtOnce) {
  Fixture f;
  BlockPool pool(f.model->config.kv_layout(), 4);  // 64 positions
  Scheduler scheduler(f.model->config, pool, {4, 64});
  EXPECT_THROW(scheduler.add(make_request(testing::test_prompt(60, 1), 10, 0, true)), std::exception);
  EXPECT_THROW(scheduler.add(make_request({}, 10, 0, true)), std::exception);
  EXPECT_THROW(scheduler.add(make_request({f.model->config.vocab_size}, 10, 0, true)), std::exception);
  const uint64_t id = scheduler.add(make_request(testing::test_prompt(40, 1), 20, 0, true));
  serve_step(scheduler, f.runner);
  EXPECT_EQ(pool.referenced_blocks(), 3);
  scheduler.cancel(id);
  EXPECT_EQ(pool.referenced_blocks(), 0);
  EXPECT_TRUE(scheduler.idle());
}

SequenceRequest enum_request(const ModelConfig& config, uint64_t seed) {
  SequenceRequest request = make_request(testing::test_prompt(9, 2), 24, seed, false);
  request.ignore_eos = false;  // the document ends with eos
  request.grammar = testing::fresh_enum_grammar(config);
  return request;
}

// With an allowance far below one mask the schema row waits for its masks over many steps; it draws the tokens it
// draws with no limit and alone (generate()), and the plain row beside it gets its token on every step.
TEST(Scheduler, ARowWaitingForItsMaskDrawsTheSameTokensAndThePlainRowBesideItIsNeverHeld) {
  Fixture f;
  BlockPool pool(f.model->config.kv_layout(), 32);
  const SequenceRequest plain = make_request(testing::test_prompt(12, 1), 30, 7, false);
  const std::vector<int> schema_alone = generated_alone(f.transformer, enum_request(f.model->config, 8));
  ASSERT_EQ(schema_alone.back(), f.model->config.eos_token_id);
  ASSERT_GE(schema_alone.size(), 4u);

  std::vector<int> finished_alone;
  Scheduler alone(f.model->config, pool, {4, 64});
  EXPECT_EQ(serve_all(alone, f.runner, {plain}, &finished_alone)[0], generated_alone(f.transformer, plain));
  EXPECT_EQ(finished_alone[0], 30);  // one prefill step, then a token every step

  std::vector<int> finished_unlimited;
  Scheduler unlimited(f.model->config, pool, {4, 64, int64_t{1} << 40});
  const auto served_unlimited =
      serve_all(unlimited, f.runner, {plain, enum_request(f.model->config, 8)}, &finished_unlimited);
  EXPECT_EQ(served_unlimited[1], schema_alone);

  std::vector<int> finished_sliced;
  Scheduler sliced(f.model->config, pool, {4, 64, 200});
  const auto served = serve_all(sliced, f.runner, {plain, enum_request(f.model->config, 8)}, &finished_sliced);
  EXPECT_EQ(served[0], served_unlimited[0]);
  EXPECT_EQ(served[1], schema_alone);
  EXPECT_EQ(finished_sliced[0], 30);                          // never held back by its neighbour's masks
  EXPECT_GT(finished_sliced[1], finished_unlimited[1] + 10);  // the masks did take many steps
  EXPECT_EQ(sliced.counters().generated_tokens, static_cast<int64_t>(30 + schema_alone.size()));
  EXPECT_EQ(pool.referenced_blocks(), 0);
}

// A waiting row is an ordinary running row: cancelled, its blocks return at once; preempted, its kept logits and
// mask work are dropped and its recomputation draws the same tokens.
TEST(Scheduler, ARowWaitingForItsMaskIsCancelledOrPreemptedLikeAnyOther) {
  Fixture f;
  BlockPool pool(f.model->config.kv_layout(), 4);  // 64 positions
  {
    Scheduler scheduler(f.model->config, pool, {4, 64, 1});
    const uint64_t id = scheduler.add(enum_request(f.model->config, 3));
    EXPECT_TRUE(serve_step(scheduler, f.runner).empty());  // the prompt is read, the first mask is not done
    EXPECT_TRUE(serve_step(scheduler, f.runner).empty());
    EXPECT_EQ(scheduler.running(), 1);
    EXPECT_EQ(pool.referenced_blocks(), 1);
    scheduler.cancel(id);
    EXPECT_EQ(pool.referenced_blocks(), 0);
    EXPECT_TRUE(scheduler.idle());
  }
  // The plain row, older, needs the schema row's block when it reaches 48 positions.
  const SequenceRequest plain = make_request(testing::test_prompt(20, 4), 40, 9, false);
  const SequenceRequest schema = enum_request(f.model->config, 5);
  const std::vector<int> schema_alone = generated_alone(f.transformer, enum_request(f.model->config, 5));
  Scheduler scheduler(f.model->config, pool, {4, 64, 100});
  const auto served = serve_all(scheduler, f.runner, {plain, schema});
  EXPECT_GT(scheduler.counters().preemptions, 0);
  EXPECT_EQ(served[0], generated_alone(f.transformer, plain));
  EXPECT_EQ(served[1], schema_alone);
  EXPECT_EQ(pool.referenced_blocks(), 0);
}

}  // namespace
}  // namespace minigen
