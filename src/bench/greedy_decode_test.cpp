#include "bench/greedy_decode.h"

#include <gtest/gtest.h>

#include "generate/generate.h"
#include "model/test_models.h"
#include "ops/thread_pool.h"

namespace minigen::bench {
namespace {

// The benchmarks' bare loop chooses the tokens minigen's generate loop chooses greedily, for rows of different
// lengths decoded together: it feeds each row its own last token into its own cache.
TEST(GreedyDecode, BatchedRowsContinueAsTheGenerateLoopDoes) {
  const auto model = testing::random_test_model("tiny", 7);
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  const std::vector<std::vector<int>> prompts = {testing::test_prompt(9, 1), testing::test_prompt(3, 2),
                                                 testing::test_prompt(17, 3)};
  constexpr int kNewTokens = 12;

  GenerateOptions options;
  options.max_new_tokens = kNewTokens;
  options.ignore_eos = true;
  options.sampling.greedy = true;
  options.sampling.temperature = 0.0f;
  const GenerateResult expected = generate(transformer, prompts, options);

  std::vector<KvCache> caches;
  for (std::size_t b = 0; b < prompts.size(); ++b) caches.emplace_back(model->config.kv_layout(), 64);
  std::vector<KvCache*> cache_of_row = {&caches[0], &caches[1], &caches[2]};
  const std::vector<int> first = prefill_argmax(transformer, cache_of_row, prompts);
  const std::vector<std::vector<int>> rest = greedy_decode(transformer, cache_of_row, first, kNewTokens - 1);
  for (std::size_t b = 0; b < prompts.size(); ++b) {
    std::vector<int> tokens{first[b]};
    tokens.insert(tokens.end(), rest[b].begin(), rest[b].end());
    EXPECT_EQ(tokens, expected.sequences[b].token_ids) << "row " << b;
    // P + N − 1 positions: the last chosen token is never fed.
    EXPECT_EQ(caches[b].length(), static_cast<int>(prompts[b].size()) + kNewTokens - 1);
  }

  // One row alone, through the single-row overloads, gives row 1's tokens.
  KvCache alone(model->config.kv_layout(), 64);
  const int alone_first = prefill_argmax(transformer, alone, prompts[1]);
  std::vector<int> alone_tokens{alone_first};
  const std::vector<int> alone_rest = greedy_decode(transformer, alone, alone_first, kNewTokens - 1);
  alone_tokens.insert(alone_tokens.end(), alone_rest.begin(), alone_rest.end());
  EXPECT_EQ(alone_tokens, expected.sequences[1].token_ids);
}

}  // namespace
}  // namespace minigen::bench
