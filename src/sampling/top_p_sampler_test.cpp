#include "sampling/top_p_sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "sampling/sampling_test_util.h"

namespace minigen {
namespace {

// The brief's boundary case; the float arithmetic is worked through in top_p_sampler.h.
TEST(TopPKeptCountTest, FiveThreeOneOneAtPointEight) {
  const std::vector<float> probabilities = {0.5f, 0.3f, 0.1f, 0.1f};
  EXPECT_EQ(top_p_kept_count(probabilities, 0.8f, TopPRule::kMinimind), 3);
  EXPECT_EQ(top_p_kept_count(probabilities, 0.8f, TopPRule::kHuggingFace), 2);
  EXPECT_EQ(top_p_kept_count(probabilities, 0.8f, TopPRule::kLlamaCpp), 2);
}

TEST(TopPKeptCountTest, AwayFromTheBoundaryTheRulesAgree) {
  const std::vector<float> probabilities = {0.5f, 0.3f, 0.1f, 0.1f};
  // p = 0.7: prefix 0.8 is the first above (and at or above) 0.7; ascending 0.1, 0.2 ≤ 0.3 < 0.5 → all keep 2.
  for (const TopPRule rule : {TopPRule::kMinimind, TopPRule::kHuggingFace, TopPRule::kLlamaCpp}) {
    EXPECT_EQ(top_p_kept_count(probabilities, 0.7f, rule), 2) << top_p_rule_name(rule);
    // p = 0.3: the first token alone (0.5) already passes → 1.
    EXPECT_EQ(top_p_kept_count(probabilities, 0.3f, rule), 1) << top_p_rule_name(rule);
    // p = 1: nothing reaches above 1, ascending 0.1 ≤ 0 is false → all 4.
    EXPECT_EQ(top_p_kept_count(probabilities, 1.0f, rule), 4) << top_p_rule_name(rule);
  }
}

TEST(TopPKeptCountTest, AlwaysKeepsTheTopToken) {
  const std::vector<float> probabilities = {0.9f, 0.1f};
  // p far below the top probability: every rule still keeps the first token.
  for (const TopPRule rule : {TopPRule::kMinimind, TopPRule::kHuggingFace, TopPRule::kLlamaCpp}) {
    EXPECT_EQ(top_p_kept_count(probabilities, 0.01f, rule), 1) << top_p_rule_name(rule);
  }
  // A single candidate is always kept.
  const std::vector<float> single = {1.0f};
  for (const TopPRule rule : {TopPRule::kMinimind, TopPRule::kHuggingFace, TopPRule::kLlamaCpp}) {
    EXPECT_EQ(top_p_kept_count(single, 0.01f, rule), 1) << top_p_rule_name(rule);
  }
}

TEST(TopPSamplerTest, FourEqualLogitsSplitTheRules) {
  // softmax of four zeros is exactly 0.25 each; p = 0.5 lands exactly on the second prefix (0.25 + 0.25).
  //   minimind: 0.5 > 0.5 is false, 0.75 > 0.5 → keep through the third → ids 0, 1, 2.
  //   hf:       1 − 0.5 = 0.5; ascending 0.25 ≤ 0.5 and 0.5 ≤ 0.5 are removed → ids 0, 1.
  //   llamacpp: 0.5 ≥ 0.5 → stop at the second → ids 0, 1.
  // Ties are ordered by increasing id, so the lower ids are the ones kept.
  std::vector<float> minimind = {0.0f, 0.0f, 0.0f, 0.0f};
  std::vector<float> hugging_face = minimind;
  std::vector<float> llama_cpp = minimind;
  TopPSampler(0.5f, TopPRule::kMinimind).apply(minimind, {});
  TopPSampler(0.5f, TopPRule::kHuggingFace).apply(hugging_face, {});
  TopPSampler(0.5f, TopPRule::kLlamaCpp).apply(llama_cpp, {});
  EXPECT_EQ(minimind, (std::vector<float>{0.0f, 0.0f, 0.0f, kMinusInfinity}));
  EXPECT_EQ(hugging_face, (std::vector<float>{0.0f, 0.0f, kMinusInfinity, kMinusInfinity}));
  EXPECT_EQ(llama_cpp, (std::vector<float>{0.0f, 0.0f, kMinusInfinity, kMinusInfinity}));
}

TEST(TopPSamplerTest, SortsByLogitAndKeepsTheMostLikely) {
  // Logits ln 1, ln 6, ln 3 → probabilities 0.1, 0.6, 0.3; descending: id 1 (0.6), id 2 (0.9 cumulative), id 0.
  // p = 0.75: 0.6 is not above 0.75, 0.9 is → keep ids 1 and 2 (all three rules agree away from the boundary).
  for (const TopPRule rule : {TopPRule::kMinimind, TopPRule::kHuggingFace, TopPRule::kLlamaCpp}) {
    std::vector<float> logits = {0.0f, std::log(6.0f), std::log(3.0f)};
    TopPSampler(0.75f, rule).apply(logits, {});
    EXPECT_EQ(logits[0], kMinusInfinity) << top_p_rule_name(rule);
    EXPECT_EQ(logits[1], std::log(6.0f)) << top_p_rule_name(rule);
    EXPECT_EQ(logits[2], std::log(3.0f)) << top_p_rule_name(rule);
  }
}

TEST(TopPSamplerTest, RenormalisesOverTokensThatSurvivedTopK) {
  // ids 0 and 1 remain (0.5 each after renormalising); id 2 was removed earlier. p = 0.4: 0.5 > 0.4 → only id 0.
  std::vector<float> logits = {1.0f, 1.0f, kMinusInfinity};
  TopPSampler(0.4f, TopPRule::kMinimind).apply(logits, {});
  EXPECT_EQ(logits, (std::vector<float>{1.0f, kMinusInfinity, kMinusInfinity}));
}

TEST(TopPSamplerTest, OneIsANoOpAndASingleSurvivorStays) {
  const std::vector<float> original = {0.5f, -2.0f, 3.0f};
  std::vector<float> logits = original;
  TopPSampler(1.0f, TopPRule::kMinimind).apply(logits, {});
  EXPECT_EQ(logits, original);

  std::vector<float> single = {kMinusInfinity, kMinusInfinity, 4.0f, kMinusInfinity};
  TopPSampler(0.1f, TopPRule::kHuggingFace).apply(single, {});
  EXPECT_EQ(single, (std::vector<float>{kMinusInfinity, kMinusInfinity, 4.0f, kMinusInfinity}));
}

TEST(TopPSamplerTest, RejectsPOutsideZeroOne) {
  EXPECT_THROW(TopPSampler(0.0f, TopPRule::kMinimind), Error);
  EXPECT_THROW(TopPSampler(1.5f, TopPRule::kMinimind), Error);
  EXPECT_THROW(TopPSampler(std::numeric_limits<float>::quiet_NaN(), TopPRule::kMinimind), Error);
  EXPECT_EQ(TopPSampler(0.85f, TopPRule::kLlamaCpp).name(), "top-p(0.85, llamacpp)");
}

}  // namespace
}  // namespace minigen
