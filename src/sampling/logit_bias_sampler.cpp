#include "sampling/logit_bias_sampler.h"

#include <limits>

#include "core/error.h"

namespace minigen {

LogitBiasSampler::LogitBiasSampler(std::vector<LogitBias> biases) : biases_(std::move(biases)) {
  check_logit_bias(biases_);
}

void LogitBiasSampler::apply(std::span<float> logits, const SamplingContext& /*context*/) const {
  for (const LogitBias& entry : biases_) {
    if (static_cast<std::size_t>(entry.token) >= logits.size()) {
      throw Error("logit_bias: token id " + std::to_string(entry.token) + " is outside the vocabulary [0, " +
                  std::to_string(logits.size()) + ")");
    }
    float& logit = logits[entry.token];
    logit = entry.bias <= -kMaxLogitBias ? -std::numeric_limits<float>::infinity() : logit + entry.bias;
  }
}

std::string LogitBiasSampler::name() const {
  return "logit-bias(" + std::to_string(biases_.size()) + (biases_.size() == 1 ? " token)" : " tokens)");
}

}  // namespace minigen
