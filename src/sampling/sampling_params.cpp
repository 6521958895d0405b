#include "sampling/sampling_params.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "sampling/shortest_decimal.h"

namespace minigen {

void SamplingParams::validate() const {
  if (std::isnan(temperature) || std::isinf(temperature)) {
    throw Error("--temperature must be a finite number, got " + shortest_decimal(temperature));
  }
  if (!greedy && !(temperature > 0.0f)) {
    throw Error("--temperature must be > 0 when sampling (use --greedy for argmax), got " +
                shortest_decimal(temperature));
  }
  if (applies_temperature() && temperature < kMinTemperature) {
    throw Error("--temperature must be at least " + shortest_decimal(kMinTemperature) +
                " (smaller ones overflow the logits; use --greedy for argmax), got " + shortest_decimal(temperature));
  }
  if (top_k < 0) throw Error("--top-k must be >= 0 (0 turns it off), got " + std::to_string(top_k));
  if (!(top_p > 0.0f && top_p <= 1.0f)) throw Error("--top-p must be in (0, 1], got " + shortest_decimal(top_p));
  if (!(min_p >= 0.0f && min_p <= 1.0f)) throw Error("--min-p must be in [0, 1], got " + shortest_decimal(min_p));
  if (!(std::isfinite(repetition_penalty) && repetition_penalty > 0.0f)) {
    throw Error("--repetition-penalty must be a finite number > 0 (1 turns it off), got " +
                shortest_decimal(repetition_penalty));
  }
  if (repetition_penalty < kMinRepetitionPenalty || repetition_penalty > kMaxRepetitionPenalty) {
    throw Error("--repetition-penalty must be in [" + shortest_decimal(kMinRepetitionPenalty) + ", " +
                shortest_decimal(kMaxRepetitionPenalty) + "] (1 turns it off), got " +
                shortest_decimal(repetition_penalty));
  }
}

bool SamplingParams::applies_temperature() const { return !greedy || temperature > 0.0f; }

}  // namespace minigen
