// infer_config_from_tensors: a MiniMind .pth carries no config, so its shape is read off the tensor names and sizes.
#include <charconv>
#include <climits>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/config.h"

namespace minigen {
namespace {

class TensorShapes {
 public:
  explicit TensorShapes(const TensorMap& tensors) : tensors_(tensors) {}

  bool has(const std::string& name) const { return tensors_.count(name) != 0; }

  const std::vector<int64_t>& shape(const std::string& name) const {
    const auto found = tensors_.find(name);
    if (found == tensors_.end()) throw Error("state dict: tensor '" + name + "' is missing");
    return found->second.shape;
  }

  // The tensor's size along each dimension, which must fit an int; `rank` dimensions are required.
  std::vector<int> dims(const std::string& name, std::size_t rank) const {
    const std::vector<int64_t>& shape_of = shape(name);
    if (shape_of.size() != rank) {
      throw Error("state dict: tensor '" + name + "' has shape " + shape_string(shape_of) + ", expected " +
                  std::to_string(rank) + " dimensions");
    }
    std::vector<int> sizes;
    for (int64_t dim : shape_of) {
      if (dim <= 0 || dim > INT_MAX) {
        throw Error("state dict: tensor '" + name + "' has an unusable shape " + shape_string(shape_of));
      }
      sizes.push_back(static_cast<int>(dim));
    }
    return sizes;
  }

  void expect(const std::string& name, std::vector<int64_t> expected) const {
    if (shape(name) != expected) {
      throw Error("state dict: tensor '" + name + "' has shape " + shape_string(shape(name)) + ", expected " +
                  shape_string(expected));
    }
  }

  // 1 + the largest i among names "<prefix>{i}.<anything>", or 0 if there is none.
  int count_indexed(const std::string& prefix) const {
    int count = 0;
    for (auto it = tensors_.lower_bound(prefix); it != tensors_.end() && it->first.starts_with(prefix); ++it) {
      const std::string_view rest = std::string_view(it->first).substr(prefix.size());
      int index = 0;
      const char* rest_end = rest.data() + rest.size();
      const auto [end, error] = std::from_chars(rest.data(), rest_end, index);
      if (error == std::errc() && end != rest.data() && end != rest_end && *end == '.' && index < INT_MAX) {
        count = std::max(count, index + 1);
      }
    }
    return count;
  }

 private:
  const TensorMap& tensors_;
};

std::string layer_name(int layer, const char* suffix) { return "model.layers." + std::to_string(layer) + "." + suffix; }

void expect_feed_forward(const TensorShapes& shapes, const std::string& prefix, int64_t hidden, int64_t width) {
  shapes.expect(prefix + "gate_proj.weight", {width, hidden});
  shapes.expect(prefix + "up_proj.weight", {width, hidden});
  shapes.expect(prefix + "down_proj.weight", {hidden, width});
}

// Layer 0 decides the layout (qk-norm or not, dense or MoE, how many experts); every layer must then match it.
void check_layer(const TensorShapes& shapes, const ModelConfig& config, int layer) {
  const int64_t hidden = config.hidden_size;
  shapes.expect(layer_name(layer, "input_layernorm.weight"), {hidden});
  shapes.expect(layer_name(layer, "post_attention_layernorm.weight"), {hidden});
  shapes.expect(layer_name(layer, "self_attn.q_proj.weight"), {config.q_width(), hidden});
  shapes.expect(layer_name(layer, "self_attn.k_proj.weight"), {config.kv_width(), hidden});
  shapes.expect(layer_name(layer, "self_attn.v_proj.weight"), {config.kv_width(), hidden});
  shapes.expect(layer_name(layer, "self_attn.o_proj.weight"), {hidden, config.q_width()});
  if (config.qk_norm) {
    shapes.expect(layer_name(layer, "self_attn.q_norm.weight"), {config.head_dim});
    shapes.expect(layer_name(layer, "self_attn.k_norm.weight"), {config.head_dim});
  } else if (shapes.has(layer_name(layer, "self_attn.q_norm.weight"))) {
    throw Error("state dict: tensor '" + layer_name(layer, "self_attn.q_norm.weight") +
                "' is present but layer 0 has no qk-norm");
  }
  if (!config.use_moe) {
    expect_feed_forward(shapes, layer_name(layer, "mlp."), hidden, config.intermediate_size);
    return;
  }
  shapes.expect(layer_name(layer, "mlp.gate.weight"), {config.num_experts, hidden});
  for (int expert = 0; expert < config.num_experts; ++expert) {
    expect_feed_forward(shapes, layer_name(layer, "mlp.experts.") + std::to_string(expert) + ".", hidden,
                        config.moe_intermediate_size);
  }
  for (int shared = 0; shared < config.num_shared_experts; ++shared) {
    expect_feed_forward(shapes, layer_name(layer, "mlp.shared_experts.") + std::to_string(shared) + ".", hidden,
                        config.moe_intermediate_size);
  }
  const int experts_found = shapes.count_indexed(layer_name(layer, "mlp.experts."));
  const int shared_found = shapes.count_indexed(layer_name(layer, "mlp.shared_experts."));
  if (experts_found != config.num_experts || shared_found != config.num_shared_experts) {
    throw Error("state dict: layer " + std::to_string(layer) + " has " + std::to_string(experts_found) +
                " experts and " + std::to_string(shared_found) + " shared experts, but '" +
                layer_name(layer, "mlp.gate.weight") + "' and layer 0 say " + std::to_string(config.num_experts) +
                " and " + std::to_string(config.num_shared_experts));
  }
}

}  // namespace

ModelConfig infer_config_from_tensors(const TensorMap& tensors, int num_q_heads) {
  if (num_q_heads <= 0) throw Error("the number of query heads must be positive, got " + std::to_string(num_q_heads));
  const TensorShapes shapes(tensors);
  ModelConfig config;
  const std::vector<int> embedding = shapes.dims("model.embed_tokens.weight", 2);
  config.vocab_size = embedding[0];
  config.hidden_size = embedding[1];
  config.num_layers = shapes.count_indexed("model.layers.");
  if (config.num_layers == 0) throw Error("state dict: no tensors named 'model.layers.{i}.*'");

  // head_dim = q_proj rows / query heads; kv heads = k_proj rows / head_dim.
  const std::string q_proj = layer_name(0, "self_attn.q_proj.weight");
  const int q_rows = shapes.dims(q_proj, 2)[0];
  if (q_rows % num_q_heads != 0) {
    throw Error("state dict: tensor '" + q_proj + "' has " + std::to_string(q_rows) + " rows, not divisible by " +
                std::to_string(num_q_heads) + " query heads");
  }
  config.num_q_heads = num_q_heads;
  config.head_dim = q_rows / num_q_heads;
  const std::string k_proj = layer_name(0, "self_attn.k_proj.weight");
  const int k_rows = shapes.dims(k_proj, 2)[0];
  if (k_rows % config.head_dim != 0) {
    throw Error("state dict: tensor '" + k_proj + "' has " + std::to_string(k_rows) +
                " rows, not a multiple of head_dim " + std::to_string(config.head_dim));
  }
  config.num_kv_heads = k_rows / config.head_dim;
  config.qk_norm = shapes.has(layer_name(0, "self_attn.q_norm.weight"));
  // Only minimind-3 has qk-norm, and it uses eps 1e-6; MiniMind2 uses 1e-5.
  config.rms_norm_eps = config.qk_norm ? 1e-6f : 1e-5f;

  const std::string router = layer_name(0, "mlp.gate.weight");
  if (shapes.has(router)) {
    config.use_moe = true;
    config.num_experts = shapes.dims(router, 2)[0];
    config.moe_intermediate_size = shapes.dims(layer_name(0, "mlp.experts.0.gate_proj.weight"), 2)[0];
    config.intermediate_size = config.moe_intermediate_size;
    config.num_shared_experts = shapes.count_indexed(layer_name(0, "mlp.shared_experts."));
    // The router's top-k is not visible in the tensors. MiniMind's two MoE models differ, and the qk-norm tensors
    // tell them apart: minimind-3-MoE routes each token to 1 expert, MiniMind2-MoE (the one with a shared expert)
    // to 2.
    config.num_experts_per_token = std::min(config.qk_norm ? 1 : 2, config.num_experts);
    config.norm_topk_prob = true;
  } else {
    config.intermediate_size = shapes.dims(layer_name(0, "mlp.gate_proj.weight"), 2)[0];
  }
  shapes.expect("model.norm.weight", {config.hidden_size});
  for (int layer = 0; layer < config.num_layers; ++layer) check_layer(shapes, config, layer);

  // MiniMind's .pth stores the tied matrix twice; a different lm_head means an untied model.
  if (shapes.has("lm_head.weight")) {
    shapes.expect("lm_head.weight", {config.vocab_size, config.hidden_size});
    config.tie_word_embeddings = tensors.at("lm_head.weight").values == tensors.at("model.embed_tokens.weight").values;
  }
  config.validate();
  config.family = identify_family(config);
  return config;
}

}  // namespace minigen
