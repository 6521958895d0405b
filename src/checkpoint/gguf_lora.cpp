#include "checkpoint/gguf_lora.h"

#include <cstring>
#include <map>
#include <set>

#include "core/error.h"
#include "ops/float_formats.h"

namespace minigen {
namespace {

// The matrices of a layer an adapter may wrap, by their llama.cpp names (gguf_model.h's table maps them to minigen's).
constexpr const char* kAdaptableGgufSuffixes[] = {"attn_q.weight",      "attn_k.weight",   "attn_v.weight",
                                                  "attn_output.weight", "ffn_gate.weight", "ffn_up.weight",
                                                  "ffn_down.weight"};

// "model.layers.3.self_attn.q_proj" → "blk.3.attn_q.weight", via gguf_model's table.
std::string gguf_name_of(const std::string& module, const ModelConfig& config) {
  const std::string layer =
      module.substr(std::string("model.layers.").size(),
                    module.find('.', std::string("model.layers.").size()) - std::string("model.layers.").size());
  for (const char* suffix : kAdaptableGgufSuffixes) {
    const std::string candidate = "blk." + layer + "." + suffix;
    const std::vector<std::string> names = hf_names(candidate, config);
    if (names.size() == 1 && names[0] == module + ".weight") return candidate;
  }
  throw Error("'" + module +
              "' has no tensor of its own in llama.cpp's graph (expert matrices are stacked there); "
              "this adapter cannot be written as a GGUF adapter");
}

std::string f32_bytes(const std::vector<float>& values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// The llama layout stores q and k rows permuted (gguf_model.cpp): B's rows are output rows, so they move with them.
int permuted_heads(const std::string& module, const ModelConfig& config, const std::string& architecture) {
  if (architecture != "llama") return 0;
  if (module.ends_with("self_attn.q_proj")) return config.num_q_heads;
  if (module.ends_with("self_attn.k_proj")) return config.num_kv_heads;
  return 0;
}

HostTensor tensor_values(const GgufTensorInfo& info) {
  if (info.dims.size() != 2) {
    throw Error("tensor '" + info.name + "' has " + std::to_string(info.dims.size()) +
                " dimensions; LoRA's A and B "
                "are matrices");
  }
  HostTensor tensor;
  tensor.shape = {static_cast<int64_t>(info.dims[1]), static_cast<int64_t>(info.dims[0])};  // row-major [rows][cols]
  const uint64_t count = info.element_count();
  tensor.values.resize(count);
  const std::byte* data = info.bytes.data();
  switch (info.type) {
    case GgufTensorType::kF32:
      std::memcpy(tensor.values.data(), data, count * sizeof(float));
      break;
    case GgufTensorType::kF16:
    case GgufTensorType::kBF16:
      for (uint64_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, data + 2 * i, 2);
        tensor.values[i] = info.type == GgufTensorType::kF16 ? f16_to_float(bits) : bf16_to_float(bits);
      }
      tensor.stored_dtype = info.type == GgufTensorType::kF16 ? DType::kF16 : DType::kBF16;
      break;
    default:
      throw Error("tensor '" + info.name + "' is quantized; minigen reads LoRA adapters in F32, F16 or BF16");
  }
  return tensor;
}

std::string metadata_string(const GgufFile& file, const std::string& key) {
  const GgufValue* value = file.find(key);
  if (value == nullptr || value->is_array() || value->type != GgufValueType::kString) return "";
  return value->strings[0];
}

}  // namespace

GgufExport gguf_lora_export(const ModelConfig& config, const LoraAdapter& adapter, const std::string& name) {
  const std::string architecture = gguf_architecture(config);
  std::set<int> ranks;
  for (const LoraAdapter::Wrapped& wrapped : adapter.wrapped()) ranks.insert(wrapped.pair->rank);
  if (ranks.size() > 1 && adapter.scale != 1.0f) {
    throw Error("the adapter's matrices have different ranks and a scale of " + std::to_string(adapter.scale) +
                ": llama.cpp scales each by alpha / its rank, which cannot say that");
  }
  const float alpha = ranks.size() == 1 ? adapter.scale * static_cast<float>(*ranks.begin()) : 0.0f;
  GgufExport exported;
  exported.metadata = {
      {"general.architecture", GgufValue::string(architecture)},
      {"general.type", GgufValue::string("adapter")},
      {"general.name", GgufValue::string(name)},
      {"adapter.type", GgufValue::string("lora")},
      {"adapter.lora.alpha", GgufValue::float32(alpha)},
  };
  for (const LoraAdapter::Wrapped& wrapped : adapter.wrapped()) {
    const std::string base = gguf_name_of(wrapped.module, config);
    const LoraPair& pair = *wrapped.pair;
    HostTensor b{{pair.b.rows, pair.rank}, pair.b.values, DType::kF32};
    if (const int heads = permuted_heads(wrapped.module, config, architecture)) permute_rows(b, heads, true);
    exported.tensors.push_back({base + ".lora_a",
                                {static_cast<uint64_t>(pair.a.cols), static_cast<uint64_t>(pair.rank)},
                                GgufTensorType::kF32,
                                f32_bytes(pair.a.values)});
    exported.tensors.push_back({base + ".lora_b",
                                {static_cast<uint64_t>(pair.rank), static_cast<uint64_t>(pair.b.rows)},
                                GgufTensorType::kF32,
                                f32_bytes(b.values)});
  }
  return exported;
}

LoraAdapter lora_from_gguf(const GgufFile& file, const ModelConfig& config, const std::string& source) {
  if (metadata_string(file, "general.type") != "adapter" || metadata_string(file, "adapter.type") != "lora") {
    throw Error(source +
                " is not a LoRA adapter GGUF (general.type \"adapter\" and adapter.type \"lora\"); a model "
                "GGUF is passed with -m");
  }
  const std::string architecture = gguf_architecture(config);
  const std::string file_architecture = metadata_string(file, "general.architecture");
  if (file_architecture != architecture) {
    throw Error(source + " is an adapter for the " + file_architecture + " architecture; this model is " +
                architecture);
  }
  float alpha = 0.0f;
  if (const GgufValue* value = file.find("adapter.lora.alpha"); value != nullptr) {
    if (value->is_array() || !gguf_is_float(value->type)) throw Error(source + ": adapter.lora.alpha is not a float");
    alpha = static_cast<float>(value->number(0));
  }
  std::map<std::string, LoraTensors> pairs;
  for (const GgufTensorInfo& info : file.tensors) {
    const bool is_a = info.name.ends_with(".lora_a");
    if (!is_a && !info.name.ends_with(".lora_b")) {
      throw Error(source + " holds tensor '" + info.name + "', which is not a LoRA matrix (….lora_a / ….lora_b)");
    }
    const std::string base = info.name.substr(0, info.name.size() - 7);
    const std::vector<std::string> names = hf_names(base, config);
    if (names.size() != 1 || !names[0].ends_with(".weight")) {
      throw Error(source + ": '" + base + "' is not a matrix of this model that minigen adapts");
    }
    LoraTensors& pair = pairs[names[0].substr(0, names[0].size() - 7)];
    (is_a ? pair.a : pair.b) = tensor_values(info);
  }
  std::vector<LoraTensors> tensors;
  std::set<int64_t> ranks;
  for (auto& [module, pair] : pairs) {
    if (pair.a.shape.empty() || pair.b.shape.empty()) {
      throw Error(source + ": '" + module + "' has " +
                  (pair.a.shape.empty() ? "a lora_b but no lora_a" : "a lora_a but no lora_b"));
    }
    ranks.insert(pair.a.shape[0]);
    if (const int heads = permuted_heads(module, config, architecture)) {
      if (pair.b.shape[0] % (2 * heads) != 0)
        throw Error(source + ": '" + module + "' has a lora_b of the wrong height");
      permute_rows(pair.b, heads, false);
    }
    pair.module = module;
    tensors.push_back(std::move(pair));
  }
  if (alpha != 0.0f && ranks.size() > 1) {
    throw Error(source +
                ": matrices of different ranks with adapter.lora.alpha ≠ 0 have different scales; minigen "
                "keeps one scale per adapter");
  }
  const float scale = alpha != 0.0f && !ranks.empty() ? alpha / static_cast<float>(*ranks.begin()) : 1.0f;
  LoraAdapter adapter = lora_from_tensors(config, std::move(tensors), scale, source, "GGUF");
  adapter.alpha = alpha;
  return adapter;
}

}  // namespace minigen
