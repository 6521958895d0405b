#include "model/weights.h"

#include <cmath>
#include <numbers>
#include <optional>

#include "core/error.h"
#include "model/quantized_tensors.h"
#include "ops/float_formats.h"

namespace minigen {
namespace {

std::string layer_prefix(int layer) { return "model.layers." + std::to_string(layer) + "."; }

// Pulls tensors out of the map by name, checking shapes; whatever is left at the end was not expected.
class TensorTaker {
 public:
  explicit TensorTaker(TensorMap& tensors) : tensors_(tensors) {}

  std::vector<float> vector(const std::string& name, int64_t length) {
    return take(name, std::vector<int64_t>{length}).values;
  }

  // A float matrix, or the codes and scales of a quantized file (model/quantized_tensors.h).
  Matrix matrix(const std::string& name, int rows, int cols) {
    if (has(name + kScaleSuffix)) {
      const HostTensor codes = take(name, std::nullopt);
      const HostTensor scales = take(name + kScaleSuffix, std::nullopt);
      return coded_matrix(name, codes, scales, rows, cols);
    }
    HostTensor tensor = take(name, std::vector<int64_t>{rows, cols});
    Matrix matrix;
    matrix.rows = rows;
    matrix.cols = cols;
    matrix.values = std::move(tensor.values);
    matrix.f16_bits = std::move(tensor.f16_bits);
    matrix.stored = tensor.stored_dtype;
    return matrix;
  }

  FeedForwardWeights feed_forward(const std::string& prefix, int hidden, int intermediate) {
    FeedForwardWeights weights;
    weights.gate = matrix(prefix + "gate_proj.weight", intermediate, hidden);
    weights.up = matrix(prefix + "up_proj.weight", intermediate, hidden);
    weights.down = matrix(prefix + "down_proj.weight", hidden, intermediate);
    return weights;
  }

  bool has(const std::string& name) const { return tensors_.count(name) != 0; }

  void expect_nothing_left() const {
    if (tensors_.empty()) return;
    throw Error("the model file holds tensor '" + tensors_.begin()->first + "' " +
                shape_string(tensors_.begin()->second.shape) + " that this configuration does not use (" +
                std::to_string(tensors_.size()) + " unexpected tensor(s))");
  }

 private:
  HostTensor take(const std::string& name, const std::optional<std::vector<int64_t>>& shape) {
    auto found = tensors_.find(name);
    if (found == tensors_.end()) throw Error("the model file has no tensor '" + name + "'");
    if (shape && found->second.stored_dtype != DType::kF32 && found->second.stored_dtype != DType::kF16 &&
        found->second.stored_dtype != DType::kBF16) {
      throw Error("tensor '" + name + "' is " + dtype_name(found->second.stored_dtype) +
                  "; integer tensors are quantized codes and need a '" + name + kScaleSuffix + "' beside them");
    }
    if (shape && found->second.shape != *shape) {
      throw Error("tensor '" + name + "' has shape " + shape_string(found->second.shape) + " but the config needs " +
                  shape_string(*shape));
    }
    HostTensor tensor = std::move(found->second);
    tensors_.erase(found);
    return tensor;
  }

  TensorMap& tensors_;
};

void put(TensorMap& tensors, const std::string& name, const std::vector<float>& values) {
  tensors[name] = HostTensor{{static_cast<int64_t>(values.size())}, values, DType::kF32};
}

// A matrix as fp32, or quantized as `type` (q8/q4).
void put(TensorMap& tensors, const std::string& name, const Matrix& matrix, WeightType type) {
  if (is_block_quantized(type)) {
    put_quantized(tensors, name, matrix, type);
    return;
  }
  if (matrix.coded != WeightType::kF32) {
    throw Error("'" + name + "' is stored as " + std::string(weight_type_name(matrix.coded)) +
                "; it cannot be written as floats");
  }
  tensors[name] = HostTensor{{matrix.rows, matrix.cols}, matrix.values, DType::kF32};
}

void put(TensorMap& tensors, const std::string& prefix, const FeedForwardWeights& weights, WeightType type) {
  put(tensors, prefix + "gate_proj.weight", weights.gate, type);
  put(tensors, prefix + "up_proj.weight", weights.up, type);
  put(tensors, prefix + "down_proj.weight", weights.down, type);
}

// SplitMix64 plus Box–Muller: small, portable and the same on every machine, unlike std::normal_distribution.
class NormalGenerator {
 public:
  explicit NormalGenerator(uint64_t seed) : state_(seed) {}

  float next(float standard_deviation) {
    const double u1 = (static_cast<double>(next_bits() >> 11) + 1.0) / 9007199254740993.0;  // (0, 1]
    const double u2 = static_cast<double>(next_bits() >> 11) / 9007199254740992.0;          // [0, 1)
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2) *
                              standard_deviation);
  }

 private:
  uint64_t next_bits() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

// Small enough that the blocks' outputs, not the input embedding, decide the next token (with N(0, 1) embeddings a
// random model mostly repeats its input), large enough that logits spread over several units.
constexpr float kEmbeddingStandardDeviation = 0.25f;

Matrix random_matrix(NormalGenerator& generator, int rows, int cols, float standard_deviation) {
  Matrix matrix;
  matrix.rows = rows;
  matrix.cols = cols;
  matrix.values.resize(static_cast<std::size_t>(rows) * cols);
  for (float& value : matrix.values) value = generator.next(standard_deviation);
  return matrix;
}

Matrix random_linear(NormalGenerator& generator, int out_features, int in_features) {
  return random_matrix(generator, out_features, in_features, 1.0f / std::sqrt(static_cast<float>(in_features)));
}

std::vector<float> random_norm(NormalGenerator& generator, int length) {
  std::vector<float> weight(length);
  for (float& value : weight) value = 1.0f + generator.next(0.1f);
  return weight;
}

FeedForwardWeights random_feed_forward(NormalGenerator& generator, int hidden, int intermediate) {
  FeedForwardWeights weights;
  weights.gate = random_linear(generator, intermediate, hidden);
  weights.up = random_linear(generator, intermediate, hidden);
  weights.down = random_linear(generator, hidden, intermediate);
  return weights;
}

}  // namespace

bool ModelWeights::matrices_stored_in_f16() const {
  bool all = true;
  const auto check = [&](const Matrix& matrix) {
    if (!matrix.empty()) all = all && matrix.coded == WeightType::kF32 && matrix.stored == DType::kF16;
  };
  const auto check_feed_forward = [&](const FeedForwardWeights& weights) {
    check(weights.gate);
    check(weights.up);
    check(weights.down);
  };
  check(embed_tokens);
  check(lm_head);
  for (const LayerWeights& layer : layers) {
    for (const Matrix* matrix : {&layer.q_proj, &layer.k_proj, &layer.v_proj, &layer.o_proj, &layer.router}) {
      check(*matrix);
    }
    check_feed_forward(layer.mlp);
    for (const FeedForwardWeights& expert : layer.experts) check_feed_forward(expert);
    for (const FeedForwardWeights& shared : layer.shared_experts) check_feed_forward(shared);
  }
  return all && !embed_tokens.empty();
}

namespace {

// Whether two float matrices hold the same values, whether each keeps them as fp32 or as fp16 bits.
bool same_values(const Matrix& a, const Matrix& b) {
  if (a.f16_bits.empty() == b.f16_bits.empty()) return a.values == b.values && a.f16_bits == b.f16_bits;
  const Matrix& bits = a.f16_bits.empty() ? b : a;
  const Matrix& floats = a.f16_bits.empty() ? a : b;
  if (bits.f16_bits.size() != floats.values.size()) return false;
  for (std::size_t i = 0; i < floats.values.size(); ++i) {
    if (f16_to_float(bits.f16_bits[i]) != floats.values[i]) return false;
  }
  return true;
}

}  // namespace

ModelWeights weights_from_tensors(const ModelConfig& config, TensorMap&& tensors) {
  config.validate();
  TensorTaker taker(tensors);
  const int hidden = config.hidden_size;
  ModelWeights weights;
  weights.embed_tokens = taker.matrix("model.embed_tokens.weight", config.vocab_size, hidden);
  if (taker.has("lm_head.weight")) {
    Matrix lm_head = taker.matrix("lm_head.weight", config.vocab_size, hidden);
    // MiniMind's state dicts store the tied matrix twice; keep a separate copy only if the model is untied.
    if (!config.tie_word_embeddings) {
      weights.lm_head = std::move(lm_head);
    } else if (!same_values(lm_head, weights.embed_tokens)) {
      throw Error("the config ties lm_head to embed_tokens but 'lm_head.weight' holds different values");
    }
  } else if (!config.tie_word_embeddings) {
    throw Error("the config says tie_word_embeddings is false but the model file has no 'lm_head.weight'");
  }
  weights.final_norm = taker.vector("model.norm.weight", hidden);
  for (int layer = 0; layer < config.num_layers; ++layer) {
    const std::string prefix = layer_prefix(layer);
    LayerWeights layer_weights;
    layer_weights.input_norm = taker.vector(prefix + "input_layernorm.weight", hidden);
    layer_weights.post_attention_norm = taker.vector(prefix + "post_attention_layernorm.weight", hidden);
    layer_weights.q_proj = taker.matrix(prefix + "self_attn.q_proj.weight", config.q_width(), hidden);
    layer_weights.k_proj = taker.matrix(prefix + "self_attn.k_proj.weight", config.kv_width(), hidden);
    layer_weights.v_proj = taker.matrix(prefix + "self_attn.v_proj.weight", config.kv_width(), hidden);
    layer_weights.o_proj = taker.matrix(prefix + "self_attn.o_proj.weight", hidden, config.q_width());
    if (config.qk_norm) {
      layer_weights.q_norm = taker.vector(prefix + "self_attn.q_norm.weight", config.head_dim);
      layer_weights.k_norm = taker.vector(prefix + "self_attn.k_norm.weight", config.head_dim);
    }
    if (config.use_moe) {
      layer_weights.router = taker.matrix(prefix + "mlp.gate.weight", config.num_experts, hidden);
      for (int e = 0; e < config.num_experts; ++e) {
        layer_weights.experts.push_back(taker.feed_forward(prefix + "mlp.experts." + std::to_string(e) + ".", hidden,
                                                           config.moe_intermediate_size));
      }
      for (int s = 0; s < config.num_shared_experts; ++s) {
        layer_weights.shared_experts.push_back(taker.feed_forward(
            prefix + "mlp.shared_experts." + std::to_string(s) + ".", hidden, config.moe_intermediate_size));
      }
    } else {
      layer_weights.mlp = taker.feed_forward(prefix + "mlp.", hidden, config.intermediate_size);
    }
    weights.layers.push_back(std::move(layer_weights));
  }
  taker.expect_nothing_left();
  return weights;
}

TensorMap tensors_from_weights(const ModelConfig& config, const ModelWeights& weights, WeightType type) {
  TensorMap tensors;
  if (is_block_quantized(type)) {  // the output projection (and so the tied embedding) is q8 in a q4 model
    const WeightType output_type = type == WeightType::kQ4 ? WeightType::kQ8 : type;
    put(tensors, "model.embed_tokens.weight", weights.embed_tokens, output_type);
    if (!weights.lm_head.empty()) put(tensors, "lm_head.weight", weights.lm_head, output_type);
  } else {
    put(tensors, "model.embed_tokens.weight", weights.embed_tokens, type);
    put(tensors, "lm_head.weight", weights.output_projection(), type);
  }
  put(tensors, "model.norm.weight", weights.final_norm);
  for (int layer = 0; layer < config.num_layers; ++layer) {
    const std::string prefix = layer_prefix(layer);
    const LayerWeights& w = weights.layers[layer];
    put(tensors, prefix + "input_layernorm.weight", w.input_norm);
    put(tensors, prefix + "post_attention_layernorm.weight", w.post_attention_norm);
    put(tensors, prefix + "self_attn.q_proj.weight", w.q_proj, type);
    put(tensors, prefix + "self_attn.k_proj.weight", w.k_proj, type);
    put(tensors, prefix + "self_attn.v_proj.weight", w.v_proj, type);
    put(tensors, prefix + "self_attn.o_proj.weight", w.o_proj, type);
    if (config.qk_norm) {
      put(tensors, prefix + "self_attn.q_norm.weight", w.q_norm);
      put(tensors, prefix + "self_attn.k_norm.weight", w.k_norm);
    }
    if (config.use_moe) {
      put(tensors, prefix + "mlp.gate.weight", w.router, type);
      for (std::size_t e = 0; e < w.experts.size(); ++e) {
        put(tensors, prefix + "mlp.experts." + std::to_string(e) + ".", w.experts[e], type);
      }
      for (std::size_t s = 0; s < w.shared_experts.size(); ++s) {
        put(tensors, prefix + "mlp.shared_experts." + std::to_string(s) + ".", w.shared_experts[s], type);
      }
    } else {
      put(tensors, prefix + "mlp.", w.mlp, type);
    }
  }
  return tensors;
}

ModelWeights random_weights(const ModelConfig& config, uint64_t seed) {
  config.validate();
  NormalGenerator generator(seed);
  const int hidden = config.hidden_size;
  ModelWeights weights;
  weights.embed_tokens = random_matrix(generator, config.vocab_size, hidden, kEmbeddingStandardDeviation);
  if (!config.tie_word_embeddings) weights.lm_head = random_linear(generator, config.vocab_size, hidden);
  for (int layer = 0; layer < config.num_layers; ++layer) {
    LayerWeights w;
    w.input_norm = random_norm(generator, hidden);
    w.post_attention_norm = random_norm(generator, hidden);
    w.q_proj = random_linear(generator, config.q_width(), hidden);
    w.k_proj = random_linear(generator, config.kv_width(), hidden);
    w.v_proj = random_linear(generator, config.kv_width(), hidden);
    w.o_proj = random_linear(generator, hidden, config.q_width());
    if (config.qk_norm) {
      w.q_norm = random_norm(generator, config.head_dim);
      w.k_norm = random_norm(generator, config.head_dim);
    }
    if (config.use_moe) {
      w.router = random_linear(generator, config.num_experts, hidden);
      for (int e = 0; e < config.num_experts; ++e) {
        w.experts.push_back(random_feed_forward(generator, hidden, config.moe_intermediate_size));
      }
      for (int s = 0; s < config.num_shared_experts; ++s) {
        w.shared_experts.push_back(random_feed_forward(generator, hidden, config.moe_intermediate_size));
      }
    } else {
      w.mlp = random_feed_forward(generator, hidden, config.intermediate_size);
    }
    weights.layers.push_back(std::move(w));
  }
  weights.final_norm = random_norm(generator, hidden);
  return weights;
}

}  // namespace minigen
