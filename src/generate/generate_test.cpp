#include "generate/generate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "model/test_models.h"

namespace minigen {
namespace {

using testing::random_test_model;
using testing::test_config;
using testing::test_prompt;

GenerateOptions greedy_exactly(int new_tokens) {
  GenerateOptions options;
  options.max_new_tokens = new_tokens;
  options.ignore_eos = true;
  options.sampling.greedy = true;
  return options;
}

GenerateOptions sampled_exactly(int new_tokens, uint64_t seed) {
  GenerateOptions options;
  options.max_new_tokens = new_tokens;
  options.ignore_eos = true;
  options.sampling.temperature = 1.0f;
  options.sampling.top_k = 0;
  options.sampling.top_p = 0.95f;
  options.sampling.seed = seed;
  return options;
}

void expect_same_logits(const GeneratedSequence& a, const GeneratedSequence& b) {
  ASSERT_EQ(a.step_logits.size(), b.step_logits.size());
  for (std::size_t step = 0; step < a.step_logits.size(); ++step) {
    ASSERT_EQ(std::memcmp(a.step_logits[step].data(), b.step_logits[step].data(), a.step_logits[step].size() * 4), 0)
        << "logits differ at step " << step;
  }
}

// The module's counts: with the cache prefill feeds P and each later step one token, P + N − 1 in all; without it
// every step re-feeds the sequence, P·N + N(N−1)/2. And the tokens and logits do not change by a single bit.
TEST(Generate, ForwardTokenCountsMatchTheFormulasAndCacheChangesNothing) {
  auto model = random_test_model("tiny");
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  struct Case {
    int prompt;
    int new_tokens;
  };
  for (Case c : {Case{1, 1}, Case{5, 3}, Case{17, 10}, Case{40, 24}}) {
    const std::vector<std::vector<int>> prompts = {test_prompt(c.prompt, 1)};
    GenerateOptions options = greedy_exactly(c.new_tokens);
    options.keep_step_logits = true;
    const GenerateResult cached = generate(transformer, prompts, options);
    options.use_cache = false;
    const GenerateResult uncached = generate(transformer, prompts, options);
    const int64_t p = c.prompt, n = c.new_tokens;
    EXPECT_EQ(cached.stats.forward_calls, n);
    EXPECT_EQ(cached.stats.forward_tokens, p + n - 1);
    EXPECT_EQ(uncached.stats.forward_tokens, p * n + n * (n - 1) / 2);
    EXPECT_EQ(cached.sequences[0].token_ids.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(cached.sequences[0].token_ids, uncached.sequences[0].token_ids);
    expect_same_logits(cached.sequences[0], uncached.sequences[0]);
    // K and V of every position but the last new token: 2 · 4 layers · (P + N − 1) · 2 kv heads · 32 · 4 bytes.
    EXPECT_EQ(cached.stats.kv_bytes_used, static_cast<std::size_t>(2 * 4 * (p + n - 1) * 2 * 32 * 4));
    EXPECT_EQ(cached.stats.recompute_buffer_bytes, 0u);
    EXPECT_EQ(uncached.stats.kv_bytes_used, 0u);  // no cache: nothing is reused between steps
    EXPECT_EQ(uncached.stats.recompute_buffer_bytes, cached.stats.kv_bytes_used);
    EXPECT_EQ(cached.sequences[0].finish_reason, "length");
  }
}

TEST(Generate, The183TokenPromptWith64NewTokensFeeds246Versus13728) {
  auto model = random_test_model("tiny");
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  const std::vector<std::vector<int>> prompts = {test_prompt(183, 2)};
  GenerateOptions options = sampled_exactly(64, 7);
  options.keep_step_logits = true;
  const GenerateResult cached = generate(transformer, prompts, options);
  options.use_cache = false;
  const GenerateResult uncached = generate(transformer, prompts, options);
  EXPECT_EQ(cached.stats.forward_tokens, 246);
  EXPECT_EQ(uncached.stats.forward_tokens, 13728);
  EXPECT_EQ(cached.sequences[0].token_ids, uncached.sequences[0].token_ids);
  expect_same_logits(cached.sequences[0], uncached.sequences[0]);
}

class GenerateFamily : public ::testing::TestWithParam<std::string> {};

TEST_P(GenerateFamily, CacheOnAndOffGiveIdenticalTokensAndLogits) {
  auto model = random_test_model(GetParam());
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  const std::vector<std::vector<int>> prompts = {test_prompt(6, 3), test_prompt(6, 4)};
  for (GenerateOptions options : {greedy_exactly(8), sampled_exactly(8, 42)}) {
    options.keep_step_logits = true;
    const GenerateResult cached = generate(transformer, prompts, options);
    options.use_cache = false;
    const GenerateResult uncached = generate(transformer, prompts, options);
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(cached.sequences[r].token_ids, uncached.sequences[r].token_ids) << "row " << r;
      expect_same_logits(cached.sequences[r], uncached.sequences[r]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryFamily, GenerateFamily, ::testing::ValuesIn(family_names()), testing::FamilyTestName());

// The cache's element type keeps generate's promises: cache on and off give the same tokens and logits (both
// store each position in the same dtype; only the reuse differs), a row alone matches the row in a batch, and
// kv_bytes_used is (P + N − 1) positions · the dtype's bytes per token.
class GenerateKvDType : public ::testing::TestWithParam<KvDType> {};

TEST_P(GenerateKvDType, CacheOnOffAndBatchingChangeNothingAndBytesAreTheDTypes) {
  auto model = random_test_model("tiny");
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  const std::vector<std::vector<int>> batch = {test_prompt(4, 5), test_prompt(19, 6), test_prompt(7, 7)};
  for (GenerateOptions options : {greedy_exactly(10), sampled_exactly(10, 9)}) {
    options.keep_step_logits = true;
    options.kv_dtype = GetParam();
    options.rng_rows = {0, 0, 0};
    const GenerateResult together = generate(transformer, batch, options);
    options.rng_rows.clear();
    for (std::size_t r = 0; r < batch.size(); ++r) {
      const std::vector<std::vector<int>> alone = {batch[r]};
      const GenerateResult cached = generate(transformer, alone, options);
      EXPECT_EQ(cached.sequences[0].token_ids, together.sequences[r].token_ids) << "row " << r;
      expect_same_logits(cached.sequences[0], together.sequences[r]);
      const std::size_t positions = batch[r].size() + 10 - 1;
      EXPECT_EQ(cached.stats.kv_bytes_used, positions * model->config.kv_bytes_per_token(GetParam()));
      GenerateOptions without_cache = options;
      without_cache.use_cache = false;
      const GenerateResult uncached = generate(transformer, alone, without_cache);
      EXPECT_EQ(cached.sequences[0].token_ids, uncached.sequences[0].token_ids) << "row " << r;
      expect_same_logits(cached.sequences[0], uncached.sequences[0]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKvDType, GenerateKvDType,
                         ::testing::Values(KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8),
                         [](const ::testing::TestParamInfo<KvDType>& info) {
                           return std::string(kv_dtype_name(info.param));
                         });

// A row computed alone and inside a batch of three prompts of different lengths: the same tokens and logits,
// greedy and sampled (the sampled rows keep their own random-stream key).
TEST(Generate, RowAloneMatchesRowInsideABatchOfThree) {
  auto model = random_test_model("tiny");
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  const std::vector<std::vector<int>> batch = {test_prompt(4, 5), test_prompt(11, 6), test_prompt(7, 7)};
  for (GenerateOptions options : {greedy_exactly(10), sampled_exactly(10, 9)}) {
    options.keep_step_logits = true;
    options.rng_rows = {0, 0, 0};
    const GenerateResult together = generate(transformer, batch, options);
    options.rng_rows.clear();
    for (std::size_t r = 0; r < batch.size(); ++r) {
      const std::vector<std::vector<int>> alone = {batch[r]};
      const GenerateResult single = generate(transformer, alone, options);
      EXPECT_EQ(single.sequences[0].token_ids, together.sequences[r].token_ids) << "row " << r;
      expect_same_logits(single.sequences[0], together.sequences[r]);
    }
  }
}

TEST(Generate, SameSeedSameSamplesDifferentSeedDifferentSamples) {
  auto model = random_test_model("tiny");
  ThreadPool pool(1);
  Transformer transformer(*model, pool);
  const std::vector<std::vector<int>> prompts = {test_prompt(5, 8)};
  const auto first = generate(transformer, prompts, sampled_exactly(16, 1)).sequences[0].token_ids;
  const auto again = generate(transformer, prompts, sampled_exactly(16, 1)).sequences[0].token_ids;
  const auto other = generate(transformer, prompts, sampled_exactly(16, 2)).sequences[0].token_ids;
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
}

// MiniMind's finished flags: a row that produced eos is padded with eos (and still fed) until every row is done.
TEST(Generate, FinishedRowsArePaddedWithEosUntilAllRowsFinish) {
  const std::vector<std::vector<int>> prompts = {test_prompt(5, 9), test_prompt(8, 10)};
  ModelConfig config = test_config("tiny");
  std::vector<int> greedy_row0;
  {
    auto model = random_test_model("tiny");
    ThreadPool pool(1);
    Transformer transformer(*model, pool);
    greedy_row0 = generate(transformer, prompts, greedy_exactly(6)).sequences[0].token_ids;
  }
  // Call row 0's third greedy token "eos": row 0 stops there (or earlier, if that token came before).
  config.eos_token_id = greedy_row0[2];
  const auto first_eos = std::find(greedy_row0.begin(), greedy_row0.end(), config.eos_token_id) - greedy_row0.begin();
  Model model(config, random_weights(config, 1));
  ThreadPool pool(1);
  Transformer transformer(model, pool);
  GenerateOptions options = greedy_exactly(6);
  options.ignore_eos = false;
  const GenerateResult result = generate(transformer, prompts, options);
  const GeneratedSequence& row0 = result.sequences[0];
  EXPECT_EQ(row0.finish_reason, "stop");
  EXPECT_EQ(static_cast<long>(row0.token_ids.size()), first_eos + 1);
  EXPECT_EQ(row0.token_ids.back(), config.eos_token_id);
  const GeneratedSequence& row1 = result.sequences[1];
  // Row 1 never chooses row 0's "eos" (fixed seeds), so it runs all 6 steps and row 0 is padded for the rest.
  ASSERT_EQ(row1.finish_reason, "length");
  EXPECT_EQ(result.stats.forward_calls, 6);
  EXPECT_EQ(row0.padding_steps, 6 - static_cast<int>(row0.token_ids.size()));
  EXPECT_GT(row0.padding_steps, 0);
}

TEST(Generate, RejectsPromptsThatOverflowTheContextAndBadSettings) {
  auto model = random_test_model("tiny");  // 512-token context
  ThreadPool pool(1);
  Transformer transformer(*model, pool);
  const std::vector<std::vector<int>> long_prompt = {test_prompt(500, 1)};
  EXPECT_THROW(generate(transformer, long_prompt, greedy_exactly(13)), Error);
  EXPECT_NO_THROW(generate(transformer, long_prompt, greedy_exactly(12)));
  const std::vector<std::vector<int>> prompts = {test_prompt(3, 1)};
  GenerateOptions cold = sampled_exactly(4, 1);
  cold.sampling.temperature = -1.0f;  // 0 would be greedy decoding
  EXPECT_THROW(generate(transformer, prompts, cold), Error);
  cold.sampling.temperature = 0.005f;  // overflows the logits
  EXPECT_THROW(generate(transformer, prompts, cold), Error);
  const std::vector<std::vector<int>> empty = {{}};
  EXPECT_THROW(generate(transformer, empty, greedy_exactly(2)), Error);
  const std::vector<std::vector<int>> too_many_rows(kMaxBatchRows + 1, test_prompt(3, 1));
  EXPECT_THROW(generate(transformer, too_many_rows, greedy_exactly(1)), Error);
}

// A model that declares a context of 2^31 − 1 tokens runs a short generation like any other, and a row's cache
// starts at the prompt plus at most 4,096 new tokens, growing only if the row gets that far.
TEST(Generate, HugeDeclaredContextCostsOnlyWhatIsUsed) {
  ModelConfig config = test_config("tiny");
  config.max_position_embeddings = 2147483647;
  const Model model(config, random_weights(config, 1));
  ThreadPool pool(1);
  Transformer transformer(model, pool);
  const std::vector<std::vector<int>> prompts = {test_prompt(5, 1)};
  const GenerateResult result = generate(transformer, prompts, greedy_exactly(3));
  EXPECT_EQ(result.sequences[0].token_ids.size(), 3u);
  EXPECT_EQ(result.stats.kv_bytes_allocated, 16u * config.kv_bytes_per_token());  // 8 tokens: one block

  GenerateOptions long_run = greedy_exactly(100000);
  long_run.ignore_eos = false;
  config.eos_token_id = generate(transformer, prompts, greedy_exactly(1)).sequences[0].token_ids[0];
  const Model stops_at_once(config, random_weights(config, 1));
  Transformer stopping(stops_at_once, pool);
  const GenerateResult stopped = generate(stopping, prompts, long_run);
  EXPECT_EQ(stopped.sequences[0].finish_reason, "stop");
  EXPECT_EQ(stopped.stats.kv_bytes_allocated, (5u + 4096 + 11) * config.kv_bytes_per_token());  // 4101 → 4112
}

}  // namespace
}  // namespace minigen
