#include "sampling/top_p_sampler.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/assert.h"
#include "core/error.h"
#include "core/format.h"
#include "sampling/descending_sort.h"
#include "sampling/probabilities.h"
#include "sampling/sampling_params.h"
#include "sampling/vocab_scan.h"

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

// Keeps the first `kept_count` tokens in the order "logit descending, equal logits by increasing id" (what a stable
// sort of the ids gives) and removes the others, knowing only the candidates' logits sorted largest first. The kept
// tokens are those above the boundary logit, then the lowest ids among those equal to it.
void keep_first_in_order(std::span<float> logits, std::span<const float> descending_logits, size_t kept_count) {
  const float boundary = descending_logits[kept_count - 1];
  const auto [tied_begin, tied_end] =
      std::equal_range(descending_logits.begin(), descending_logits.end(), boundary, std::greater<float>());
  const size_t above_boundary = static_cast<size_t>(tied_begin - descending_logits.begin());
  const size_t tied_count = static_cast<size_t>(tied_end - tied_begin);
  remove_below(logits, boundary);  // everything below the boundary goes
  // Ties at the boundary are cut only when the kept count ends inside them, which continuous logits rarely do.
  size_t tied_places_left = kept_count - above_boundary;
  if (tied_places_left == tied_count) return;
  for (float& logit : logits) {
    if (logit != boundary) continue;
    if (tied_places_left > 0) {
      --tied_places_left;
    } else {
      logit = kMinusInfinity;
    }
  }
}

}  // namespace

int top_p_kept_count(std::span<const float> descending_probabilities, float top_p, TopPRule rule) {
  switch (rule) {
    case TopPRule::kMinimind:
      return minimind_kept_count(descending_probabilities, top_p);
    case TopPRule::kHuggingFace:
      return hugging_face_kept_count(descending_probabilities, top_p);
    case TopPRule::kLlamaCpp:
      return llama_cpp_kept_count(descending_probabilities, top_p);
  }
  throw Error("unknown top-p rule value " + std::to_string(static_cast<int>(rule)));
}

TopPSampler::TopPSampler(float top_p, TopPRule rule) : top_p_(top_p), rule_(rule) { check_top_p(top_p); }

void TopPSampler::apply(std::span<float> logits, const SamplingContext& /*context*/) const {
  if (top_p_ >= 1.0f) return;
  // Tokens already removed have probability exactly 0 and add nothing to any cumulative sum, so only the remaining
  // candidates take part: after top-k that is k values instead of the whole vocabulary.
  // Scratch kept per thread: allocating two vocabulary-sized vectors every token cost more (page faults, copies
  // while growing) than the sort itself. A row is sampled start to finish on one thread, so nothing is shared.
  thread_local std::vector<float> descending_logits;
  thread_local std::vector<float> descending_probabilities;
  // NaN would make the sort's comparisons meaningless; the chain has rejected it already, this guards direct use.
  if (any_nan(logits)) {
    const size_t id = static_cast<size_t>(
        std::find_if(logits.begin(), logits.end(), [](float logit) { return std::isnan(logit); }) - logits.begin());
    throw Error("top-p: logit of token " + std::to_string(id) + " is NaN");
  }
  gather_candidates(logits, descending_logits);
  // Only the values are sorted, not the ids: the boundary rules see nothing but the sequence of probabilities, and
  // tied logits have equal probabilities, so that sequence is the same whichever tied id comes first. Plain values
  // are what lets VQSort do the work (descending_sort.h): 0.55 ms for 151,665 logits, where std::stable_sort of the
  // ids through a comparator took 16.5 ms. The ids only matter at the boundary, and keep_first_in_order settles those.
  // Every candidate is sorted, not just a head that could survive: softmax accumulates its sum in this order, and
  // another order could round that sum differently and move a probability, hence a kept count, by an ulp.
  sort_descending(descending_logits);
  softmax_probabilities(descending_logits, descending_probabilities);

  const int kept_count = top_p_kept_count(descending_probabilities, top_p_, rule_);
  // Every rule keeps the most likely candidate: a row that had one never leaves this sampler empty.
  MINIGEN_ASSERT(
      descending_logits.empty() || (kept_count >= 1 && static_cast<size_t>(kept_count) <= descending_logits.size()),
      "top-p kept ", kept_count, " of ", descending_logits.size(), " candidates");
  if (static_cast<size_t>(kept_count) == descending_logits.size()) return;
  keep_first_in_order(logits, descending_logits, static_cast<size_t>(kept_count));
}

std::string TopPSampler::name() const {
  return "top-p(" + shortest_decimal(top_p_) + ", " + top_p_rule_name(rule_) + ")";
}

}  // namespace minigen
