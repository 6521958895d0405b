#pragma once
// The model's parameters as plain arrays, named as in MiniMind's state dict. Matrices are [out, in] (nn.Linear).
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/tensor.h"

namespace minigen {

struct Matrix {
  int rows = 0;
  int cols = 0;
  std::vector<float> values;  // rows · cols, row-major

  const float* data() const { return values.data(); }
  bool empty() const { return values.empty(); }
};

struct FeedForwardWeights {  // down(silu(gate(x)) * up(x))
  Matrix gate;
  Matrix up;
  Matrix down;
};

struct LayerWeights {
  std::vector<float> input_norm;           // [hidden]
  std::vector<float> post_attention_norm;  // [hidden]
  Matrix q_proj, k_proj, v_proj, o_proj;
  std::vector<float> q_norm, k_norm;  // [head_dim]; empty without qk-norm
  FeedForwardWeights mlp;             // dense models
  Matrix router;                      // MoE: [experts, hidden]
  std::vector<FeedForwardWeights> experts;
  std::vector<FeedForwardWeights> shared_experts;
};

struct ModelWeights {
  Matrix embed_tokens;  // [vocab, hidden]
  std::vector<LayerWeights> layers;
  std::vector<float> final_norm;  // [hidden]
  Matrix lm_head;                 // empty when tied to embed_tokens

  const Matrix& output_projection() const { return lm_head.empty() ? embed_tokens : lm_head; }
};

// Takes the tensors a file held and checks every name and shape against the config; a missing, extra or
// misshapen tensor is a minigen::Error naming it. Values are moved out of `tensors`.
ModelWeights weights_from_tensors(const ModelConfig& config, TensorMap&& tensors);
// The inverse, for writing a model file (both embed_tokens and lm_head, as MiniMind's state dicts hold).
TensorMap tensors_from_weights(const ModelConfig& config, const ModelWeights& weights);
// Deterministic random weights for any config: embeddings N(0, 0.25²), linear layers N(0, 1/fan_in), norms 1 ± 0.1.
// Wide logits make greedy choices well separated, so tests comparing implementations are not decided by ties.
ModelWeights random_weights(const ModelConfig& config, uint64_t seed);

}  // namespace minigen
