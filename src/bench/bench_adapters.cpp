#include "bench/bench_adapters.h"

#include <random>

#include "core/error.h"

namespace minigen::bench {
namespace {

// [out, in] of a square projection's module path: hidden × hidden, or the feed-forward width when that is square.
struct Projection {
  std::string module;
  int out = 0;
  int in = 0;
};

std::vector<Projection> square_projection_shapes(const ModelConfig& config) {
  std::vector<Projection> projections;
  const int hidden = config.hidden_size;
  for (int l = 0; l < config.num_layers; ++l) {
    const std::string layer = "model.layers." + std::to_string(l) + ".";
    const Projection candidates[] = {{layer + "self_attn.q_proj", config.q_width(), hidden},
                                     {layer + "self_attn.k_proj", config.kv_width(), hidden},
                                     {layer + "self_attn.v_proj", config.kv_width(), hidden},
                                     {layer + "self_attn.o_proj", hidden, config.q_width()}};
    for (const Projection& projection : candidates) {
      if (projection.out == projection.in) projections.push_back(projection);
    }
    // gate/up are [intermediate, hidden] and down its transpose: square only when intermediate = hidden.
    if (!config.use_moe && config.intermediate_size == hidden) {
      for (const char* name : {"gate_proj", "up_proj", "down_proj"}) {
        projections.push_back({layer + "mlp." + name, hidden, hidden});
      }
    }
  }
  return projections;
}

HostTensor tensor_of(const Matrix& matrix) {
  HostTensor tensor;
  tensor.shape = {matrix.rows, matrix.cols};
  tensor.values = matrix.values;
  return tensor;
}

}  // namespace

std::vector<std::string> square_projections(const ModelConfig& config) {
  std::vector<std::string> modules;
  for (const Projection& projection : square_projection_shapes(config)) modules.push_back(projection.module);
  return modules;
}

LoraAdapter random_minimind_adapter(const ModelConfig& config, int rank, uint64_t seed) {
  const std::vector<Projection> projections = square_projection_shapes(config);
  if (projections.empty()) {
    throw Error("--lora-rank: this model has no square projection for a MiniMind-style adapter to wrap (q_proj is " +
                std::to_string(config.q_width()) + " × " + std::to_string(config.hidden_size) +
                "); give an adapter file with --lora");
  }
  if (rank > config.hidden_size) {
    throw Error("--lora-rank " + std::to_string(rank) + " exceeds the width of the matrices it wraps (" +
                std::to_string(config.hidden_size) + ")");
  }
  std::mt19937_64 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<LoraTensors> tensors;
  for (const Projection& projection : projections) {
    LoraTensors pair;
    pair.module = projection.module;
    pair.a.shape = {rank, projection.in};
    pair.b.shape = {projection.out, rank};
    pair.a.values.resize(static_cast<std::size_t>(rank) * projection.in);
    pair.b.values.resize(static_cast<std::size_t>(projection.out) * rank);
    for (float& value : pair.a.values) value = kLoraAStd * normal(generator);
    for (float& value : pair.b.values) value = kBenchLoraBStd * normal(generator);
    tensors.push_back(std::move(pair));
  }
  LoraAdapter adapter = lora_from_tensors(config, std::move(tensors), 1.0f, "random", "MiniMind .pth");
  adapter.name = "random r" + std::to_string(rank) + " #" + std::to_string(seed);
  return adapter;
}

LoraAdapter copy_of_adapter(const ModelConfig& config, const LoraAdapter& adapter) {
  std::vector<LoraTensors> tensors;
  for (const LoraAdapter::Wrapped& wrapped : adapter.wrapped()) {
    tensors.push_back({wrapped.module, tensor_of(wrapped.pair->a), tensor_of(wrapped.pair->b)});
  }
  LoraAdapter copy = lora_from_tensors(config, std::move(tensors), adapter.scale, adapter.source, adapter.format);
  copy.name = adapter.name;
  copy.alpha = adapter.alpha;
  return copy;
}

std::vector<std::shared_ptr<const LoraAdapter>> bench_adapters(const ModelConfig& config, int rank,
                                                               std::shared_ptr<const LoraAdapter> file, int count) {
  std::vector<std::shared_ptr<const LoraAdapter>> adapters;
  for (int i = 0; i < count; ++i) {
    if (!file) {
      adapters.push_back(std::make_shared<const LoraAdapter>(random_minimind_adapter(config, rank, i + 1)));
    } else {
      adapters.push_back(i == 0 ? file : std::make_shared<const LoraAdapter>(copy_of_adapter(config, *file)));
    }
  }
  return adapters;
}

}  // namespace minigen::bench
