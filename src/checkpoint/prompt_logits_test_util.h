#pragma once
// For the checkpoint tests: the logits a loaded model gives a short prompt, compared bit for bit between the ways
// one model can be stored (safetensors, .pth, GGUF).
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

inline bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace minigen::testing
