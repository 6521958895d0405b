#pragma once
// A loaded model: its shape, its weights and the RoPE table built from them. Immutable once built, so any number
// of generations can share one Model.
#include "model/config.h"
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

 private:
  bool matrices_released_ = false;
};

}  // namespace minigen
