#include "sampling/logit_bias_sampler.h"

#include <limits>

#include "core/error.h"

namespace minigen {

LogitBiasSampler::LogitBiasSampler(std::vector<LogitBias> biases) : biases_(std::move(biases)) {
  check_logit_bias(biases_);
}

void LogitBiasSampler::apply(std::span<float> logits, const SamplingContext& /*context*/) const {
  bool banned_any = false;
  for (const LogitBias& entry : biases_) {
    if (static_cast<std::size_t>(entry.token) >= logits.size()) {
      throw Error("logit_bias: token id " + std::to_string(entry.token) + " is outside the vocabulary [0, " +
                  std::to_string(logits.size()) + ")");
    }
    float& logit = logits[entry.token];
    banned_any |= bans_token(entry);
    logit = bans_token(entry) ? -std::numeric_limits<float>::infinity() : logit + entry.bias;
  }
  // Bans of fewer than all ids can still leave nothing when the grammar's mask already removed the rest; it shows
  // only here, at the step where it happens (a whole-vocabulary ban is refused before generation starts).
  if (!banned_any) return;
  bool any_left = false;
  for (const float logit : logits) any_left |= logit != -std::numeric_limits<float>::infinity();
  if (!any_left) {
    throw InvalidSamplingParam(SamplingParam::kLogitBias,
                               "bans every token the grammar allows at this step: nothing is left to sample");
  }
}

std::string LogitBiasSampler::name() const {
  return "logit-bias(" + std::to_string(biases_.size()) + (biases_.size() == 1 ? " token)" : " tokens)");
}

}  // namespace minigen
