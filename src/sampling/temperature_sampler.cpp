#include "sampling/temperature_sampler.h"

#include <cmath>

#include "core/error.h"
#include "core/format.h"
#include "sampling/sampling_params.h"
#include "sampling/vocab_scan.h"

namespace minigen {

TemperatureSampler::TemperatureSampler(float temperature) : temperature_(temperature) {
  check_temperature(temperature);
}

void TemperatureSampler::apply(std::span<float> logits, const SamplingContext& /*context*/) const {
  divide_all(logits, temperature_);  // the same one division per logit, a vector at a time
}

std::string TemperatureSampler::name() const { return "temperature(" + shortest_decimal(temperature_) + ")"; }

}  // namespace minigen
