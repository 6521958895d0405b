#pragma once
// The model's matrices as the kernels read them: packed into 16-wide panels (ops/packed_matrix.h), in fp32 or
// bf16, with the products that read the same input stacked into one — q, k and v; gate and up — so a layer
// issues fewer, larger products (fewer thread hand-offs, better load balance across cores).
#include <cstddef>
#include <vector>

#include "model/config.h"
#include "model/weights.h"
#include "ops/packed_matrix.h"

namespace minigen {

struct PackedFeedForward {
  PackedMatrix gate_up;  // [2 · intermediate][hidden]: gate rows, then up rows
  PackedMatrix down;     // [hidden][intermediate]
};

struct PackedLayer {
  PackedMatrix qkv;  // [q_width + 2 · kv_width][hidden]
  PackedMatrix o_proj;
  PackedFeedForward mlp;  // dense models
  PackedMatrix router;    // MoE
  std::vector<PackedFeedForward> experts;
  std::vector<PackedFeedForward> shared_experts;
};

struct PackedWeights {
  WeightType type = WeightType::kF32;
  // q8/q4: the codes the layers' products quantize activations to (ops/weight_type.h).
  ActivationCodes activations = ActivationCodes::kInt16;
  std::vector<PackedLayer> layers;
  // The output projection (embed_tokens when tied). q8 in a q4 model (see ops/weight_type.h).
  PackedMatrix lm_head;
  // An untied embedding, packed like the rest (the forward pass reads one row per token); empty when tied.
  PackedMatrix untied_embedding;

  // Where token embeddings are read: the packed lm_head itself when tied, so a tied embedding and lm_head stay the
  // same numbers after rounding or quantization, and no fp32 copy is kept.
  const PackedMatrix& embedding() const { return untied_embedding.empty() ? lm_head : untied_embedding; }

  // Bytes one decode step streams through the matrix products (every packed element once; norms excluded).
  std::size_t matrix_bytes() const;
};

PackedWeights pack_weights(const ModelConfig& config, const ModelWeights& weights, WeightType type);
// The type the output projection is packed in for a model of `type`.
WeightType output_projection_type(WeightType type);
// Runs every q8/q4 product of the layers with `codes` activations (W8A8: int8 for q8); the output projection
// follows only when `output_projection` (it keeps int16 otherwise). Throws minigen::Error for weights that are not
// q8/q4, or q4 × int16.
void use_activations(PackedWeights& packed, ActivationCodes codes, bool output_projection);

}  // namespace minigen
