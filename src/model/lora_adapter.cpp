#include "model/lora_adapter.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>

#include "core/error.h"

namespace minigen {
namespace {

constexpr const char* kTargetNames[kLoraTargetCount] = {"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                                        "gate_proj", "up_proj", "down_proj"};

// Where a module path points in the model: a layer, a target, and for MoE which expert (routed or shared).
struct ModuleAddress {
  int layer = 0;
  LoraTarget target = LoraTarget::kQ;
  enum class Block { kAttention, kMlp, kExpert, kSharedExpert } block = Block::kAttention;
  int expert = 0;
};

// Reads a non-negative decimal index at text[pos…] up to the next '.', advancing pos past the dot.
std::optional<int> take_index(const std::string& text, std::size_t& pos) {
  const std::size_t dot = text.find('.', pos);
  if (dot == std::string::npos || dot == pos || dot - pos > 6) return std::nullopt;
  int value = 0;
  for (std::size_t i = pos; i < dot; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  pos = dot + 1;
  return value;
}

std::optional<LoraTarget> target_named(const std::string& name) {
  for (int t = 0; t < kLoraTargetCount; ++t) {
    if (name == kTargetNames[t]) return static_cast<LoraTarget>(t);
  }
  return std::nullopt;
}

std::string what_the_model_has(const ModelConfig& config) {
  std::string text = "model.layers.{0…" + std::to_string(config.num_layers - 1) + "}.self_attn.{q,k,v,o}_proj and ";
  if (!config.use_moe) return text + ".mlp.{gate,up,down}_proj";
  text += ".mlp.experts.{0…" + std::to_string(config.num_experts - 1) + "}.{gate,up,down}_proj";
  if (config.num_shared_experts > 0) text += ", .mlp.shared_experts.{…}.{gate,up,down}_proj";
  return text;
}

ModuleAddress address_of(const ModelConfig& config, const std::string& module) {
  const auto unknown = [&](const std::string& why) {
    return Error("the adapter wraps '" + module + "', " + why + " (this model has " + what_the_model_has(config) + ")");
  };
  const std::string prefix = "model.layers.";
  if (module.rfind(prefix, 0) != 0) {
    if (module == "lm_head" || module == "model.embed_tokens") {
      throw unknown("which minigen does not adapt: it adapts the attention and feed-forward projections");
    }
    throw unknown("which is not a module of this model");
  }
  std::size_t pos = prefix.size();
  ModuleAddress address;
  const std::optional<int> layer = take_index(module, pos);
  if (!layer) throw unknown("which is not a module of this model");
  if (*layer >= config.num_layers) {
    throw unknown("but the model has " + std::to_string(config.num_layers) + " layers");
  }
  address.layer = *layer;
  const std::string rest = module.substr(pos);
  const auto target_after = [&](const std::string& head) -> std::optional<LoraTarget> {
    if (rest.rfind(head, 0) != 0) return std::nullopt;
    return target_named(rest.substr(head.size()));
  };
  if (const auto target = target_after("self_attn.")) {
    if (static_cast<int>(*target) > static_cast<int>(LoraTarget::kO))
      throw unknown("which is not a module of this model");
    address.target = *target;
    return address;
  }
  if (const auto target = target_after("mlp.")) {
    if (static_cast<int>(*target) < static_cast<int>(LoraTarget::kGate) || config.use_moe) {
      throw unknown("which is not a module of this model");
    }
    address.block = ModuleAddress::Block::kMlp;
    address.target = *target;
    return address;
  }
  for (const auto& [head, block, count] :
       {std::tuple{std::string("mlp.experts."), ModuleAddress::Block::kExpert, config.num_experts},
        std::tuple{std::string("mlp.shared_experts."), ModuleAddress::Block::kSharedExpert,
                   config.num_shared_experts}}) {
    if (rest.rfind(head, 0) != 0) continue;
    std::size_t expert_pos = head.size();
    const std::optional<int> expert = take_index(rest, expert_pos);
    const std::optional<LoraTarget> target = expert ? target_named(rest.substr(expert_pos)) : std::nullopt;
    if (!config.use_moe || !expert || !target || static_cast<int>(*target) < static_cast<int>(LoraTarget::kGate)) {
      throw unknown("which is not a module of this model");
    }
    if (*expert >= count) throw unknown("but the layer has " + std::to_string(count) + " of those experts");
    address.block = block;
    address.expert = *expert;
    address.target = *target;
    return address;
  }
  throw unknown("which is not a module of this model");
}

// [out, in] of the matrix an address names.
std::pair<int, int> matrix_shape(const ModelConfig& config, const ModuleAddress& address) {
  const int hidden = config.hidden_size;
  const int intermediate =
      address.block == ModuleAddress::Block::kMlp ? config.intermediate_size : config.moe_intermediate_size;
  switch (address.target) {
    case LoraTarget::kQ:
      return {config.q_width(), hidden};
    case LoraTarget::kK:
    case LoraTarget::kV:
      return {config.kv_width(), hidden};
    case LoraTarget::kO:
      return {hidden, config.q_width()};
    case LoraTarget::kGate:
    case LoraTarget::kUp:
      return {intermediate, hidden};
    case LoraTarget::kDown:
      return {hidden, intermediate};
  }
  return {0, 0};
}

LoraPair& pair_slot(LoraAdapter& adapter, const ModelConfig& config, const ModuleAddress& address) {
  LoraLayer& layer = adapter.layers[address.layer];
  const auto in_feed_forward = [&](LoraFeedForward& ff) -> LoraPair& {
    return address.target == LoraTarget::kGate ? ff.gate : address.target == LoraTarget::kUp ? ff.up : ff.down;
  };
  switch (address.block) {
    case ModuleAddress::Block::kAttention:
      return address.target == LoraTarget::kQ   ? layer.q
             : address.target == LoraTarget::kK ? layer.k
             : address.target == LoraTarget::kV ? layer.v
                                                : layer.o;
    case ModuleAddress::Block::kMlp:
      return in_feed_forward(layer.mlp);
    case ModuleAddress::Block::kExpert:
      layer.experts.resize(config.num_experts);
      return in_feed_forward(layer.experts[address.expert]);
    case ModuleAddress::Block::kSharedExpert:
      layer.shared_experts.resize(config.num_shared_experts);
      return in_feed_forward(layer.shared_experts[address.expert]);
  }
  return layer.q;
}

Matrix checked_matrix(const std::string& name, HostTensor& tensor, int rows, int cols) {
  if (tensor.shape != std::vector<int64_t>{rows, cols}) {
    throw Error("the adapter's '" + name + "' has shape " + shape_string(tensor.shape) + " but the model needs " +
                shape_string({rows, cols}));
  }
  for (float value : tensor.values) {
    if (!std::isfinite(value)) throw Error("the adapter's '" + name + "' holds a value that is not finite (NaN or ∞)");
  }
  Matrix matrix;
  matrix.rows = rows;
  matrix.cols = cols;
  matrix.values = std::move(tensor.values);
  return matrix;
}

void for_each_pair(const LoraAdapter& adapter, const auto& visit) {
  for (std::size_t l = 0; l < adapter.layers.size(); ++l) {
    const LoraLayer& layer = adapter.layers[l];
    const std::string prefix = "model.layers." + std::to_string(l) + ".";
    const auto feed_forward = [&](const LoraFeedForward& ff, const std::string& path) {
      visit(path + "gate_proj", ff.gate);
      visit(path + "up_proj", ff.up);
      visit(path + "down_proj", ff.down);
    };
    visit(prefix + "self_attn.q_proj", layer.q);
    visit(prefix + "self_attn.k_proj", layer.k);
    visit(prefix + "self_attn.v_proj", layer.v);
    visit(prefix + "self_attn.o_proj", layer.o);
    feed_forward(layer.mlp, prefix + "mlp.");
    for (std::size_t e = 0; e < layer.experts.size(); ++e) {
      feed_forward(layer.experts[e], prefix + "mlp.experts." + std::to_string(e) + ".");
    }
    for (std::size_t s = 0; s < layer.shared_experts.size(); ++s) {
      feed_forward(layer.shared_experts[s], prefix + "mlp.shared_experts." + std::to_string(s) + ".");
    }
  }
}

}  // namespace

const char* lora_target_name(LoraTarget target) { return kTargetNames[static_cast<int>(target)]; }

std::vector<LoraAdapter::Wrapped> LoraAdapter::wrapped() const {
  std::vector<Wrapped> result;
  for_each_pair(*this, [&](const std::string& module, const LoraPair& pair) {
    if (pair.present()) result.push_back({module, &pair});
  });
  return result;
}

int64_t LoraAdapter::parameter_count() const {
  int64_t count = 0;
  for (const Wrapped& w : wrapped()) {
    count += static_cast<int64_t>(w.pair->rank) * (w.pair->a.cols + w.pair->b.rows);
  }
  return count;
}

int LoraAdapter::max_rank() const {
  int rank = 0;
  for (const Wrapped& w : wrapped()) rank = std::max(rank, w.pair->rank);
  return rank;
}

namespace {

// What both summaries say: the short module names wrapped (in the order of kTargetNames), in how many layers, with
// which ranks.
struct SummaryParts {
  std::vector<std::string> names;
  std::size_t layers_wrapped = 0;
  std::string ranks;  // "16", or "8/16" for an adapter of mixed ranks
};

SummaryParts summary_parts(const LoraAdapter& adapter) {
  std::set<std::string> names;
  std::set<std::string> layer_paths;
  std::set<int> ranks;
  for (const LoraAdapter::Wrapped& w : adapter.wrapped()) {
    names.insert(w.module.substr(w.module.rfind('.') + 1));
    const std::size_t after_index = w.module.find('.', std::string("model.layers.").size());
    layer_paths.insert(w.module.substr(0, after_index));
    ranks.insert(w.pair->rank);
  }
  SummaryParts parts;
  for (const char* name : kTargetNames) {
    if (names.count(name) != 0) parts.names.push_back(name);
  }
  parts.layers_wrapped = layer_paths.size();
  for (int rank : ranks) {
    if (!parts.ranks.empty()) parts.ranks += '/';
    parts.ranks += std::to_string(rank);
  }
  return parts;
}

std::string joined(const std::vector<std::string>& names, const std::string& separator) {
  std::string text;
  for (const std::string& name : names) {
    if (!text.empty()) text += separator;
    text += name;
  }
  return text;
}

std::string scale_text(float scale) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%g", static_cast<double>(scale));
  return buffer;
}

}  // namespace

std::string LoraAdapter::summary() const {
  const SummaryParts parts = summary_parts(*this);
  std::string text = joined(parts.names, ", ") + " in " + std::to_string(parts.layers_wrapped) + " of " +
                     std::to_string(layers.size()) + " layers, rank " + parts.ranks;
  if (scale != 1.0f) text += ", scale " + scale_text(scale);
  return text;
}

std::string LoraAdapter::summary_zh() const {
  const SummaryParts parts = summary_parts(*this);
  std::string text = joined(parts.names, "、") + "（" + std::to_string(layers.size()) + " 层中的 " +
                     std::to_string(parts.layers_wrapped) + " 层），秩 " + parts.ranks;
  if (scale != 1.0f) text += "，缩放系数 " + scale_text(scale);
  return text;
}

LoraAdapter lora_from_tensors(const ModelConfig& config, std::vector<LoraTensors> tensors, float scale,
                              const std::string& source, const std::string& format) {
  if (tensors.empty()) throw Error(source + ": the adapter holds no LoRA matrices (no '…lora…A/B' tensors)");
  if (!std::isfinite(scale)) throw Error(source + ": the adapter's scale (lora_alpha / r) is not finite");
  LoraAdapter adapter;
  adapter.source = source;
  adapter.format = format;
  adapter.scale = scale;
  adapter.layers.resize(config.num_layers);
  for (LoraTensors& entry : tensors) {
    const ModuleAddress address = address_of(config, entry.module);
    const auto [out, in] = matrix_shape(config, address);
    if (entry.a.shape.size() != 2 || entry.b.shape.size() != 2) {
      throw Error("the adapter's A and B of '" + entry.module + "' must be matrices; they are " +
                  shape_string(entry.a.shape) + " and " + shape_string(entry.b.shape));
    }
    const int64_t rank = entry.a.shape[0];
    if (rank < 1 || rank > std::min(in, out)) {
      throw Error("the adapter's A of '" + entry.module + "' has rank " + std::to_string(rank) +
                  "; a rank must be between 1 and min(in, out) = " + std::to_string(std::min(in, out)) + " for this " +
                  std::to_string(out) + "×" + std::to_string(in) + " matrix");
    }
    LoraPair& pair = pair_slot(adapter, config, address);
    if (pair.present()) throw Error("the adapter holds '" + entry.module + "' twice");
    pair.rank = static_cast<int>(rank);
    pair.a = checked_matrix(entry.module + " A", entry.a, pair.rank, in);
    pair.b = checked_matrix(entry.module + " B", entry.b, out, pair.rank);
    if (entry.a.shape_only || entry.b.shape_only) continue;  // a check of what the file claims: nothing to pack
    pair.packed_a = PackedMatrix(pair.a.data(), pair.rank, in, WeightType::kF32);
    pair.packed_b = PackedMatrix(pair.b.data(), out, pair.rank, WeightType::kF32);
  }
  return adapter;
}

void merge_lora_into(ModelWeights& weights, const LoraAdapter& adapter) {
  const auto merge = [&](const LoraPair& pair, Matrix& matrix, const std::string& module) {
    if (!pair.present()) return;
    if (matrix.values.empty()) {
      throw Error("cannot merge an adapter into '" + module +
                  "': the model holds it quantized (q8/q4 codes); merge "
                  "into the fp32 or fp16 model and quantize the result");
    }
    // W[o][i] += scale · Σ_r B[o][r] · A[r][i], the sum in r's order.
    for (int o = 0; o < matrix.rows; ++o) {
      for (int i = 0; i < matrix.cols; ++i) {
        float sum = 0.0f;
        for (int r = 0; r < pair.rank; ++r)
          sum += pair.b.values[o * pair.rank + r] * pair.a.values[r * matrix.cols + i];
        matrix.values[static_cast<std::size_t>(o) * matrix.cols + i] += adapter.scale * sum;
      }
    }
  };
  for (std::size_t l = 0; l < adapter.layers.size() && l < weights.layers.size(); ++l) {
    const LoraLayer& lora = adapter.layers[l];
    LayerWeights& layer = weights.layers[l];
    const std::string prefix = "model.layers." + std::to_string(l) + ".";
    merge(lora.q, layer.q_proj, prefix + "self_attn.q_proj");
    merge(lora.k, layer.k_proj, prefix + "self_attn.k_proj");
    merge(lora.v, layer.v_proj, prefix + "self_attn.v_proj");
    merge(lora.o, layer.o_proj, prefix + "self_attn.o_proj");
    const auto feed_forward = [&](const LoraFeedForward& ff, FeedForwardWeights& w, const std::string& path) {
      merge(ff.gate, w.gate, path + "gate_proj");
      merge(ff.up, w.up, path + "up_proj");
      merge(ff.down, w.down, path + "down_proj");
    };
    feed_forward(lora.mlp, layer.mlp, prefix + "mlp.");
    for (std::size_t e = 0; e < lora.experts.size() && e < layer.experts.size(); ++e) {
      feed_forward(lora.experts[e], layer.experts[e], prefix + "mlp.experts." + std::to_string(e) + ".");
    }
    for (std::size_t s = 0; s < lora.shared_experts.size() && s < layer.shared_experts.size(); ++s) {
      feed_forward(lora.shared_experts[s], layer.shared_experts[s],
                   prefix + "mlp.shared_experts." + std::to_string(s) + ".");
    }
  }
}

}  // namespace minigen
