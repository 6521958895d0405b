#pragma once
// A loaded model: its shape, its weights and the RoPE table built from them. Immutable once built, so any number
// of generations can share one Model.
#include "model/config.h"
#include "model/weights.h"
#include "ops/rope.h"

namespace minigen {

struct Model {
  Model(ModelConfig model_config, ModelWeights model_weights);

  ModelConfig config;
  ModelWeights weights;
  RopeTable rope;
};

}  // namespace minigen
