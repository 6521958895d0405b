#include "lab/adapter_variants.h"

#include <cmath>
#include <map>
#include <random>
#include <tuple>

#include "core/error.h"
#include "ops/float_formats.h"

namespace minigen::lab {
namespace {

// Every wrapped pair beside the weight it adapts, layer by layer.
template <class Visit>
void for_each_wrapped(const LoraAdapter& adapter, const ModelWeights& weights, Visit&& visit) {
  const auto feed_forward = [&](const LoraFeedForward& pairs, const FeedForwardWeights& matrices) {
    for (const auto& [pair, matrix] : {std::pair{&pairs.gate, &matrices.gate}, std::pair{&pairs.up, &matrices.up},
                                       std::pair{&pairs.down, &matrices.down}}) {
      if (pair->present()) visit(*pair, *matrix);
    }
  };
  for (std::size_t l = 0; l < adapter.layers.size(); ++l) {
    const LoraLayer& pairs = adapter.layers[l];
    const LayerWeights& layer = weights.layers[l];
    for (const auto& [pair, matrix] : {std::pair{&pairs.q, &layer.q_proj}, std::pair{&pairs.k, &layer.k_proj},
                                       std::pair{&pairs.v, &layer.v_proj}, std::pair{&pairs.o, &layer.o_proj}}) {
      if (pair->present()) visit(*pair, *matrix);
    }
    feed_forward(pairs.mlp, layer.mlp);
    for (std::size_t e = 0; e < pairs.experts.size(); ++e) feed_forward(pairs.experts[e], layer.experts[e]);
    for (std::size_t s = 0; s < pairs.shared_experts.size(); ++s) {
      feed_forward(pairs.shared_experts[s], layer.shared_experts[s]);
    }
  }
}

// Σ w² of a weight matrix, from its values or, for a q8/q4 file, its codes × their block's fp16 scale.
double squared_norm(const Matrix& matrix) {
  double sum = 0;
  if (!matrix.values.empty()) {
    for (float value : matrix.values) sum += static_cast<double>(value) * value;
    return sum;
  }
  const std::size_t blocks_per_row = (static_cast<std::size_t>(matrix.cols) + 31) / 32;
  for (std::size_t i = 0; i < matrix.codes.size(); ++i) {
    const std::size_t row = i / matrix.cols;
    const std::size_t block = (i % matrix.cols) / 32;
    const double value =
        matrix.codes[i] * static_cast<double>(f16_to_float(matrix.scales[row * blocks_per_row + block]));
    sum += value * value;
  }
  return sum;
}

// ‖B·A‖²_F = trace(Aᵀ Bᵀ B A) = Σ_ij (BᵀB)_ij (A Aᵀ)_ij: two rank × rank Gram matrices.
double squared_norm_of_product(const LoraPair& pair) {
  const int rank = pair.rank;
  std::vector<double> gram_b(static_cast<std::size_t>(rank) * rank, 0.0);
  std::vector<double> gram_a(static_cast<std::size_t>(rank) * rank, 0.0);
  for (int i = 0; i < rank; ++i) {
    for (int j = 0; j < rank; ++j) {
      double b = 0;
      for (int o = 0; o < pair.b.rows; ++o) b += double(pair.b.values[o * rank + i]) * pair.b.values[o * rank + j];
      double a = 0;
      const float* row_i = pair.a.values.data() + static_cast<std::size_t>(i) * pair.a.cols;
      const float* row_j = pair.a.values.data() + static_cast<std::size_t>(j) * pair.a.cols;
      for (int k = 0; k < pair.a.cols; ++k) a += double(row_i[k]) * row_j[k];
      gram_b[i * rank + j] = b;
      gram_a[i * rank + j] = a;
    }
  }
  double sum = 0;
  for (std::size_t i = 0; i < gram_a.size(); ++i) sum += gram_a[i] * gram_b[i];
  return sum;
}

struct Projection {
  std::string module;
  std::string name;
  const Matrix* weight = nullptr;
};

// The module paths MiniMind would wrap, with the weight each adapts; q_proj and o_proj when none is square.
std::vector<Projection> wrapped_projections(const ModelConfig& config, const ModelWeights& weights) {
  std::vector<Projection> square;
  std::vector<Projection> attention_output;
  for (int l = 0; l < config.num_layers; ++l) {
    const std::string prefix = "model.layers." + std::to_string(l) + ".";
    const LayerWeights& layer = weights.layers[l];
    const Projection candidates[] = {{prefix + "self_attn.q_proj", "q_proj", &layer.q_proj},
                                     {prefix + "self_attn.k_proj", "k_proj", &layer.k_proj},
                                     {prefix + "self_attn.v_proj", "v_proj", &layer.v_proj},
                                     {prefix + "self_attn.o_proj", "o_proj", &layer.o_proj},
                                     {prefix + "mlp.gate_proj", "gate_proj", &layer.mlp.gate},
                                     {prefix + "mlp.up_proj", "up_proj", &layer.mlp.up},
                                     {prefix + "mlp.down_proj", "down_proj", &layer.mlp.down}};
    for (const Projection& projection : candidates) {
      const Matrix& matrix = *projection.weight;
      if (matrix.rows > 0 && matrix.rows == matrix.cols) square.push_back(projection);
    }
    attention_output.push_back(candidates[0]);
    attention_output.push_back(candidates[3]);
  }
  return square.empty() ? attention_output : square;
}

HostTensor tensor_of(const Matrix& matrix, bool zero) {
  HostTensor tensor;
  tensor.shape = {matrix.rows, matrix.cols};
  tensor.values = zero ? std::vector<float>(matrix.values.size(), 0.0f) : matrix.values;
  return tensor;
}

LoraAdapter rebuilt(const ModelConfig& config, const LoraAdapter& adapter, bool zero_b) {
  std::vector<LoraTensors> tensors;
  for (const LoraAdapter::Wrapped& wrapped : adapter.wrapped()) {
    tensors.push_back({wrapped.module, tensor_of(wrapped.pair->a, false), tensor_of(wrapped.pair->b, zero_b)});
  }
  LoraAdapter copy = lora_from_tensors(config, std::move(tensors), adapter.scale, adapter.source, adapter.format);
  copy.name = adapter.name;
  copy.alpha = adapter.alpha;
  return copy;
}

std::vector<AdapterMatrixGroup> merged_by_matrix(const std::vector<AdapterMatrixGroup>& matrices) {
  std::vector<AdapterMatrixGroup> groups;
  for (const AdapterMatrixGroup& matrix : matrices) {
    bool merged = false;
    for (AdapterMatrixGroup& group : groups) {
      if (std::tie(group.name, group.in, group.out, group.rank) ==
          std::tie(matrix.name, matrix.in, matrix.out, matrix.rank)) {
        group.matrices += matrix.matrices;
        merged = true;
        break;
      }
    }
    if (!merged) groups.push_back(matrix);
  }
  return groups;
}

AdapterSize size_of(std::vector<AdapterMatrixGroup> groups, const ModelConfig& config, const std::string& model) {
  AdapterSize size;
  size.model = model;
  size.model_parameters = static_cast<int64_t>(config.parameter_count());
  size.groups = std::move(groups);
  for (const AdapterMatrixGroup& group : size.groups) size.parameters += group.matrices * group.parameters_each();
  return size;
}

}  // namespace

std::vector<AdapterMatrixGroup> minimind_adapter_groups(const ModelConfig& config, int rank) {
  // Shapes only: the widths the forward pass uses, [out, in] = [q_width, hidden] for q_proj and so on.
  const int hidden = config.hidden_size;
  std::vector<AdapterMatrixGroup> matrices;
  const std::tuple<const char*, int, int> candidates[] = {{"q_proj", config.q_width(), hidden},
                                                          {"k_proj", config.kv_width(), hidden},
                                                          {"v_proj", config.kv_width(), hidden},
                                                          {"o_proj", hidden, config.q_width()}};
  for (const auto& [name, out, in] : candidates) {
    if (out == in) matrices.push_back({name, in, out, rank, config.num_layers});
  }
  if (!config.use_moe && config.intermediate_size == hidden) {
    for (const char* name : {"gate_proj", "up_proj", "down_proj"}) {
      matrices.push_back({name, hidden, hidden, rank, config.num_layers});
    }
  }
  return matrices;
}

AdapterSize minimind_adapter_size(const ModelConfig& config, int rank, const std::string& model) {
  return size_of(minimind_adapter_groups(config, rank), config, model);
}

AdapterSize adapter_size(const LoraAdapter& adapter, const ModelConfig& config, const std::string& model) {
  std::vector<AdapterMatrixGroup> matrices;
  for (const LoraAdapter::Wrapped& wrapped : adapter.wrapped()) {
    const LoraPair& pair = *wrapped.pair;
    matrices.push_back({wrapped.module.substr(wrapped.module.rfind('.') + 1), pair.a.cols, pair.b.rows, pair.rank, 1});
  }
  return size_of(merged_by_matrix(matrices), config, model);
}

LoraAdapter trained_shaped_adapter(const ModelConfig& config, const ModelWeights& weights, int rank,
                                   double relative_size, uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<LoraTensors> tensors;
  for (const Projection& projection : wrapped_projections(config, weights)) {
    const Matrix& weight = *projection.weight;
    const int out = weight.rows;
    const int in = weight.cols;
    if (rank > std::min(in, out)) {
      throw Error("the adapter's rank " + std::to_string(rank) + " exceeds " + projection.module + "'s " +
                  std::to_string(out) + " × " + std::to_string(in));
    }
    const double b_std = relative_size * std::sqrt(squared_norm(weight)) /
                         (kAdapterAStd * std::sqrt(static_cast<double>(out) * in * rank));
    LoraTensors pair;
    pair.module = projection.module;
    pair.a.shape = {rank, in};
    pair.b.shape = {out, rank};
    pair.a.values.resize(static_cast<std::size_t>(rank) * in);
    pair.b.values.resize(static_cast<std::size_t>(out) * rank);
    for (float& value : pair.a.values) value = static_cast<float>(kAdapterAStd * normal(generator));
    for (float& value : pair.b.values) value = static_cast<float>(b_std * normal(generator));
    tensors.push_back(std::move(pair));
  }
  LoraAdapter adapter = lora_from_tensors(config, std::move(tensors), 1.0f, "random", "MiniMind's shape");
  adapter.name = "random";
  return adapter;
}

LoraAdapter with_zero_b(const ModelConfig& config, const LoraAdapter& adapter) {
  return rebuilt(config, adapter, true);
}

LoraAdapter copy_of_adapter(const ModelConfig& config, const LoraAdapter& adapter) {
  return rebuilt(config, adapter, false);
}

double relative_size(const LoraAdapter& adapter, const ModelWeights& weights) {
  double update = 0;
  double base = 0;
  const double scale = adapter.scale;
  for_each_wrapped(adapter, weights, [&](const LoraPair& pair, const Matrix& weight) {
    update += scale * scale * squared_norm_of_product(pair);
    base += squared_norm(weight);
  });
  return base > 0 ? std::sqrt(update / base) : 0;
}

}  // namespace minigen::lab
