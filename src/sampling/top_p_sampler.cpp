#include "sampling/top_p_sampler.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/error.h"
#include "sampling/probabilities.h"
#include "sampling/shortest_decimal.h"

namespace minigen {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// MiniMind: mask = cumsum > p, shifted right by one, first never masked → keep through the first prefix above p.
int minimind_kept_count(std::span<const float> descending_probabilities, float top_p) {
  double cumulative = 0.0;  // torch's CPU cumsum accumulates float in double and stores each prefix as float
  for (size_t index = 0; index < descending_probabilities.size(); ++index) {
    cumulative += descending_probabilities[index];
    if (static_cast<float>(cumulative) > top_p) return static_cast<int>(index) + 1;
  }
  return static_cast<int>(descending_probabilities.size());
}

// Hugging Face: walking up from the least likely token, remove while the ascending cumsum is ≤ 1 − p; the most likely
// token is never removed (min_tokens_to_keep = 1). The ascending cumsum only grows, so removals form a prefix.
int hugging_face_kept_count(std::span<const float> descending_probabilities, float top_p) {
  const float threshold = static_cast<float>(1.0 - as_typed_decimal(top_p));
  const int count = static_cast<int>(descending_probabilities.size());
  double cumulative = 0.0;
  int removed = 0;
  for (int index = count - 1; index > 0; --index) {
    cumulative += descending_probabilities[index];
    if (!(static_cast<float>(cumulative) <= threshold)) break;
    ++removed;
  }
  return count - removed;
}

// llama.cpp: keep in descending order until the float running sum reaches p, that token included.
int llama_cpp_kept_count(std::span<const float> descending_probabilities, float top_p) {
  float cumulative = 0.0f;
  for (size_t index = 0; index < descending_probabilities.size(); ++index) {
    cumulative += descending_probabilities[index];
    if (cumulative >= top_p) return static_cast<int>(index) + 1;
  }
  return static_cast<int>(descending_probabilities.size());
}

}  // namespace

int top_p_kept_count(std::span<const float> descending_probabilities, float top_p, TopPRule rule) {
  switch (rule) {
    case TopPRule::Minimind:
      return minimind_kept_count(descending_probabilities, top_p);
    case TopPRule::HuggingFace:
      return hugging_face_kept_count(descending_probabilities, top_p);
    case TopPRule::LlamaCpp:
      return llama_cpp_kept_count(descending_probabilities, top_p);
  }
  throw Error("unknown top-p rule value " + std::to_string(static_cast<int>(rule)));
}

TopPSampler::TopPSampler(float top_p, TopPRule rule) : top_p_(top_p), rule_(rule) {
  if (!(top_p > 0.0f && top_p <= 1.0f)) throw Error("top-p must be in (0, 1], got " + shortest_decimal(top_p));
}

void TopPSampler::apply(std::span<float> logits, const SamplingContext& /*context*/) const {
  if (top_p_ >= 1.0f) return;
  // Tokens already removed have probability exactly 0 and add nothing to any cumulative sum, so only the remaining
  // candidates are sorted: after top-k that is k tokens instead of the whole vocabulary.
  std::vector<int> candidates;
  for (size_t id = 0; id < logits.size(); ++id) {
    if (logits[id] != kMinusInfinity) candidates.push_back(static_cast<int>(id));
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&logits](int left, int right) { return logits[left] > logits[right]; });
  std::vector<float> descending_logits(candidates.size());
  for (size_t index = 0; index < candidates.size(); ++index) descending_logits[index] = logits[candidates[index]];
  const std::vector<float> descending_probabilities = softmax_probabilities(descending_logits);

  const int kept_count = top_p_kept_count(descending_probabilities, top_p_, rule_);
  for (size_t index = static_cast<size_t>(kept_count); index < candidates.size(); ++index)
    logits[candidates[index]] = kMinusInfinity;
}

std::string TopPSampler::name() const {
  return "top-p(" + shortest_decimal(top_p_) + ", " + top_p_rule_name(rule_) + ")";
}

}  // namespace minigen
