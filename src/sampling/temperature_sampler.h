#pragma once
// Temperature: logits ÷ T. T < 1 sharpens the distribution, T > 1 flattens it.
//
// MiniMind divides (logits / temperature), so this divides too rather than multiplying by 1/T: the two can differ
// in the last bit. −inf stays −inf.
#include <span>
#include <string>

#include "sampling/sampling_context.h"

namespace minigen {

class TemperatureSampler {
 public:
  // Throws minigen::Error unless temperature is finite and > 0.
  explicit TemperatureSampler(float temperature);

  void apply(std::span<float> logits, const SamplingContext& context) const;
  std::string name() const;  // "temperature(0.85)"

 private:
  float temperature_;
};

}  // namespace minigen
