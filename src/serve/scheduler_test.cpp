// The serving promise: a request's tokens are the same whether it ran alone (as `minigen generate`), among 31
// others, with prefix-cache hits, or after being preempted and recomputed — and no KV block is ever leaked.
#include "serve/scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "generate/generate.h"
#include "model/test_models.h"

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
  const std::vector<std::vector<int>> prompts = {request.prompt};
  return generate(transformer, prompts, options).sequences[0].token_ids;
}

// Runs every request through one scheduler; returns the tokens of each, in the order added.
std::vector<std::vector<int>> serve_all(Scheduler& scheduler, const std::vector<SequenceRequest>& requests) {
  std::map<uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < requests.size(); ++i) index[scheduler.add(requests[i])] = i;
  std::vector<std::vector<int>> tokens(requests.size());
  for (int steps = 0; !scheduler.idle(); ++steps) {
    EXPECT_LT(steps, 100000) << "the scheduler stopped making progress";
    if (steps >= 100000) break;
    for (const SequenceToken& out : scheduler.step()) tokens[index.at(out.sequence)].push_back(out.token);
  }
  return tokens;
}

struct Fixture {
  std::unique_ptr<Model> model = testing::random_test_model("tiny");
  ThreadPool threads{2};
  Transformer transformer{*model, threads};
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
  Scheduler scheduler(f.transformer, pool, {32, 64});
  const auto requests = mixed_requests(32, {});
  const auto served = serve_all(scheduler, requests);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(served[i], generated_alone(f.transformer, requests[i])) << "request " << i;
  }
  EXPECT_EQ(pool.referenced_blocks(), 0);
  EXPECT_GT(scheduler.counters().steps, 0);
}

TEST(Scheduler, PrefixCacheHitsGiveTheSameTokens) {
  Fixture f;
  BlockPool pool(f.model->config.kv_layout(), 512);
  Scheduler scheduler(f.transformer, pool, {8, 64});
  const auto requests = mixed_requests(24, testing::test_prompt(40, 9));  // a shared 40-token "system prompt"
  const auto served = serve_all(scheduler, requests);
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
  Scheduler scheduler(f.transformer, pool, {12, 48});
  const auto requests = mixed_requests(12, testing::test_prompt(20, 3));
  const auto served = serve_all(scheduler, requests);
  EXPECT_GT(scheduler.counters().preemptions, 0);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(served[i], generated_alone(f.transformer, requests[i])) << "request " << i;
  }
  EXPECT_EQ(pool.referenced_blocks(), 0);
}

TEST(Scheduler, RejectsWhatCanNeverFitAndCancelFreesBlocksAtOnce) {
  Fixture f;
  BlockPool pool(f.model->config.kv_layout(), 4);  // 64 positions
  Scheduler scheduler(f.transformer, pool, {4, 64});
  EXPECT_THROW(scheduler.add(make_request(testing::test_prompt(60, 1), 10, 0, true)), std::exception);
  EXPECT_THROW(scheduler.add(make_request({}, 10, 0, true)), std::exception);
  EXPECT_THROW(scheduler.add(make_request({f.model->config.vocab_size}, 10, 0, true)), std::exception);
  const uint64_t id = scheduler.add(make_request(testing::test_prompt(40, 1), 20, 0, true));
  scheduler.step();
  EXPECT_EQ(pool.referenced_blocks(), 3);
  scheduler.cancel(id);
  EXPECT_EQ(pool.referenced_blocks(), 0);
  EXPECT_TRUE(scheduler.idle());
}

}  // namespace
}  // namespace minigen
