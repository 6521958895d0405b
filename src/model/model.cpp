#include "model/model.h"

namespace minigen {
namespace {

std::optional<RopeYarn> yarn_of(const ModelConfig& config) {
  if (!config.rope_scaling) return std::nullopt;
  const RopeScaling& s = *config.rope_scaling;
  return RopeYarn{s.factor, s.original_max_position_embeddings, s.beta_fast, s.beta_slow, s.attention_factor};
}

}  // namespace

Model::Model(ModelConfig model_config, ModelWeights model_weights)
    : config(std::move(model_config)),
      weights(std::move(model_weights)),
      rope(config.head_dim, config.max_position_embeddings, config.rope_theta, yarn_of(config)) {}

}  // namespace minigen
