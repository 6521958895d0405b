// The sampler chain against a plain reference: the chain as first written, with std::stable_sort of the ids for
// top-p, nth_element over a copy of the row for top-k, and a softmax over the whole row for min-p and the draw. The
// fast paths (value-only VQSort, the buffered k-th largest, the survivors-only draw) must keep exactly the same tokens,
// in the same order, and draw exactly the same token, on every row below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/format.h"
#include "sampling/counter_rng.h"
#include "sampling/sampler_chain.h"
#include "sampling/sampling_test_util.h"

namespace minigen {
namespace {

std::vector<float> reference_softmax(const std::vector<float>& logits) {
  const float max_logit = *std::max_element(logits.begin(), logits.end());
  std::vector<float> probabilities(logits.size());
  double sum = 0.0;
  for (size_t id = 0; id < logits.size(); ++id) {
    probabilities[id] = std::exp(logits[id] - max_logit);
    sum += probabilities[id];
  }
  for (float& probability : probabilities) probability = static_cast<float>(probability / sum);
  return probabilities;
}

void reference_top_k(std::vector<float>& logits, int k) {
  if (k == 0 || static_cast<size_t>(k) >= logits.size()) return;
  std::vector<float> values = logits;
  std::nth_element(values.begin(), values.begin() + (k - 1), values.end(), std::greater<float>());
  const float kth_largest = values[k - 1];
  for (float& logit : logits) {
    if (logit < kth_largest) logit = kMinusInfinity;
  }
}

// The ids of the remaining candidates, largest logit first, ties by increasing id.
std::vector<int> reference_descending_ids(const std::vector<float>& logits) {
  std::vector<int> ids;
  for (size_t id = 0; id < logits.size(); ++id) {
    if (logits[id] != kMinusInfinity) ids.push_back(static_cast<int>(id));
  }
  std::stable_sort(ids.begin(), ids.end(), [&logits](int left, int right) { return logits[left] > logits[right]; });
  return ids;
}

// Prefix sums as torch's CPU cumsum gives them: accumulated in double, each stored as float.
std::vector<float> reference_cumsum(const std::vector<float>& values) {
  std::vector<float> sums;
  double running = 0.0;
  for (const float value : values) sums.push_back(static_cast<float>(running += value));
  return sums;
}

// The three rules written the way their projects write them, as removal masks over the sorted probabilities (not
// with the production code's early exits): how many of the descending probabilities survive.
int reference_kept_count(const std::vector<float>& descending, float top_p, TopPRule rule) {
  const std::size_t n = descending.size();
  std::vector<bool> removed(n, false);
  if (rule == TopPRule::kMinimind) {
    // MiniMind: remove = cumsum > p, shifted right by one; the first token is never removed.
    const std::vector<float> sums = reference_cumsum(descending);
    for (std::size_t j = 1; j < n; ++j) removed[j] = sums[j - 1] > top_p;
  } else if (rule == TopPRule::kHuggingFace) {
    // Hugging Face: sort ascending, remove where the cumsum ≤ 1 − p (the Python double, compared as float), keep
    // the most likely token.
    const std::vector<float> ascending(descending.rbegin(), descending.rend());
    const std::vector<float> sums = reference_cumsum(ascending);
    const float threshold = static_cast<float>(1.0 - as_typed_decimal(top_p));
    for (std::size_t j = 0; j + 1 < n; ++j) removed[n - 1 - j] = sums[j] <= threshold;
  } else {
    // llama.cpp: a float running sum; keep up to and including the token at which it reaches p.
    float running = 0.0f;
    bool reached = false;
    for (std::size_t j = 0; j < n; ++j) {
      removed[j] = reached;
      running += descending[j];
      reached = reached || running >= top_p;
    }
  }
  return static_cast<int>(std::count(removed.begin(), removed.end(), false));
}

// Returns how many candidates top-p kept; the kept ones are the first that many of reference_descending_ids.
int reference_top_p(std::vector<float>& logits, float top_p, TopPRule rule) {
  if (top_p >= 1.0f) return -1;  // off: the chain has no top-p stage
  const std::vector<int> ids = reference_descending_ids(logits);
  std::vector<float> descending_logits;
  for (const int id : ids) descending_logits.push_back(logits[id]);
  const int kept_count = reference_kept_count(reference_softmax(descending_logits), top_p, rule);
  for (size_t index = static_cast<size_t>(kept_count); index < ids.size(); ++index) logits[ids[index]] = kMinusInfinity;
  return kept_count;
}

void reference_min_p(std::vector<float>& logits, float min_p) {
  if (min_p == 0.0f) return;
  const std::vector<float> probabilities = reference_softmax(logits);
  const float threshold = min_p * *std::max_element(probabilities.begin(), probabilities.end());
  for (size_t id = 0; id < logits.size(); ++id) {
    if (probabilities[id] < threshold) logits[id] = kMinusInfinity;
  }
}

int reference_draw(const std::vector<float>& logits, double uniform) {
  const std::vector<float> probabilities = reference_softmax(logits);
  double total = 0.0;
  for (const float probability : probabilities) total += probability;
  const double target = uniform * total;
  double cumulative = 0.0;
  int last_possible_id = -1;
  for (size_t id = 0; id < probabilities.size(); ++id) {
    if (probabilities[id] == 0.0f) continue;
    cumulative += probabilities[id];
    last_possible_id = static_cast<int>(id);
    if (cumulative > target) return last_possible_id;
  }
  return last_possible_id;
}

// MiniMind's order of filters, as in SamplerChain's constructor (no repetition penalty here: it sorts nothing).
std::vector<float> reference_filter(std::vector<float> logits, const SamplingParams& params) {
  for (float& logit : logits) logit = logit / params.temperature;
  reference_top_k(logits, params.top_k);
  reference_top_p(logits, params.top_p, params.top_p_rule);
  reference_min_p(logits, params.min_p);
  return logits;
}

SampledToken reference_choice(const std::vector<float>& filtered, const SamplingParams& params, uint64_t step) {
  SampledToken result;
  for (const float logit : filtered) result.kept_count += logit == kMinusInfinity ? 0 : 1;
  result.token = params.greedy ? static_cast<int>(std::max_element(filtered.begin(), filtered.end()) - filtered.begin())
                               : reference_draw(filtered, uniform_for(params.seed, 0, step));
  return result;
}

// Rows that stress the order: continuous logits, heavy ties (four distinct values, +0 beside −0), removed tokens,
// a spread so wide that most exps underflow to 0, rows sorted ascending and descending (the k-th-largest buffer's
// worst and best case), and a row of equal logits.
enum class RowShape { Normal, HeavyTies, SomeRemoved, Underflowing, Ascending, Descending, AllEqual };
constexpr RowShape kShapes[] = {RowShape::Normal,       RowShape::HeavyTies, RowShape::SomeRemoved,
                                RowShape::Underflowing, RowShape::Ascending, RowShape::Descending,
                                RowShape::AllEqual};

std::vector<float> make_row(RowShape shape, size_t size, std::mt19937& random) {
  std::normal_distribution<float> normal(0.0f, 2.5f);
  std::uniform_int_distribution<int> small_integer(0, 3);
  std::bernoulli_distribution removed(0.3);
  std::vector<float> row(size);
  for (float& logit : row) logit = normal(random);
  switch (shape) {
    case RowShape::Normal:
      break;
    case RowShape::HeavyTies:
      for (float& logit : row) {
        const int value = small_integer(random);
        logit = value == 0 ? (removed(random) ? -0.0f : 0.0f) : static_cast<float>(value) * 0.5f;
      }
      break;
    case RowShape::SomeRemoved:
      for (float& logit : row) {
        if (removed(random)) logit = kMinusInfinity;
      }
      row[size / 2] = 1.0f;  // at least one survivor
      break;
    case RowShape::Underflowing:
      for (float& logit : row) logit *= 40.0f;
      break;
    case RowShape::Ascending:
      std::sort(row.begin(), row.end());
      break;
    case RowShape::Descending:
      std::sort(row.begin(), row.end(), std::greater<float>());
      break;
    case RowShape::AllEqual:
      std::fill(row.begin(), row.end(), 0.25f);
      break;
  }
  return row;
}

std::string describe(RowShape shape, size_t size, const SamplingParams& params) {
  return "shape " + std::to_string(static_cast<int>(shape)) + " vocab " + std::to_string(size) + " top-k " +
         std::to_string(params.top_k) + " top-p " + std::to_string(params.top_p) + " min-p " +
         std::to_string(params.min_p) + " rule " + top_p_rule_name(params.top_p_rule) +
         (params.greedy ? " greedy" : " draw");
}

// Every combination of top-k 0/1/50/vocab, top-p 0.1/0.9/1, min-p 0/0.05, the three top-p rules, draw and argmax.
void expect_chain_matches_reference(size_t size, std::span<const RowShape> shapes, int rows_per_shape) {
  std::mt19937 random(static_cast<uint32_t>(size) * 31u + 1u);
  for (const RowShape shape : shapes) {
    for (int row_index = 0; row_index < rows_per_shape; ++row_index) {
      const std::vector<float> row = make_row(shape, size, random);
      for (const int top_k : {0, 1, 50, static_cast<int>(size)}) {
        for (const float top_p : {0.1f, 0.9f, 1.0f}) {
          for (const float min_p : {0.0f, 0.05f}) {
            for (const TopPRule rule : {TopPRule::kMinimind, TopPRule::kHuggingFace, TopPRule::kLlamaCpp}) {
              SamplingParams params{
                  .temperature = 0.85f, .top_k = top_k, .top_p = top_p, .min_p = min_p, .top_p_rule = rule, .seed = 11};
              // The filters do not depend on greedy, so the (slow) reference filters once for both choices.
              const std::vector<float> expected_filtered = reference_filter(row, params);
              for (const bool greedy : {false, true}) {
                params.greedy = greedy;
                const uint64_t step = static_cast<uint64_t>(row_index);
                const SampledToken expected = reference_choice(expected_filtered, params, step);
                std::vector<float> filtered = row;
                const SampledToken sampled = SamplerChain(params).sample(filtered, {.step = step});
                const std::string where = describe(shape, size, params);
                ASSERT_EQ(sampled.token, expected.token) << where;
                ASSERT_EQ(sampled.kept_count, expected.kept_count) << where;
                // The same ids kept, and their logits untouched: the kept set is identical.
                ASSERT_EQ(filtered, expected_filtered) << where;
              }
            }
          }
        }
      }
    }
  }
}

TEST(SamplerChainReferenceTest, VocabularyOfOne) {
  const RowShape shapes[] = {RowShape::Normal, RowShape::AllEqual};
  expect_chain_matches_reference(1, shapes, 3);
}

TEST(SamplerChainReferenceTest, VocabularyOfSeven) { expect_chain_matches_reference(7, kShapes, 20); }

TEST(SamplerChainReferenceTest, MiniMindVocabularyOf6400) { expect_chain_matches_reference(6400, kShapes, 2); }

TEST(SamplerChainReferenceTest, MiniMind3VocabularyOf151665) {
  const RowShape shapes[] = {RowShape::Normal, RowShape::HeavyTies, RowShape::SomeRemoved};
  expect_chain_matches_reference(151665, shapes, 1);
}

// The top-p stage alone, on rows sorted by nothing: the kept ids are exactly the first kept_count ids of the stable
// sort, for many probabilities p, including p that land inside a run of tied logits.
TEST(TopPSamplerReferenceTest, KeepsTheLeadingIdsOfTheStableOrder) {
  std::mt19937 random(3);
  for (const RowShape shape : kShapes) {
    for (const size_t size : {size_t{7}, size_t{600}, size_t{6400}}) {
      const std::vector<float> row = make_row(shape, size, random);
      for (const float top_p : {0.05f, 0.1f, 0.25f, 0.5f, 0.75f, 0.9f, 0.95f, 0.999f}) {
        for (const TopPRule rule : {TopPRule::kMinimind, TopPRule::kHuggingFace, TopPRule::kLlamaCpp}) {
          std::vector<float> expected = row;
          const int kept_count = reference_top_p(expected, top_p, rule);
          std::vector<float> filtered = row;
          TopPSampler(top_p, rule).apply(filtered, {});
          ASSERT_EQ(filtered, expected) << "shape " << static_cast<int>(shape) << " size " << size << " p " << top_p;
          // Spelled out: the survivors are the stable order's first kept_count ids.
          const std::vector<int> order = reference_descending_ids(row);
          for (size_t index = 0; index < order.size(); ++index) {
            ASSERT_EQ(filtered[order[index]] != kMinusInfinity, index < static_cast<size_t>(kept_count));
          }
        }
      }
    }
  }
}

// A run of ten tied logits that the boundary cuts after the fourth: the four lowest ids of the run stay.
TEST(TopPSamplerReferenceTest, CutInsideATieKeepsTheLowestIds) {
  // Token 0 has weight 10, tokens 1..10 weight 1 each (sum 20). p = 0.6: cumulative 0.5, 0.55, 0.6, 0.65 > 0.6 → the
  // Minimind rule keeps token 0 and three of the ties. Ties are shuffled among ids by interleaving removed tokens.
  std::vector<float> logits(21, kMinusInfinity);
  logits[20] = std::log(10.0f);
  for (int id = 0; id < 20; id += 2) logits[id] = 0.0f;
  std::vector<float> expected = logits;
  const int kept_count = reference_top_p(expected, 0.6f, TopPRule::kMinimind);
  TopPSampler(0.6f, TopPRule::kMinimind).apply(logits, {});
  EXPECT_EQ(logits, expected);
  EXPECT_EQ(kept_count, 4);
  std::vector<int> kept_ids;
  for (size_t id = 0; id < logits.size(); ++id) {
    if (logits[id] != kMinusInfinity) kept_ids.push_back(static_cast<int>(id));
  }
  EXPECT_EQ(kept_ids, (std::vector<int>{0, 2, 4, 20}));
}

}  // namespace
}  // namespace minigen
