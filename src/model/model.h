#pragma once
// A loaded model: its shape, its weights and the RoPE table built from them. Immutable once built, so any number
// of generations can share one Model.
#include <memory>

#include "model/config.h"
#include "model/lora_adapter.h"
#include "model/weights.h"
#include "ops/rope.h"

namespace minigen {

struct Model {
  Model(ModelConfig model_config, ModelWeights model_weights);

  // Frees the row-major fp32 matrices (every weight but the norms) once the Transformers that will run this model
  // have packed their own copies, so the process holds the weights once, in the type they run in (104 M
  // parameters: 416 MB of fp32 saved). A Transformer built afterwards throws minigen::Error.
  void release_matrices();
  bool matrices_released() const { return matrices_released_; }

  ModelConfig config;
  ModelWeights weights;
  RopeTable rope;
  // The LoRA adapter loaded with the model (--lora, Model(lora=…)): every forward row that brings no adapter of its
  // own runs with it. Empty for the base model alone (and in serve, where each request names its adapter).
  std::shared_ptr<const LoraAdapter> adapter;

 private:
  bool matrices_released_ = false;
};

}  // namespace minigen
