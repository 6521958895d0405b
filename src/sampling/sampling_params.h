#pragma once
// What the user asks for: plain data, filled from command-line flags or a request body, checked by validate().
// Defaults are those of MiniMind's generate (temperature 0.85, top-k 50, top-p 0.85, no repetition penalty).
#include <cstdint>

#include "sampling/top_p_rule.h"

namespace minigen {

// Dividing logits by a temperature of 1e-39 (or by a repetition penalty of 1e-38) overflows them to ±inf, after
// which no softmax is defined. Below these bounds the distribution is argmax for all practical purposes anyway
// (vLLM clamps temperatures below 0.01 for the same reason); use greedy decoding instead.
inline constexpr float kMinTemperature = 0.01f;
inline constexpr float kMinRepetitionPenalty = 0.01f;
inline constexpr float kMaxRepetitionPenalty = 100.0f;

struct SamplingParams {
  float temperature = 0.85f;
  int top_k = 50;                   // 0 turns top-k off
  float top_p = 0.85f;              // 1 turns top-p off
  float min_p = 0.0f;               // 0 turns min-p off
  float repetition_penalty = 1.0f;  // 1 turns the penalty off
  bool greedy = false;              // argmax instead of a random draw (MiniMind's do_sample = False)
  TopPRule top_p_rule = TopPRule::Minimind;
  uint64_t seed = 0;  // with (row, step), determines every draw; see counter_rng.h

  // Throws minigen::Error naming the offending flag, e.g. "--top-p must be in (0, 1], got 1.5". NaN is rejected
  // everywhere. When greedy, a temperature ≤ 0 is accepted and ignored; a positive one is still applied, because
  // MiniMind divides by the temperature even when it then takes the argmax.
  void validate() const;

  // Whether the chain divides by the temperature: always when sampling, only for a positive one when greedy.
  bool applies_temperature() const;
};

}  // namespace minigen
