#pragma once
// For the checkpoint tests: the logits a loaded model gives a short prompt, compared bit for bit between the ways
// one model can be stored (safetensors, .pth, GGUF).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "cache/kv_cache.h"
#include "model/transformer.h"
#include "ops/thread_pool.h"

namespace minigen::testing {

// Every position's logits of one forward pass over `prompt` on a fresh cache, with weights of `type`.
inline std::vector<float> prompt_logits(const Model& model, const std::vector<int>& prompt,
                                        WeightType type = WeightType::kF32) {
  ThreadPool pool(2);
  Transformer transformer(model, pool, type);
  KvCache cache(model.config.kv_layout(), static_cast<int>(prompt.size()));
  const ForwardRow row{&cache, prompt, true};
  return transformer.forward(std::span(&row, 1));
}

// log_softmax of the raw logits at each position of `output` fed after `prompt`, gathered at the output token:
// MiniMind's compute_per_token_logps on the same weights (what a rollout's logprobs must equal).
inline std::vector<double> completion_logprobs(const Model& model, std::vector<int> prompt,
                                               const std::vector<int>& output) {
  const std::size_t prompt_length = prompt.size();
  prompt.insert(prompt.end(), output.begin(), output.end());
  prompt.pop_back();  // the last output token is never fed
  const std::vector<float> logits = prompt_logits(model, prompt);
  const std::size_t vocab = static_cast<std::size_t>(model.config.vocab_size);
  std::vector<double> out;
  for (std::size_t t = 0; t < output.size(); ++t) {
    const float* row = logits.data() + (prompt_length - 1 + t) * vocab;
    double largest = row[0];
    for (std::size_t i = 0; i < vocab; ++i) largest = std::max<double>(largest, row[i]);
    double sum = 0;
    for (std::size_t i = 0; i < vocab; ++i) sum += std::exp(row[i] - largest);
    out.push_back(row[output[t]] - largest - std::log(sum));
  }
  return out;
}

inline bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace minigen::testing
