#include "sampling/raw_logprobs.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.h"
#include "sampling/softmax_scan.h"

namespace minigen {

RawLogprobs raw_logprobs(std::span<const float> raw_logits, int chosen, int count) {
  if (raw_logits.empty()) throw Error("raw_logprobs needs at least one logit");
  if (chosen < 0 || static_cast<std::size_t>(chosen) >= raw_logits.size()) {
    throw Error("raw_logprobs: token " + std::to_string(chosen) + " is outside the row of " +
                std::to_string(raw_logits.size()));
  }
  const float largest = largest_value(raw_logits.data(), raw_logits.size());
  // fp32 exponentials (each within an ulp) summed in fp64: the logprob is off by ~1e-7 at most, far inside the 1e-4
  // a rollout's logprobs are held to, and the fp64 exp was a tenth of a small model's rollout.
  const double sum = shifted_exp(raw_logits.data(), largest, nullptr, raw_logits.size());
  const double log_total = static_cast<double>(largest) + std::log(sum);
  RawLogprobs out;
  out.chosen = static_cast<float>(raw_logits[chosen] - log_total);
  const std::size_t kept = std::min<std::size_t>(count > 0 ? static_cast<std::size_t>(count) : 0, raw_logits.size());
  if (kept == 0) return out;
  std::vector<int> ids(raw_logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(kept), ids.end(), [&](int a, int b) {
    return raw_logits[a] > raw_logits[b] || (raw_logits[a] == raw_logits[b] && a < b);
  });
  for (std::size_t i = 0; i < kept; ++i) {
    out.top.push_back({ids[i], static_cast<float>(raw_logits[ids[i]] - log_total)});
  }
  return out;
}

}  // namespace minigen
