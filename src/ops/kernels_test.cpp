// RMSNorm, RoPE, softmax, SiLU·up and attention against values worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/rmsnorm.h"
#include "ops/rope.h"
#include "ops/softmax.h"

namespace minigen {
namespace {

TEST(RmsNorm, HandComputed) {
  // x = [3, 4]: mean(x²) = 12.5, rms = 3.5355…; weight [1, 2] → [0.8485, 2.2627]
  const float x[2] = {3.0f, 4.0f};
  const float weight[2] = {1.0f, 2.0f};
  float out[2];
  rmsnorm(out, x, weight, 2, 0.0f);
  EXPECT_NEAR(out[0], 3.0 / std::sqrt(12.5), 1e-6);
  EXPECT_NEAR(out[1], 2 * 4.0 / std::sqrt(12.5), 1e-6);
}

TEST(Softmax, HandComputedAndMasked) {
  float values[3] = {0.0f, std::log(3.0f), -std::numeric_limits<float>::infinity()};
  softmax(values, 3);
  EXPECT_NEAR(values[0], 0.25, 1e-7);
  EXPECT_NEAR(values[1], 0.75, 1e-7);
  EXPECT_EQ(values[2], 0.0f);
}

TEST(Activation, SiluTimesUp) {
  const float gate[2] = {0.0f, 2.0f};
  const float up[2] = {5.0f, 3.0f};
  float out[2];
  silu_mul(out, gate, up, 2);
  EXPECT_EQ(out[0], 0.0f);                                        // silu(0) = 0
  EXPECT_NEAR(out[1], 3.0 * 2.0 / (1.0 + std::exp(-2.0)), 1e-6);  // 2·σ(2)·3
}

TEST(Rope, PositionZeroIsIdentityAndPositionOneRotatesHalves) {
  // head_dim 4, theta 10000: freq_0 = 1, freq_1 = 10000^(-1/2) = 0.01. Pairs are (x0, x2) and (x1, x3).
  RopeTable rope(4, 8, 10000.0, std::nullopt);
  float head[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  rope.apply(head, 0);
  EXPECT_EQ(head[0], 1.0f);
  EXPECT_EQ(head[3], 4.0f);
  rope.apply(head, 1);
  EXPECT_NEAR(head[0], 1 * std::cos(1.0) - 3 * std::sin(1.0), 1e-6);
  EXPECT_NEAR(head[2], 3 * std::cos(1.0) + 1 * std::sin(1.0), 1e-6);
  EXPECT_NEAR(head[1], 2 * std::cos(0.01) - 4 * std::sin(0.01), 1e-6);
  EXPECT_NEAR(head[3], 4 * std::cos(0.01) + 2 * std::sin(0.01), 1e-6);
}

// A declared context of 2^31 − 1 tables only the first positions (8 MiB); the rest are computed when applied, by
// the same float operations as the table, so both agree with MiniMind's formula bit for bit.
TEST(Rope, HugeContextTablesFewPositionsAndComputesTheRestIdentically) {
  constexpr int kHeadDim = 64;
  const RopeTable rope(kHeadDim, 2147483647, 1e6, std::nullopt);
  EXPECT_EQ(rope.tabled_positions(), static_cast<int>(RopeTable::kMaxTableFloats / (kHeadDim / 2)));  // 32,768
  for (const int position : {0, 1, 5000, 32767, 32768, 40000, 1 << 24, 2147483646}) {
    float head[kHeadDim];
    for (int i = 0; i < kHeadDim; ++i) head[i] = 0.25f * static_cast<float>(i) - 3.0f;
    float expected[kHeadDim];
    for (int i = 0; i < kHeadDim / 2; ++i) {
      const float frequency = 1.0f / std::pow(1e6f, static_cast<float>(2 * i) / static_cast<float>(kHeadDim));
      const float angle = static_cast<float>(position) * frequency;
      const float c = std::cos(angle), s = std::sin(angle);
      expected[i] = head[i] * c - head[i + kHeadDim / 2] * s;
      expected[i + kHeadDim / 2] = head[i + kHeadDim / 2] * c + head[i] * s;
    }
    rope.apply(head, position);
    for (int i = 0; i < kHeadDim; ++i) EXPECT_EQ(head[i], expected[i]) << "position " << position << ", " << i;
  }
}

TEST(Rope, RejectsPositionsBeyondTheTable) {
  RopeTable rope(4, 8, 10000.0, std::nullopt);
  float head[4] = {};
  EXPECT_THROW(rope.apply(head, 8), std::exception);
}

TEST(Attention, TwoKeysHandComputed) {
  // head_dim 2, one kv head, scale 1/√2. q = [√2, 0]; k0 = [0, 0] → score 0; k1 = [ln 3, 0] → score ln 3 → ¼, ¾.
  const KvBlockLayout layout{1, 2};
  std::vector<std::byte> block(layout.block_bytes());
  const float k0[2] = {0.0f, 0.0f}, v0[2] = {4.0f, 8.0f};
  const float k1[2] = {std::log(3.0f), 0.0f}, v1[2] = {0.0f, 4.0f};
  layout.write(block.data(), 0, k0, v0);
  layout.write(block.data(), 1, k1, v1);
  const std::byte* blocks[1] = {block.data()};
  const float q[2] = {std::sqrt(2.0f), 0.0f};
  float out[2];
  std::vector<float> scores(16);
  AttentionGroup group{q, out, 1, 0};
  attend(group, blocks, 2, layout, scores.data());
  EXPECT_NEAR(out[0], 1.0, 1e-6);                   // ¼·4 + ¾·0
  EXPECT_NEAR(out[1], 5.0, 1e-6);                   // ¼·8 + ¾·4
  attend(group, blocks, 1, layout, scores.data());  // causal: only key 0 visible
  EXPECT_EQ(out[0], 4.0f);
  EXPECT_EQ(out[1], 8.0f);
}

// Split-K against the maths: 2,500 keys (three chunks, each with its own max and sum) give what one softmax over all
// of them gives, worked out in double. The scores span about ±15, so the chunks' maxima differ and the merge's
// rescaling matters; head_dim 20 has whole vectors and a remainder on every target.
TEST(Attention, ChunksMergeToTheSoftmaxOverAllKeys) {
  constexpr int kDim = 20;
  const KvBlockLayout layout{1, kDim};
  constexpr int kKeys = 2500;
  ASSERT_EQ(attention_chunk_count(kKeys), 3);
  std::vector<std::vector<std::byte>> storage((kKeys + 15) / 16, std::vector<std::byte>(layout.block_bytes()));
  std::vector<const std::byte*> blocks;
  for (const auto& block : storage) blocks.push_back(block.data());
  std::vector<float> keys(kKeys * kDim), values(kKeys * kDim);
  for (int j = 0; j < kKeys; ++j) {
    for (int d = 0; d < kDim; ++d) {
      keys[j * kDim + d] = static_cast<float>(std::sin(0.37 * j + d) * (1.0 + 4.0 * (j % 700) / 700.0));
      values[j * kDim + d] = static_cast<float>(std::cos(0.11 * j * (d + 1)));
    }
    layout.write(storage[j / 16].data(), j % 16, &keys[j * kDim], &values[j * kDim]);
  }
  float q[kDim];
  for (int d = 0; d < kDim; ++d) q[d] = static_cast<float>(1.5 * std::cos(0.9 * d));
  std::vector<double> scores(kKeys);
  double max_score = -1e300, sum = 0;
  for (int j = 0; j < kKeys; ++j) {
    for (int d = 0; d < kDim; ++d) scores[j] += static_cast<double>(q[d]) * keys[j * kDim + d];
    scores[j] /= std::sqrt(static_cast<double>(kDim));
    max_score = std::max(max_score, scores[j]);
  }
  EXPECT_GT(max_score, 8.0);
  for (double& s : scores) sum += (s = std::exp(s - max_score));
  std::vector<float> scratch(16 * 1024);
  float out[kDim], reference[kDim];
  attend({q, out, 1, 0}, blocks, kKeys, layout, scratch.data());
  attend_reference({q, reference, 1, 0}, blocks, kKeys, layout, scratch.data());
  for (int d = 0; d < kDim; ++d) {
    double expected = 0;
    for (int j = 0; j < kKeys; ++j) expected += scores[j] / sum * values[j * kDim + d];
    EXPECT_NEAR(out[d], expected, 1e-5) << d;
    EXPECT_NEAR(reference[d], expected, 1e-5) << d;
  }
}

// One chunk merges to itself, bit for bit: a context of up to kAttentionChunkKeys keys is one softmax, as before.
TEST(Attention, MergeOfOneChunkIsTheIdentity) {
  const float partial[3] = {0.1f, -7.25e-3f, 3.0e7f};
  const ChunkSoftmax softmax{-12.5f, 3.75f};
  float out[3];
  merge_attention_chunks(1, 1, 3, partial, &softmax, out);
  for (int d = 0; d < 3; ++d) EXPECT_EQ(out[d], partial[d]);
}

}  // namespace
}  // namespace minigen
