#pragma once
// The sampling flags of `generate` and `chat`, with MiniMind's generate defaults (T 0.85, top-p 0.85, top-k 50).
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "sampling/sampling_params.h"

namespace minigen::cli {

struct SamplingFlags {
  float temperature = 0.85f;
  int top_k = 50;
  float top_p = 0.85f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  bool greedy = false;
  uint64_t seed = 0;
  std::string top_p_rule = "minimind";

  void add_to(CLI::App& command);
  // Checks ranges (temperature ≤ 0 without --greedy, top-p outside (0, 1], ...) and throws minigen::Error.
  SamplingParams params() const;
};

}  // namespace minigen::cli
