#include "lab/lab_statistics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "core/error.h"

namespace minigen::lab {
namespace {

// z_i = (logit_i − max) / T, so that exp never overflows; p_i = exp(z_i) / Z with Z = Σ exp(z_j) ≥ 1.
// Its own softmax, in double, rather than the samplers' (sampling/probabilities.h): the samplers must reproduce
// torch's float arithmetic, while the lab reports entropies and probabilities, where double keeps Σ p·ln p exact.
std::vector<double> scaled_logits(std::span<const float> logits, double temperature, double& partition) {
  if (logits.empty()) throw Error("no logits to take a distribution of");
  if (!(temperature > 0)) throw Error("the temperature of a distribution must be positive");
  const float largest = *std::max_element(logits.begin(), logits.end());
  std::vector<double> scaled(logits.size());
  partition = 0;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    scaled[i] = (static_cast<double>(logits[i]) - largest) / temperature;
    partition += std::exp(scaled[i]);
  }
  return scaled;
}

}  // namespace

RowComparison compare_rows(const GeneratedSequence& a, const GeneratedSequence& b) {
  RowComparison comparison;
  comparison.token_ids_identical = a.token_ids == b.token_ids;
  const std::size_t common_tokens = std::min(a.token_ids.size(), b.token_ids.size());
  for (std::size_t step = 0; step < common_tokens && comparison.first_differing_step < 0; ++step) {
    if (a.token_ids[step] != b.token_ids[step]) comparison.first_differing_step = static_cast<int>(step);
  }
  if (!comparison.token_ids_identical && comparison.first_differing_step < 0) {
    comparison.first_differing_step = static_cast<int>(common_tokens);  // one is a prefix of the other
  }
  // The steps that chose a token in both rows; steps a finished row was only padded are not part of its answer.
  const std::size_t steps = std::min({common_tokens, a.step_logits.size(), b.step_logits.size()});
  bool bits_equal = comparison.token_ids_identical && steps == common_tokens && steps > 0;
  for (std::size_t step = 0; step < steps; ++step) {
    const std::vector<float>& left = a.step_logits[step];
    const std::vector<float>& right = b.step_logits[step];
    if (left.size() != right.size()) throw Error("step logits of different vocabulary sizes");
    // Bit equality, not ==: it also tells +0 from −0 and compares NaNs, which is what "bit-identical" claims.
    bits_equal = bits_equal && std::memcmp(left.data(), right.data(), left.size() * sizeof(float)) == 0;
    for (std::size_t i = 0; i < left.size(); ++i) {
      const double difference = std::fabs(static_cast<double>(left[i]) - static_cast<double>(right[i]));
      comparison.max_abs_logit_difference = std::max(comparison.max_abs_logit_difference, difference);
    }
    comparison.logits_compared += static_cast<long long>(left.size());
  }
  comparison.logits_bit_identical = bits_equal;
  return comparison;
}

double kl_divergence_nats(std::span<const float> p_logits, std::span<const float> q_logits) {
  if (p_logits.size() != q_logits.size()) throw Error("KL divergence of distributions of different sizes");
  double p_partition = 0;
  double q_partition = 0;
  const std::vector<double> p = scaled_logits(p_logits, 1.0, p_partition);
  const std::vector<double> q = scaled_logits(q_logits, 1.0, q_partition);
  // ln p_i = z_i − ln Z: the log-probabilities straight from the shifted logits, exact where p_i underflows.
  const double log_p_partition = std::log(p_partition);
  const double log_q_partition = std::log(q_partition);
  double kl = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double log_p = p[i] - log_p_partition;
    kl += std::exp(log_p) * (log_p - (q[i] - log_q_partition));
  }
  return std::max(0.0, kl);  // rounding can leave −1e-17 where the distributions are equal
}

double entropy_bits(std::span<const float> logits, double temperature) {
  double partition = 0;
  const std::vector<double> scaled = scaled_logits(logits, temperature, partition);
  // H = −Σ p_i·ln p_i = ln Z − Σ p_i·z_i (in nats), then ÷ ln 2 for bits.
  double expected_scaled = 0;
  for (double z : scaled) expected_scaled += std::exp(z) / partition * z;
  return (std::log(partition) - expected_scaled) / std::log(2.0);
}

double top_probability(std::span<const float> logits, double temperature) {
  double partition = 0;
  scaled_logits(logits, temperature, partition);
  return 1.0 / partition;  // the largest z is 0, so its probability is exp(0) / Z
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values) sum += value;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

double median(std::vector<double> values) {
  if (values.empty()) throw Error("the median of no values is undefined");
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

int distinct_count(std::span<const std::vector<int>> sequences) {
  return static_cast<int>(std::set<std::vector<int>>(sequences.begin(), sequences.end()).size());
}

std::vector<CountBin> power_of_two_histogram(std::span<const int> values, int max_value) {
  std::vector<CountBin> bins;
  for (int high = 1;; high *= 2) {
    const int low = high == 1 ? 1 : high / 2 + 1;
    const std::string label = low == high ? std::to_string(low) : std::to_string(low) + "–" + std::to_string(high);
    bins.push_back(CountBin{low, high, label, 0});
    if (high >= max_value) break;
  }
  for (int value : values) {
    for (CountBin& bin : bins) {
      if (value >= bin.low && value <= bin.high) {
        ++bin.count;
        break;
      }
    }
  }
  return bins;
}

}  // namespace minigen::lab
