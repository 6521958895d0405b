#pragma once
// Where the lab's report turns a measured number into a word. Every sentence that compares two values or states a
// claim about the data is chosen by one of these thresholds, so a report on an untrained, a tiny or a large model
// says what its own numbers say. Each constant says why it has its value.
#include <cmath>

namespace minigen::lab {

// Two measured values are "about the same" when their ratio is within ±10 % of 1. Repeated timings on a shared
// two-core machine scatter by a few percent; a difference under 10 % is not something a learner should read as an
// effect of the cache or the sampler.
inline constexpr double kAboutSameTolerance = 0.10;

enum class Comparison { kSmaller, kAboutSame, kLarger };

// How `ratio` (a / b) compares with 1 under kAboutSameTolerance; kAboutSame for a ratio that is not a number
// (0 / 0: nothing was measured on either side). The bound is inclusive and forgives the last bits of rounding, so
// that a ratio the report prints as 1.10 is "about the same".
inline Comparison compare_ratio(double ratio) {
  constexpr double kRounding = 1e-9;
  if (std::isnan(ratio) || std::abs(ratio - 1.0) <= kAboutSameTolerance + kRounding) return Comparison::kAboutSame;
  return ratio > 1.0 ? Comparison::kLarger : Comparison::kSmaller;
}

// top-p keeps "a handful" of candidates when the median kept is at most 5: few enough that a reader can list them,
// the size of the choices a sure model leaves (MiniMind's default top-k of 50 is ten times that).
inline constexpr double kHandfulCandidates = 5;

// Flat steps keep "many more" candidates than peaked ones when their median is at least 4× the peaked median:
// a factor that survives the rounding of small medians (1 against 2 is not yet a different regime).
inline constexpr double kSpreadFactor = 4;

// The samples at the lowest temperature are "variations of the greedy answer" when at least half of them open with
// the greedy answer's first tokens: then the typical low-T sample starts where greedy decoding goes and departs
// later; below half, most samples leave the greedy path at once, and saying "variations" would describe the minority.
inline constexpr double kGreedyVariationShare = 0.5;

// A model is "untrained" when its perplexity is at or above its vocabulary size: a uniform guess over the
// vocabulary has exactly that perplexity, so the model predicts no better than chance and its sampling numbers
// describe noise, not a learned distribution.
inline bool looks_untrained(double perplexity, int vocab_size) {
  return vocab_size > 0 && perplexity >= static_cast<double>(vocab_size);
}

// A perplexity change within ±1 % is "practically unchanged": the held-out set is a few documents, and 1 % is below
// what a learner would notice in the text a model writes.
inline constexpr double kNegligiblePerplexityChange = 0.01;

// A LoRA adapter merged into W (W + B·A, fp32) and the same adapter unmerged (W x + B(A x)) compute one product with
// the sums in a different order; the logits then differ "only by rounding" when no logit moves by more than this.
// fp32 rounding of those sums leaves differences of 1e-6 to 1e-4 on logits of tens; a thousandth is above that and far
// below a change of the model anyone would read in its probabilities.
inline constexpr double kMergeRoundingLogitTolerance = 1e-3;

}  // namespace minigen::lab
