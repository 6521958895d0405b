// The forward pass's design rule, checked with memcmp: a row's logits do not depend on how many tokens or rows
// share the call, nor on whether its earlier tokens came from the cache.
#include "model/transformer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <string>

#include "cache/kv_cache.h"
#include "core/error.h"
#include "core/profiler.h"
#include "model/test_models.h"

namespace minigen {
namespace {

using testing::random_test_model;
using testing::test_prompt;

bool same_bits(const float* a, const float* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

class TransformerFamily : public ::testing::TestWithParam<std::string> {};

// Prefill of the whole sequence in one call vs the same tokens fed one at a time on top of the cache, in every
// weight type (q8/q4 quantize each activation row alone, so a row's codes do not depend on its neighbours).
TEST_P(TransformerFamily, CachedDecodeMatchesFullPrefillBitForBit) {
  auto model = random_test_model(GetParam());
  const int vocab = model->config.vocab_size;
  ThreadPool pool(2);
  for (WeightType type : {WeightType::kF32, WeightType::kBF16, WeightType::kQ8, WeightType::kQ4}) {
    SCOPED_TRACE(std::string(weight_type_name(type)));
    Transformer transformer(*model, pool, type);
    const std::vector<int> tokens = test_prompt(12, 1);

    KvCache full_cache(model->config.kv_layout(), 16);
    const std::vector<int>& full_ref = tokens;
    ForwardRow full{&full_cache, full_ref, /*all_logits=*/true};
    const std::vector<float> all_logits = transformer.forward(std::span(&full, 1));
    ASSERT_EQ(all_logits.size(), tokens.size() * vocab);
    for (float value : all_logits) ASSERT_TRUE(std::isfinite(value));

    KvCache step_cache(model->config.kv_layout(), 16);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      ForwardRow one{&step_cache, std::span<const int>(tokens).subspan(i, 1), false};
      const std::vector<float>& logits = transformer.forward(std::span(&one, 1));
      EXPECT_TRUE(same_bits(logits.data(), all_logits.data() + i * vocab, vocab)) << "position " << i;
    }
    EXPECT_EQ(step_cache.length(), 12);
    // The caches themselves hold the same K and V bits.
    for (int layer = 0; layer < model->config.num_layers; ++layer) {
      for (int position = 0; position < 12; ++position) {
        for (int i = 0; i < model->config.kv_width(); ++i) {
          const float keys[2] = {full_cache.key_at(layer, position, i), step_cache.key_at(layer, position, i)};
          const float values[2] = {full_cache.value_at(layer, position, i), step_cache.value_at(layer, position, i)};
          ASSERT_TRUE(same_bits(&keys[0], &keys[1], 1)) << "layer " << layer << " position " << position;
          ASSERT_TRUE(same_bits(&values[0], &values[1], 1)) << "layer " << layer << " position " << position;
        }
      }
    }
  }
}

// Chunked prefill: 5 + 4 + 3 tokens on top of the cache give the logits of one 12-token prefill.
TEST_P(TransformerFamily, ChunkedPrefillUsesTheRightCausalOffset) {
  auto model = random_test_model(GetParam());
  const int vocab = model->config.vocab_size;
  ThreadPool pool(1);
  Transformer transformer(*model, pool);
  const std::vector<int> tokens = test_prompt(12, 2);
  KvCache full_cache(model->config.kv_layout(), 12);
  ForwardRow full{&full_cache, tokens, true};
  const std::vector<float> all_logits = transformer.forward(std::span(&full, 1));

  KvCache chunk_cache(model->config.kv_layout(), 12);
  int offset = 0;
  for (int chunk : {5, 4, 3}) {
    ForwardRow row{&chunk_cache, std::span<const int>(tokens).subspan(offset, chunk), true};
    const std::vector<float>& logits = transformer.forward(std::span(&row, 1));
    EXPECT_TRUE(same_bits(logits.data(), all_logits.data() + static_cast<std::size_t>(offset) * vocab,
                          static_cast<std::size_t>(chunk) * vocab))
        << "chunk at " << offset;
    offset += chunk;
  }
}

// Three rows of different lengths and positions in one call, against each row alone; also 1 vs 2 threads.
TEST_P(TransformerFamily, RowInBatchOfThreeMatchesRowAlone) {
  auto model = random_test_model(GetParam());
  const int vocab = model->config.vocab_size;
  const std::vector<std::vector<int>> prompts = {test_prompt(3, 3), test_prompt(9, 4), test_prompt(6, 5)};
  std::vector<std::vector<float>> alone;
  {
    ThreadPool pool(1);
    Transformer transformer(*model, pool);
    for (const auto& prompt : prompts) {
      KvCache cache(model->config.kv_layout(), 16);
      ForwardRow row{&cache, prompt, true};
      alone.push_back(transformer.forward(std::span(&row, 1)));
    }
  }
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  std::vector<std::unique_ptr<KvCache>> caches;
  std::vector<ForwardRow> rows;
  for (const auto& prompt : prompts) {
    caches.push_back(std::make_unique<KvCache>(model->config.kv_layout(), 16));
    rows.push_back(ForwardRow{caches.back().get(), prompt, true});
  }
  const std::vector<float> batched = transformer.forward(rows);
  std::size_t offset = 0;
  for (std::size_t r = 0; r < prompts.size(); ++r) {
    const std::size_t count = prompts[r].size() * vocab;
    EXPECT_TRUE(same_bits(batched.data() + offset, alone[r].data(), count)) << "row " << r;
    offset += count;
  }
  // A decode step of the three rows together (different positions) matches each row's own decode step.
  std::vector<int> next = {7, 8, 9};
  for (std::size_t r = 0; r < rows.size(); ++r) rows[r] = ForwardRow{caches[r].get(), std::span(&next[r], 1), false};
  const std::vector<float> step = transformer.forward(rows);
  for (std::size_t r = 0; r < prompts.size(); ++r) {
    KvCache cache(model->config.kv_layout(), 16);
    std::vector<int> sequence = prompts[r];
    sequence.push_back(next[r]);
    ForwardRow row{&cache, sequence, false};
    const std::vector<float>& logits = transformer.forward(std::span(&row, 1));
    EXPECT_TRUE(same_bits(step.data() + r * vocab, logits.data(), vocab)) << "decode row " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryFamily, TransformerFamily, ::testing::ValuesIn(family_names()),
                         testing::FamilyTestName());
// The family sweep above is labelled heavy; this keeps a mixture-of-experts forward (minimind3-moe's routing, with
// qk-norm) and the Llama layout (minimind2: no qk-norm) in the sanitizer pass, on models shrunk to one small layer
// (hidden 128, 4 query and 2 KV heads): cached decode gives the bits of the one-call prefill.
TEST(TransformerSmallFamilies, MoeAndLlamaLayoutsDecodeLikeTheirPrefill) {
  for (const std::string family : {"minimind3-moe", "minimind2"}) {
    ModelConfig config = testing::test_config(family);
    config.num_layers = 1;
    config.hidden_size = 128;
    config.num_q_heads = 4;
    config.num_kv_heads = 2;
    config.head_dim = 32;
    config.intermediate_size = 256;
    if (config.use_moe) config.moe_intermediate_size = 64;
    const Model model(config, random_weights(config, 3));
    ThreadPool pool(2);
    Transformer transformer(model, pool);
    transformer.warm_up();  // its one-token pass on a scratch cache is not counted below, nor does it change a bit
    const std::vector<int> tokens = test_prompt(6, 2);
    KvCache full_cache(config.kv_layout(), 8);
    const ForwardRow full{&full_cache, tokens, /*all_logits=*/true};
    const std::vector<float> all_logits = transformer.forward(std::span(&full, 1));
    KvCache step_cache(config.kv_layout(), 8);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const ForwardRow one{&step_cache, std::span<const int>(tokens).subspan(i, 1), false};
      const std::vector<float>& logits = transformer.forward(std::span(&one, 1));
      EXPECT_TRUE(same_bits(logits.data(), all_logits.data() + i * config.vocab_size, config.vocab_size))
          << family << " position " << i;
    }
    for (float value : all_logits) ASSERT_TRUE(std::isfinite(value)) << family;
    // The router counted every fed token (6 in the prefill, 6 decoded) once per chosen expert.
    const std::vector<int64_t>& routed = transformer.expert_token_counts();
    if (!config.use_moe) {
      EXPECT_TRUE(routed.empty()) << family;
      continue;
    }
    ASSERT_EQ(routed.size(), static_cast<std::size_t>(config.num_experts));
    EXPECT_EQ(std::accumulate(routed.begin(), routed.end(), int64_t{0}), 12 * config.num_experts_per_token);
    for (int64_t count : routed) EXPECT_LE(count, 12) << "an expert gets a token at most once";
  }
}

TEST(Transformer, RejectsTokensOutsideTheVocabularyAndPositionsBeyondTheContext) {
  auto model = random_test_model("tiny");
  ThreadPool pool(1);
  Transformer transformer(*model, pool);
  KvCache cache(model->config.kv_layout(), 4);
  const std::vector<int> bad = {1, 6400};
  ForwardRow row{&cache, bad, false};
  EXPECT_THROW(transformer.forward(std::span(&row, 1)), Error);
  EXPECT_EQ(cache.length(), 0);
  const std::vector<int> too_long(513, 5);
  row = ForwardRow{&cache, too_long, false};
  EXPECT_THROW(transformer.forward(std::span(&row, 1)), Error);
  const std::vector<int> empty;
  row = ForwardRow{&cache, empty, false};
  EXPECT_THROW(transformer.forward(std::span(&row, 1)), Error);
}

// Profiles `steps` greedy forward calls, the prompt `ids` in the first and one chosen token in each after it.
ProfileSnapshot profile_greedy_run(const Model& model, int threads, std::vector<int> ids, int steps) {
  ThreadPool pool(threads);
  Transformer transformer(model, pool);
  KvCache cache(model.config.kv_layout(), static_cast<int>(ids.size()) + steps);
  set_profiling(true);
  std::size_t past = 0;
  for (int step = 0; step < steps; ++step) {
    const ForwardRow row{&cache, std::span<const int>(ids).subspan(past), false};
    past = ids.size();
    const std::vector<float>& logits = transformer.forward(std::span(&row, 1));
    ids.push_back(static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin()));
  }
  set_profiling(false);
  return profile_snapshot();
}

// The profiler's zones on a greedy run of N tokens (one prefill, N − 1 decodes): one forward zone per call, one
// attention zone per layer and call, and in a dense model 4 products per layer (qkv, o_proj, gate_up, down) plus
// the lm_head. Times are inclusive, so each child's total fits in its parent's.
TEST(TransformerProfile, ZoneCountsFollowTheForwardCallsOfAGreedyRun) {
  auto model = random_test_model("tiny");
  const int layers = model->config.num_layers;
  constexpr int kNewTokens = 6;
  const ProfileSnapshot profile = profile_greedy_run(*model, 2, test_prompt(5, 3), kNewTokens);
  EXPECT_EQ(profile[Zone::kForward].calls, kNewTokens);
  EXPECT_EQ(profile[Zone::kAttention].calls, layers * kNewTokens);
  EXPECT_EQ(profile[Zone::kMatmul].calls, (4 * layers + 1) * kNewTokens);
  EXPECT_EQ(profile[Zone::kMoeRouting].calls, 0);
  EXPECT_GT(profile[Zone::kMatmul].nanoseconds, 0);
  EXPECT_LE(profile[Zone::kMatmul].nanoseconds + profile[Zone::kAttention].nanoseconds,
            profile[Zone::kForward].nanoseconds)
      << "matmul and attention are disjoint children of forward";
  EXPECT_LE(profile[Zone::kForward].nanoseconds, profile.wall_nanoseconds);
}

// One token per call through mixture-of-experts layers: one routing zone per layer, whose router product counts
// as a matmul, then gate_up and down for each of the top-k experts the token went to, and for each shared expert.
TEST(TransformerProfile, MoeRoutesOncePerLayerAndRunsTheTopKExpertsOfTheToken) {
  ModelConfig config = testing::test_config("minimind3-moe");
  config.hidden_size = 128;  // shrunk as above: the counts depend on the layout, not the widths
  config.num_q_heads = 4;
  config.num_kv_heads = 2;
  config.head_dim = 32;
  config.moe_intermediate_size = 64;
  const Model model(config, random_weights(config, 3));
  constexpr int kSteps = 2;
  const ProfileSnapshot profile = profile_greedy_run(model, 1, {7}, kSteps);
  EXPECT_EQ(profile[Zone::kMoeRouting].calls, config.num_layers * kSteps);
  const int per_layer = 3 + 2 * config.num_experts_per_token + 2 * config.num_shared_experts;  // qkv, o_proj, router
  EXPECT_EQ(profile[Zone::kMatmul].calls, (config.num_layers * per_layer + 1) * kSteps);
  EXPECT_LE(profile[Zone::kMoeRouting].nanoseconds, profile[Zone::kForward].nanoseconds);
}

// Tied embeddings: the logit of token t at position 0 is the final-normed embedding of the input dotted with
// embedding t; with one layer zeroed out the block is the identity, so the logit is computable by hand.
TEST(Transformer, ZeroedBlockReducesToNormedEmbeddingDotEmbedding) {
  ModelConfig config = testing::test_config("tiny");
  config.num_layers = 1;
  ModelWeights weights = random_weights(config, 3);
  for (float& w : weights.layers[0].o_proj.values) w = 0.0f;
  for (float& w : weights.layers[0].mlp.down.values) w = 0.0f;
  Model model(config, std::move(weights));
  ThreadPool pool(1);
  Transformer transformer(model, pool);
  KvCache cache(config.kv_layout(), 1);
  const std::vector<int> token = {42};
  ForwardRow row{&cache, token, false};
  const std::vector<float>& logits = transformer.forward(std::span(&row, 1));
  const int hidden = config.hidden_size;
  const float* embedding = model.weights.embed_tokens.data() + 42 * hidden;
  double mean_square = 0;
  for (int i = 0; i < hidden; ++i) mean_square += double(embedding[i]) * embedding[i];
  mean_square /= hidden;
  for (int t : {0, 42, 6399}) {
    double expected = 0;
    for (int i = 0; i < hidden; ++i) {
      const double normed = embedding[i] / std::sqrt(mean_square + config.rms_norm_eps) * model.weights.final_norm[i];
      expected += normed * model.weights.embed_tokens.data()[static_cast<std::size_t>(t) * hidden + i];
    }
    EXPECT_NEAR(logits[t], expected, 1e-3) << "token " << t;
  }
}

}  // namespace
}  // namespace minigen

namespace minigen {
namespace {

// Every kernel at every thread count and both weight types: 32 rows of 1…40 tokens (crossing the KV blocks'
// 16-token edges, and the matrix kernel's 6-row tiles) fed together give each row's logits bit for bit as the row
// fed alone on one thread; then one decode step of all 32 together matches each row's own step.
void expect_batch_of_32_matches_rows_alone(const std::string& family, WeightType type, int threads,
                                           KvDType kv_dtype = KvDType::kF32,
                                           std::optional<ActivationCodes> activations = std::nullopt) {
  SCOPED_TRACE(family + " " + std::string(weight_type_name(type)) + " threads " + std::to_string(threads) + " kv " +
               std::string(kv_dtype_name(kv_dtype)) +
               (activations ? " activations " + std::string(activation_codes_name(*activations)) : ""));
  auto model = testing::random_test_model(family);
  const int vocab = model->config.vocab_size;
  std::vector<std::vector<int>> prompts;
  for (int r = 0; r < 32; ++r) prompts.push_back(testing::test_prompt(1 + (r * 13) % 40, 100 + r));
  std::vector<std::vector<float>> alone_prefill, alone_step;
  {
    ThreadPool pool(1);
    Transformer transformer(*model, pool, type, activations);
    for (int r = 0; r < 32; ++r) {
      KvCache cache(model->config.kv_layout(kv_dtype), 48);
      ForwardRow row{&cache, prompts[r], false};
      alone_prefill.push_back(transformer.forward(std::span(&row, 1)));
      const int next = (r * 31) % vocab;
      ForwardRow step{&cache, std::span(&next, 1), false};
      alone_step.push_back(transformer.forward(std::span(&step, 1)));
    }
  }
  ThreadPool pool(threads);
  Transformer transformer(*model, pool, type, activations);
  std::vector<std::unique_ptr<KvCache>> caches;
  std::vector<ForwardRow> rows;
  for (int r = 0; r < 32; ++r) {
    caches.push_back(std::make_unique<KvCache>(model->config.kv_layout(kv_dtype), 48));
    rows.push_back(ForwardRow{caches.back().get(), prompts[r], false});
  }
  const std::vector<float> prefill = transformer.forward(rows);
  std::vector<int> next(32);
  for (int r = 0; r < 32; ++r) {
    next[r] = (r * 31) % vocab;
    rows[r] = ForwardRow{caches[r].get(), std::span(&next[r], 1), false};
  }
  const std::vector<float> step = transformer.forward(rows);
  for (int r = 0; r < 32; ++r) {
    EXPECT_TRUE(same_bits(prefill.data() + static_cast<std::size_t>(r) * vocab, alone_prefill[r].data(), vocab))
        << "prefill row " << r;
    EXPECT_TRUE(same_bits(step.data() + static_cast<std::size_t>(r) * vocab, alone_step[r].data(), vocab))
        << "decode row " << r;
  }
}

TEST(TransformerBatch, ThirtyTwoRowsMatchRowsAloneOnEveryThreadCountAndWeightType) {
  for (WeightType type : {WeightType::kF32, WeightType::kBF16, WeightType::kQ8, WeightType::kQ4}) {
    for (int threads : {1, 2, 3}) expect_batch_of_32_matches_rows_alone("tiny", type, threads);
  }
  expect_batch_of_32_matches_rows_alone("minimind3-moe", WeightType::kBF16, 2);  // experts run on token groups
  expect_batch_of_32_matches_rows_alone("minimind3-moe", WeightType::kQ8, 2);
}

// W8A8 (q8 weights × int8 activations) keeps the contract: each row's codes come from that row alone and every
// kernel sums the same integers, so 32 rows together are each row alone, on 1, 2 or 3 threads.
TEST(TransformerBatch, W8A8RowsMatchRowsAloneOnEveryThreadCount) {
  for (int threads : {1, 2, 3}) {
    expect_batch_of_32_matches_rows_alone("tiny", WeightType::kQ8, threads, KvDType::kF32, ActivationCodes::kInt8);
  }
  expect_batch_of_32_matches_rows_alone("minimind3-moe", WeightType::kQ8, 2, KvDType::kF32, ActivationCodes::kInt8);
}

// The exactness contract in every KV element type: a row's logits are the same bits alone or among 32 rows, on 1
// or 3 threads, and whether its prompt was prefilled at once, in chunks, or one token at a time — the element type
// changes what is stored for a position (from that position's K and V alone), never the order of any sum.
class TransformerKvDType : public ::testing::TestWithParam<KvDType> {};

TEST_P(TransformerKvDType, BatchedChunkedAndThreadedRunsGiveTheBitsOfOneRowAlone) {
  for (int threads : {1, 3}) expect_batch_of_32_matches_rows_alone("tiny", WeightType::kF32, threads, GetParam());

  auto model = random_test_model("tiny");
  const int vocab = model->config.vocab_size;
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  const std::vector<int> tokens = test_prompt(40, 9);  // crosses two 16-position blocks
  KvCache full_cache(model->config.kv_layout(GetParam()), 40);
  ForwardRow full{&full_cache, tokens, true};
  const std::vector<float> all_logits = transformer.forward(std::span(&full, 1));
  for (const std::vector<int>& chunks : {std::vector<int>{17, 5, 18}, std::vector<int>(40, 1)}) {
    KvCache chunk_cache(model->config.kv_layout(GetParam()), 40);
    int offset = 0;
    for (int chunk : chunks) {
      ForwardRow row{&chunk_cache, std::span<const int>(tokens).subspan(offset, chunk), true};
      const std::vector<float>& logits = transformer.forward(std::span(&row, 1));
      ASSERT_TRUE(same_bits(logits.data(), all_logits.data() + static_cast<std::size_t>(offset) * vocab,
                            static_cast<std::size_t>(chunk) * vocab))
          << chunks.size() << " chunks, chunk at " << offset;
      offset += chunk;
    }
  }
}

// Past kAttentionChunkKeys a context is attended in chunks; a decode step with few rows splits them across threads
// (split-K) while a prefill keeps each query on one thread. Both give the same bits, in every KV type and at 1, 2
// and 3 threads: 20 tokens decoded one at a time after a 2,080-token prefill (3 chunks) match the same 20 tokens
// fed in one call on one thread.
TEST_P(TransformerKvDType, LongContextDecodeSplitAcrossThreadsGivesThePrefillBits) {
  auto model = random_test_model("tiny", 1, 2112);
  const int vocab = model->config.vocab_size;
  const std::vector<int> tokens = test_prompt(2100, 13);
  const std::span<const int> prefix = std::span<const int>(tokens).first(2080);
  const std::span<const int> last = std::span<const int>(tokens).subspan(2080);
  std::vector<float> expected;
  {
    ThreadPool pool(1);
    Transformer transformer(*model, pool);
    KvCache cache(model->config.kv_layout(GetParam()), 2112);
    ForwardRow row{&cache, prefix, false};
    transformer.forward(std::span(&row, 1));
    row = ForwardRow{&cache, last, true};
    expected = transformer.forward(std::span(&row, 1));
  }
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    Transformer transformer(*model, pool);
    KvCache cache(model->config.kv_layout(GetParam()), 2112);
    ForwardRow row{&cache, prefix, false};
    transformer.forward(std::span(&row, 1));
    for (int i = 0; i < 20; ++i) {
      row = ForwardRow{&cache, last.subspan(i, 1), false};
      const std::vector<float>& logits = transformer.forward(std::span(&row, 1));
      ASSERT_TRUE(same_bits(logits.data(), expected.data() + static_cast<std::size_t>(i) * vocab, vocab))
          << threads << " threads, position " << 2080 + i;
    }
  }
}

// A narrower cache does change the logits (so its path is in use), by little: bf16 keeps 8 mantissa bits, f16 11,
// int8 a 127-level grid per row.
TEST_P(TransformerKvDType, LogitsStayCloseToTheF32Cache) {
  auto model = random_test_model("tiny");
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  const std::vector<int> prompt = test_prompt(30, 11);
  KvCache exact_cache(model->config.kv_layout(), 32), cache(model->config.kv_layout(GetParam()), 32);
  ForwardRow exact_row{&exact_cache, prompt, true}, row{&cache, prompt, true};
  const std::vector<float> exact = transformer.forward(std::span(&exact_row, 1));
  const std::vector<float> stored = transformer.forward(std::span(&row, 1));
  double max_difference = 0, max_magnitude = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    max_difference = std::max(max_difference, static_cast<double>(std::fabs(exact[i] - stored[i])));
    max_magnitude = std::max(max_magnitude, static_cast<double>(std::fabs(exact[i])));
  }
  if (GetParam() == KvDType::kF32) {
    EXPECT_EQ(max_difference, 0.0);
  } else {
    EXPECT_GT(max_difference, 0.0);
    EXPECT_LT(max_difference, 0.05 * max_magnitude);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKvDType, TransformerKvDType,
                         ::testing::Values(KvDType::kF32, KvDType::kBF16, KvDType::kF16, KvDType::kInt8),
                         [](const ::testing::TestParamInfo<KvDType>& info) {
                           return std::string(kv_dtype_name(info.param));
                         });

// bf16 weights change the numbers a little (8-bit mantissas) — and do change them, so the bf16 path is in use.
TEST(TransformerBatch, Bf16LogitsStayCloseToFp32) {
  auto model = testing::random_test_model("tiny");
  ThreadPool pool(2);
  Transformer fp32(*model, pool, WeightType::kF32);
  Transformer bf16(*model, pool, WeightType::kBF16);
  // Matrices at half the bytes, norms (fp32 in both) unchanged: 2 · bf16 − fp32 = the norms' bytes.
  const ModelConfig& config = model->config;
  const std::size_t norm_bytes =
      4 * static_cast<std::size_t>(config.hidden_size * (2 * config.num_layers + 1) +
                                   (config.qk_norm ? 2 * config.head_dim * config.num_layers : 0));
  EXPECT_EQ(2 * bf16.weight_bytes() - fp32.weight_bytes(), norm_bytes);
  const std::vector<int> prompt = testing::test_prompt(20, 7);
  KvCache cache_a(model->config.kv_layout(), 32), cache_b(model->config.kv_layout(), 32);
  ForwardRow row_a{&cache_a, prompt, false}, row_b{&cache_b, prompt, false};
  const std::vector<float> exact = fp32.forward(std::span(&row_a, 1));
  const std::vector<float> rounded = bf16.forward(std::span(&row_b, 1));
  double max_difference = 0, max_magnitude = 0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    max_difference = std::max(max_difference, static_cast<double>(std::fabs(exact[i] - rounded[i])));
    max_magnitude = std::max(max_magnitude, static_cast<double>(std::fabs(exact[i])));
  }
  EXPECT_GT(max_difference, 0.0);
  EXPECT_LT(max_difference, 0.05 * max_magnitude);
}

}  // namespace
}  // namespace minigen
