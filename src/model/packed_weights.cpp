#include "model/packed_weights.h"

#include <string>

#include "core/error.h"

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
  packed.activations = default_activation_codes(type);
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

void use_activations(PackedWeights& packed, ActivationCodes codes, bool output_projection) {
  if (!is_block_quantized(packed.type)) {
    throw Error("int8/int16 activations apply to q8 and q4 weights only (" +
                std::string(weight_type_name(packed.type)) + " products take fp32 activations)");
  }
  const auto use = [codes](PackedMatrix& matrix) {
    if (!matrix.empty()) matrix.use_activations(codes);
  };
  const auto use_feed_forward = [&](PackedFeedForward& feed_forward) {
    use(feed_forward.gate_up);
    use(feed_forward.down);
  };
  for (PackedLayer& layer : packed.layers) {
    use(layer.qkv);
    use(layer.o_proj);
    use_feed_forward(layer.mlp);
    use(layer.router);
    for (auto& expert : layer.experts) use_feed_forward(expert);
    for (auto& shared : layer.shared_experts) use_feed_forward(shared);
  }
  if (output_projection) {
    use(packed.lm_head);
    use(packed.untied_embedding);
  }
  packed.activations = codes;
}

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
