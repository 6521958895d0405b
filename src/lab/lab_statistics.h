#pragma once
// Small pure functions the lab's sections compute their tables with.
#include <span>
#include <string>
#include <vector>

#include "generate/generate.h"

namespace minigen::lab {

// How two generations of the same request compare: the module's "not one token differs" check, and bit for bit
// the logits they were chosen from (when both kept their step logits), over the steps both chose a token at.
struct RowComparison {
  bool token_ids_identical = false;
  int first_differing_step = -1;        // −1 when identical
  bool logits_bit_identical = false;    // same tokens, and every compared logit equal bit for bit
  double max_abs_logit_difference = 0;  // max |Δ| over the compared steps and the whole vocabulary
  long long logits_compared = 0;
};
RowComparison compare_rows(const GeneratedSequence& a, const GeneratedSequence& b);

// Entropy in bits of softmax(logits / temperature): how many bits of surprise the draw from that distribution
// carries on average. H = −Σ p·log2 p.
double entropy_bits(std::span<const float> logits, double temperature);

// KL(P ‖ Q) in nats of P = softmax(p_logits) and Q = softmax(q_logits): Σ p·(ln p − ln q), what a sample of P
// loses on average when scored by Q. 0 for the same logits; throws minigen::Error for different sizes.
double kl_divergence_nats(std::span<const float> p_logits, std::span<const float> q_logits);

// The largest probability of softmax(logits / temperature): near 1 for a peaked step, small for a flat one.
double top_probability(std::span<const float> logits, double temperature);

// The middle value (the mean of the two middle values for an even count); throws minigen::Error when empty.
double median(std::vector<double> values);
// The arithmetic mean; 0 for no values.
double mean(const std::vector<double>& values);

// How many different sequences there are among `sequences`.
int distinct_count(std::span<const std::vector<int>> sequences);

// Values in 1…max_value binned by powers of two: 1, 2, 3–4, 5–8, … up to the bin holding `max_value`.
struct CountBin {
  int low = 0;
  int high = 0;
  std::string label;  // "1", "2", "3–4", …
  int count = 0;
};
std::vector<CountBin> power_of_two_histogram(std::span<const int> values, int max_value);

}  // namespace minigen::lab
