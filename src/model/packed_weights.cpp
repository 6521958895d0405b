#include "model/packed_weights.h"

namespace minigen {
namespace {

PackedMatrix pack(const Matrix& matrix, WeightType type) {
  return PackedMatrix::stack({matrix.source()}, matrix.cols, type);
}

PackedFeedForward pack_feed_forward(const FeedForwardWeights& weights, WeightType type) {
  PackedFeedForward packed;
  packed.gate_up = PackedMatrix::stack({weights.gate.source(), weights.up.source()}, weights.gate.cols, type);
  packed.down = pack(weights.down, type);
  return packed;
}

std::size_t feed_forward_bytes(const PackedFeedForward& packed) { return packed.gate_up.bytes() + packed.down.bytes(); }

}  // namespace

PackedWeights pack_weights(const ModelConfig& config, const ModelWeights& weights, WeightType type) {
  PackedWeights packed;
  packed.type = type;
  for (const LayerWeights& layer : weights.layers) {
    PackedLayer out;
    out.qkv = PackedMatrix::stack({layer.q_proj.source(), layer.k_proj.source(), layer.v_proj.source()},
                                  config.hidden_size, type);
    out.o_proj = pack(layer.o_proj, type);
    if (config.use_moe) {
      out.router = pack(layer.router, type);
      for (const auto& expert : layer.experts) out.experts.push_back(pack_feed_forward(expert, type));
      for (const auto& shared : layer.shared_experts) out.shared_experts.push_back(pack_feed_forward(shared, type));
    } else {
      out.mlp = pack_feed_forward(layer.mlp, type);
    }
    packed.layers.push_back(std::move(out));
  }
  packed.lm_head = pack(weights.output_projection(), output_projection_type(type));
  if (!weights.lm_head.empty()) packed.untied_embedding = pack(weights.embed_tokens, output_projection_type(type));
  return packed;
}

WeightType output_projection_type(WeightType type) { return type == WeightType::kQ4 ? WeightType::kQ8 : type; }

std::size_t PackedWeights::matrix_bytes() const {
  std::size_t bytes = lm_head.bytes();
  for (const PackedLayer& layer : layers) {
    bytes += layer.qkv.bytes() + layer.o_proj.bytes() + feed_forward_bytes(layer.mlp) + layer.router.bytes();
    for (const auto& expert : layer.experts) bytes += feed_forward_bytes(expert);
    for (const auto& shared : layer.shared_experts) bytes += feed_forward_bytes(shared);
  }
  return bytes;
}

}  // namespace minigen
