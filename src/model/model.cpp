#include "model/model.h"

#include "core/process_memory.h"

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

namespace {

void release(Matrix& matrix) {
  std::vector<float>().swap(matrix.values);
  std::vector<uint16_t>().swap(matrix.f16_bits);
  std::vector<int8_t>().swap(matrix.codes);
  std::vector<uint16_t>().swap(matrix.scales);
}

void release(FeedForwardWeights& feed_forward) {
  release(feed_forward.gate);
  release(feed_forward.up);
  release(feed_forward.down);
}

}  // namespace

void Model::release_matrices() {
  release(weights.embed_tokens);
  release(weights.lm_head);
  for (LayerWeights& layer : weights.layers) {
    for (Matrix* matrix : {&layer.q_proj, &layer.k_proj, &layer.v_proj, &layer.o_proj, &layer.router}) {
      release(*matrix);
    }
    release(layer.mlp);
    for (FeedForwardWeights& expert : layer.experts) release(expert);
    for (FeedForwardWeights& shared : layer.shared_experts) release(shared);
  }
  matrices_released_ = true;
  return_free_memory();
}

}  // namespace minigen
