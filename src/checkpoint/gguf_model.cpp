#include "checkpoint/gguf_model.h"

#include <cstring>
#include <optional>

#include "checkpoint/gguf_tensor_values.h"
#include "core/error.h"
#include "model/dtype.h"
#include "model/quantized_tensors.h"

namespace minigen {
namespace {

// minigen (HF) name suffixes under model.layers.N. and their llama.cpp names under blk.N.
constexpr std::pair<const char*, const char*> kLayerNames[] = {
    {"input_layernorm.weight", "attn_norm.weight"},    {"self_attn.q_proj.weight", "attn_q.weight"},
    {"self_attn.k_proj.weight", "attn_k.weight"},      {"self_attn.v_proj.weight", "attn_v.weight"},
    {"self_attn.o_proj.weight", "attn_output.weight"}, {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"}, {"post_attention_layernorm.weight", "ffn_norm.weight"},
    {"mlp.gate_proj.weight", "ffn_gate.weight"},       {"mlp.up_proj.weight", "ffn_up.weight"},
    {"mlp.down_proj.weight", "ffn_down.weight"},       {"mlp.gate.weight", "ffn_gate_inp.weight"},
};
constexpr std::pair<const char*, const char*> kGlobalNames[] = {
    {"model.embed_tokens.weight", "token_embd.weight"},
    {"model.norm.weight", "output_norm.weight"},
    {"lm_head.weight", "output.weight"},
};
// Expert projections: minigen's per-expert name suffix and the stacked llama.cpp tensor.
constexpr std::pair<const char*, const char*> kExpertNames[] = {
    {"gate_proj.weight", "ffn_gate_exps.weight"},
    {"up_proj.weight", "ffn_up_exps.weight"},
    {"down_proj.weight", "ffn_down_exps.weight"},
};

std::string hf_layer(int layer) { return "model.layers." + std::to_string(layer) + "."; }
std::string gguf_layer(int layer) { return "blk." + std::to_string(layer) + "."; }

}  // namespace

// llama.cpp's `llama` graph applies RoPE to adjacent pairs (2i, 2i + 1) (llama_model_rope_type: LLM_ARCH_LLAMA is
// LLAMA_ROPE_TYPE_NORM, QWEN3 and QWEN3MOE are LLAMA_ROPE_TYPE_NEOX), while minigen, like HF's LlamaAttention,
// rotates halves (i, i + d/2) (ops/rope.h). llama.cpp's convert_hf_to_gguf.py therefore reorders the q and k rows of
// each head: viewing a head's rows as [2][d/2], it stores them as [d/2][2], so GGUF row 2i + j is HF row j·d/2 + i.
// The `qwen3` graph uses the rotate-half form itself (NeoX RoPE) and its rows are stored as HF has them.
void permute_rows(HostTensor& tensor, int heads, bool to_gguf) {
  const std::size_t rows = static_cast<std::size_t>(tensor.shape.at(0));
  const std::size_t width = tensor.values.size() / rows;
  const std::size_t head_dim = rows / static_cast<std::size_t>(heads);
  const std::size_t half = head_dim / 2;
  std::vector<float> out(tensor.values.size());
  for (std::size_t h = 0; h < static_cast<std::size_t>(heads); ++h) {
    for (std::size_t i = 0; i < half; ++i) {
      for (std::size_t j = 0; j < 2; ++j) {
        const std::size_t gguf_row = h * head_dim + 2 * i + j;
        const std::size_t hf_row = h * head_dim + j * half + i;
        const std::size_t from = to_gguf ? hf_row : gguf_row;
        const std::size_t to = to_gguf ? gguf_row : hf_row;
        std::memcpy(&out[to * width], &tensor.values[from * width], width * sizeof(float));
      }
    }
  }
  tensor.values = std::move(out);
}

namespace {

void permute_for_llama(TensorMap& tensors, const ModelConfig& config, bool to_gguf) {
  for (int layer = 0; layer < config.num_layers; ++layer) {
    for (const auto& [suffix, heads] : {std::pair{"self_attn.q_proj.weight", config.num_q_heads},
                                        std::pair{"self_attn.k_proj.weight", config.num_kv_heads}}) {
      for (const std::string& name : {hf_layer(layer) + suffix, hf_layer(layer) + suffix + kScaleSuffix}) {
        if (const auto found = tensors.find(name); found != tensors.end()) permute_rows(found->second, heads, to_gguf);
      }
    }
  }
}

// The GGUF bytes of one minigen tensor: floats in `float_type` (norms always F32), or q8/q4 codes with their scales
// as Q8_0/Q4_0 blocks.
std::string encode(const HostTensor& tensor, const HostTensor* scales, GgufTensorType float_type) {
  std::string bytes;
  if (scales == nullptr) {
    const GgufTensorType type = tensor.shape.size() == 1 ? GgufTensorType::kF32 : float_type;
    bytes.resize(gguf_type_bytes(type, tensor.values.size()));
    encode_from_f32(gguf_float_dtype(type), tensor.values.data(), tensor.values.size(),
                    reinterpret_cast<std::byte*>(bytes.data()));
    return bytes;
  }
  const bool q8 = tensor.stored_dtype == DType::kI8;
  const std::size_t blocks = scales->values.size();
  for (std::size_t b = 0; b < blocks; ++b) {
    const uint16_t d = float_to_f16(scales->values[b]);  // exact: the scales are fp16 values
    bytes.append(reinterpret_cast<const char*>(&d), 2);
    if (q8) {
      for (int k = 0; k < kGgufQuantBlock; ++k)
        bytes.push_back(static_cast<char>(static_cast<int8_t>(tensor.values[b * 32 + k])));
      continue;
    }
    // minigen's q4 byte j holds codes 2j (low nibble) and 2j + 1 (high), each + 8; Q4_0's byte j holds values j and
    // j + 16 of the block.
    int codes[kGgufQuantBlock];
    for (int j = 0; j < 16; ++j) {
      const int packed = static_cast<int>(tensor.values[b * 16 + j]);
      codes[2 * j] = packed & 0x0f;
      codes[2 * j + 1] = packed >> 4;
    }
    for (int j = 0; j < 16; ++j) bytes.push_back(static_cast<char>(codes[j] | (codes[j + 16] << 4)));
  }
  return bytes;
}

GgufTensorType type_of(const HostTensor& tensor, bool coded, GgufTensorType float_type) {
  if (coded) return tensor.stored_dtype == DType::kI8 ? GgufTensorType::kQ8_0 : GgufTensorType::kQ4_0;
  return tensor.shape.size() == 1 ? GgufTensorType::kF32 : float_type;
}

// dims in ggml order for a minigen matrix [rows][cols] (q8/q4: the matrix's own cols, not the code tensor's).
std::vector<uint64_t> dims_of(const HostTensor& tensor, const HostTensor* scales) {
  if (tensor.shape.size() == 1) return {static_cast<uint64_t>(tensor.shape[0])};
  const uint64_t cols = scales != nullptr ? static_cast<uint64_t>(scales->shape[1]) * kGgufQuantBlock
                                          : static_cast<uint64_t>(tensor.shape[1]);
  return {cols, static_cast<uint64_t>(tensor.shape[0])};
}

void put_metadata(GgufMetadata& metadata, const ModelConfig& config, const std::string& arch) {
  auto u32 = [&](const std::string& key, int value) {
    metadata.emplace_back(arch + "." + key, GgufValue::uint32(static_cast<uint32_t>(value)));
  };
  auto f32 = [&](const std::string& key, double value) {
    metadata.emplace_back(arch + "." + key, GgufValue::float32(static_cast<float>(value)));
  };
  u32("vocab_size", config.vocab_size);
  u32("context_length", config.max_position_embeddings);
  u32("embedding_length", config.hidden_size);
  u32("block_count", config.num_layers);
  u32("feed_forward_length", config.intermediate_size);
  u32("attention.head_count", config.num_q_heads);
  u32("attention.head_count_kv", config.num_kv_heads);
  u32("attention.key_length", config.head_dim);
  u32("attention.value_length", config.head_dim);
  u32("rope.dimension_count", config.head_dim);
  f32("attention.layer_norm_rms_epsilon", config.rms_norm_eps);
  f32("rope.freq_base", config.rope_theta);
  if (config.use_moe) {
    u32("expert_count", config.num_experts);
    u32("expert_used_count", config.num_experts_per_token);
    u32("expert_feed_forward_length", config.moe_intermediate_size);
  }
  if (config.rope_scaling) {
    metadata.emplace_back(arch + ".rope.scaling.type", GgufValue::string("yarn"));
    f32("rope.scaling.factor", config.rope_scaling->factor);
    u32("rope.scaling.original_context_length", config.rope_scaling->original_max_position_embeddings);
    f32("rope.scaling.yarn_beta_fast", config.rope_scaling->beta_fast);
    f32("rope.scaling.yarn_beta_slow", config.rope_scaling->beta_slow);
    f32("rope.scaling.attn_factor", config.rope_scaling->attention_factor);
  }
}

// llama.cpp's general.file_type (LLAMA_FTYPE_*): what most of the weights are.
uint32_t file_type(GgufTensorType type) {
  switch (type) {
    case GgufTensorType::kF32:
      return 0;
    case GgufTensorType::kF16:
      return 1;
    case GgufTensorType::kQ4_0:
      return 2;
    case GgufTensorType::kQ8_0:
      return 7;
    case GgufTensorType::kBF16:
      return 32;
    case GgufTensorType::kQ4_1:  // not written (minigen writes none of these): llama.cpp's numbers
      return 3;
    case GgufTensorType::kQ5_0:
      return 8;
    case GgufTensorType::kQ5_1:
      return 9;
    case GgufTensorType::kQ4_K:  // the *_K_M files
      return 15;
    case GgufTensorType::kQ5_K:
      return 17;
    case GgufTensorType::kQ6_K:
      return 18;
  }
  return 0;
}

// Reads the architecture's hyper-parameter keys, each checked for its type.
class KeyReader {
 public:
  KeyReader(const GgufFile& file, const std::string& name, std::string arch)
      : file_(file), name_(name), arch_(std::move(arch)) {}

  // A positive integer that fits an int (config.validate() checks the sensible ranges).
  int integer(const std::string& key, std::optional<int> fallback = std::nullopt) const {
    const GgufValue* value = find(key, fallback.has_value());
    if (value == nullptr) return *fallback;
    if (value->is_array() || gguf_number_bytes(value->type) == 0 || gguf_is_float(value->type) ||
        value->type == GgufValueType::kBool)
      fail(key, "an integer");
    const int64_t number = value->integer(0);
    if (number <= 0 || number > INT32_MAX) fail(key, "a positive integer below 2^31");
    return static_cast<int>(number);
  }
  // A float in `range` (config.h's, which validate() applies again under config.json's names).
  double number(const std::string& key, const NumberRange& range, std::optional<double> fallback = std::nullopt) const {
    const GgufValue* value = find(key, fallback.has_value());
    if (value == nullptr) return *fallback;
    if (value->is_array() || !gguf_is_float(value->type)) fail(key, "a float");
    const double number = value->number(0);
    if (!range.contains(number)) fail(key, ("in " + range.text() + ", not " + number_text(number)).c_str());
    return number;
  }
  std::optional<std::string> text(const std::string& key) const {
    const GgufValue* value = find(key, true);
    if (value == nullptr) return std::nullopt;
    if (value->is_array() || value->type != GgufValueType::kString) fail(key, "a string");
    return value->strings[0];
  }

 private:
  const GgufValue* find(const std::string& key, bool optional) const {
    const GgufValue* value = file_.find(arch_ + "." + key);
    if (value == nullptr && !optional) throw Error(name_ + ": GGUF metadata has no '" + arch_ + "." + key + "'");
    return value;
  }
  [[noreturn]] void fail(const std::string& key, const char* what) const {
    throw Error(name_ + ": GGUF metadata '" + arch_ + "." + key + "' must be " + what);
  }
  const GgufFile& file_;
  const std::string& name_;
  std::string arch_;
};

const GgufTensorInfo* find_tensor(const GgufFile& file, const std::string& name) {
  for (const GgufTensorInfo& info : file.tensors) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

ModelConfig config_from_gguf(const GgufFile& file, const std::string& name, const std::string& arch) {
  const KeyReader keys(file, name, arch);
  ModelConfig config;
  config.hidden_size = keys.integer("embedding_length");
  config.num_layers = keys.integer("block_count");
  config.num_q_heads = keys.integer("attention.head_count");
  config.num_kv_heads = keys.integer("attention.head_count_kv", config.num_q_heads);
  config.head_dim = keys.integer("attention.key_length", config.hidden_size / config.num_q_heads);
  if (keys.integer("attention.value_length", config.head_dim) != config.head_dim ||
      keys.integer("rope.dimension_count", config.head_dim) != config.head_dim) {
    throw Error(name +
                ": GGUF value_length and rope.dimension_count must equal key_length (minigen rotates whole heads)");
  }
  config.intermediate_size = keys.integer("feed_forward_length");
  config.max_position_embeddings = keys.integer("context_length");
  config.rms_norm_eps = static_cast<float>(keys.number("attention.layer_norm_rms_epsilon", kRmsNormEpsRange));
  config.rope_theta = keys.number("rope.freq_base", kRopeThetaRange, 10000.0);  // llama.cpp's default
  config.qk_norm = arch != "llama";
  if (keys.integer("expert_count", 1) > 1 || arch == "qwen3moe") {
    config.use_moe = true;
    config.num_experts = keys.integer("expert_count");
    config.num_experts_per_token = keys.integer("expert_used_count");
    config.moe_intermediate_size = keys.integer("expert_feed_forward_length", config.intermediate_size);
    config.norm_topk_prob = true;  // llama.cpp renormalises the chosen experts' weights in both graphs
  }
  if (const auto scaling = keys.text("rope.scaling.type"); scaling && *scaling != "none") {
    if (*scaling != "yarn") throw Error(name + ": GGUF rope scaling '" + *scaling + "' is not supported (yarn is)");
    RopeScaling yarn;
    yarn.factor = keys.number("rope.scaling.factor", kRopeScalingFactorRange, yarn.factor);
    yarn.original_max_position_embeddings =
        keys.integer("rope.scaling.original_context_length", yarn.original_max_position_embeddings);
    yarn.beta_fast = keys.number("rope.scaling.yarn_beta_fast", kYarnBetaRange, yarn.beta_fast);
    yarn.beta_slow = keys.number("rope.scaling.yarn_beta_slow", kYarnBetaRange, yarn.beta_slow);
    yarn.attention_factor = keys.number("rope.scaling.attn_factor", kAttentionFactorRange, yarn.attention_factor);
    config.rope_scaling = yarn;
  }
  const GgufTensorInfo* embedding = find_tensor(file, "token_embd.weight");
  if (embedding == nullptr || embedding->dims.size() != 2 || embedding->dims[1] > INT32_MAX) {
    throw Error(name + ": GGUF has no 2-D tensor 'token_embd.weight'");
  }
  config.vocab_size = static_cast<int>(embedding->dims[1]);
  config.tie_word_embeddings = find_tensor(file, "output.weight") == nullptr;
  for (const auto& [key, field] : {std::pair{"tokenizer.ggml.bos_token_id", &config.bos_token_id},
                                   std::pair{"tokenizer.ggml.eos_token_id", &config.eos_token_id}}) {
    const GgufValue* id = file.find(key);
    if (id != nullptr && !id->is_array() && gguf_number_bytes(id->type) > 0 && !gguf_is_float(id->type) &&
        id->integer(0) >= 0 && id->integer(0) < config.vocab_size) {
      *field = static_cast<int>(id->integer(0));
    }
  }
  try {
    config.validate();
  } catch (const Error& error) {
    throw Error(name + ": " + error.what());
  }
  config.family = identify_family(config);
  return config;
}

}  // namespace

std::vector<std::string> hf_names(const std::string& gguf_name, const ModelConfig& config) {
  for (const auto& [hf_name, global] : kGlobalNames) {
    if (gguf_name == global) return {hf_name};
  }
  // "blk.N.rest": N read from the name (not searched for, so a file of many tensors costs no more per layer).
  const std::size_t dot = gguf_name.find('.', 4);
  if (gguf_name.compare(0, 4, "blk.") != 0 || dot == std::string::npos || dot == 4 || dot > 10) return {};
  int layer = 0;
  for (std::size_t i = 4; i < dot; ++i) {
    if (gguf_name[i] < '0' || gguf_name[i] > '9') return {};
    layer = layer * 10 + (gguf_name[i] - '0');
  }
  if (layer >= config.num_layers || gguf_name.compare(0, dot + 1, gguf_layer(layer)) != 0) return {};  // "blk.01."
  const std::string suffix = gguf_name.substr(dot + 1);
  for (const auto& [hf_suffix, gguf_suffix] : kLayerNames) {
    if (suffix == gguf_suffix) return {hf_layer(layer) + hf_suffix};
  }
  for (const auto& [hf_suffix, gguf_suffix] : kExpertNames) {
    if (suffix != gguf_suffix || !config.use_moe) continue;
    std::vector<std::string> names;
    for (int e = 0; e < config.num_experts; ++e) {
      names.push_back(hf_layer(layer) + "mlp.experts." + std::to_string(e) + "." + hf_suffix);
    }
    return names;
  }
  return {};
}

namespace {

// The block type (Q8_0 or Q4_0) whose codes the model keeps and runs in, as minigen's q8/q4 exports and
// llama-quantize's Q8_0 and Q4_0 files hold them: blk.0.attn_q's, when every other layer matrix is of that type or
// a float (llama.cpp keeps an MoE router in F32). A model runs one block type (q4 with a q8 output projection), so
// in any other mix — K-quant layers with llama-quantize's Q8_0 fallback for rows not a multiple of 256, F16 layers
// beside a Q8_0 embedding — there is none, and Q8_0/Q4_0 blocks are read as fp32 values like the K-quants.
std::optional<GgufTensorType> kept_block_type(const GgufFile& file) {
  std::optional<GgufTensorType> type;
  for (const GgufTensorInfo& info : file.tensors) {
    if (info.name == "blk.0.attn_q.weight") type = info.type;
  }
  if (type != GgufTensorType::kQ8_0 && type != GgufTensorType::kQ4_0) return std::nullopt;
  for (const GgufTensorInfo& info : file.tensors) {
    if (info.name.compare(0, 4, "blk.") != 0 || info.dims.size() < 2) continue;
    if (info.type != *type && gguf_block_values(info.type) != 1) return std::nullopt;
  }
  return type;
}

// Whether a Q8_0/Q4_0 tensor keeps its codes: a layer matrix when the model keeps its block type; the embedding and
// the output projection when they are Q8_0, the type minigen packs them in (llama-quantize --pure stores them Q4_0).
bool keeps_codes(const GgufTensorInfo& info, std::optional<GgufTensorType> kept_type) {
  if (!kept_type) return false;
  return info.name.compare(0, 4, "blk.") == 0 || info.type == GgufTensorType::kQ8_0;
}

}  // namespace

std::string gguf_architecture(const ModelConfig& config) {
  if (config.use_moe && config.num_shared_experts > 0) {
    throw Error(
        "a model with shared experts (MiniMind2-MoE) has no GGUF layout llama.cpp runs: its llama and qwen3moe "
        "graphs have routed experts only");
  }
  if (config.use_moe && !config.norm_topk_prob) {
    throw Error(
        "llama.cpp renormalises the chosen experts' weights; a model with norm_topk_prob false cannot be "
        "exported");
  }
  if (config.qk_norm) return config.use_moe ? "qwen3moe" : "qwen3";
  return "llama";
}

GgufExport gguf_export(const ModelConfig& config, const ModelWeights& weights, GgufTensorType matrix_type,
                       const std::string& model_name) {
  const std::string arch = gguf_architecture(config);
  const WeightType weight_type = matrix_type == GgufTensorType::kQ8_0   ? WeightType::kQ8
                                 : matrix_type == GgufTensorType::kQ4_0 ? WeightType::kQ4
                                                                        : WeightType::kF32;
  TensorMap tensors = tensors_from_weights(config, weights, weight_type);
  if (config.tie_word_embeddings) tensors.erase("lm_head.weight");  // the tied matrix once, as token_embd
  if (arch == "llama") permute_for_llama(tensors, config, /*to_gguf=*/true);

  GgufExport out;
  out.metadata.emplace_back("general.architecture", GgufValue::string(arch));
  out.metadata.emplace_back("general.name", GgufValue::string(model_name));
  out.metadata.emplace_back("general.file_type", GgufValue::uint32(file_type(matrix_type)));
  if (weight_type != WeightType::kF32) out.metadata.emplace_back("general.quantization_version", GgufValue::uint32(2));
  put_metadata(out.metadata, config, arch);

  auto add = [&](const std::string& gguf_name, const std::vector<std::string>& hf_names) {
    GgufTensorToWrite tensor;
    tensor.name = gguf_name;
    for (const std::string& hf_name : hf_names) {
      const HostTensor& values = tensors.at(hf_name);
      const auto scale = tensors.find(hf_name + kScaleSuffix);
      const HostTensor* scales = scale != tensors.end() ? &scale->second : nullptr;
      tensor.type = type_of(values, scales != nullptr, matrix_type);
      tensor.dims = dims_of(values, scales);
      tensor.bytes += encode(values, scales, matrix_type);
    }
    if (hf_names.size() > 1) tensor.dims.push_back(hf_names.size());  // stacked experts: {cols, rows, experts}
    out.tensors.push_back(std::move(tensor));
  };
  for (const auto& [hf_name, gguf_name] : kGlobalNames) {
    if (tensors.count(hf_name) != 0) add(gguf_name, {hf_name});
  }
  for (int layer = 0; layer < config.num_layers; ++layer) {
    for (const auto& [hf_suffix, gguf_suffix] : kLayerNames) {
      if (tensors.count(hf_layer(layer) + hf_suffix) != 0)
        add(gguf_layer(layer) + gguf_suffix, {hf_layer(layer) + hf_suffix});
    }
    if (!config.use_moe) continue;
    for (const auto& [hf_suffix, gguf_suffix] : kExpertNames) {
      std::vector<std::string> names;
      for (int e = 0; e < config.num_experts; ++e)
        names.push_back(hf_layer(layer) + "mlp.experts." + std::to_string(e) + "." + hf_suffix);
      add(gguf_layer(layer) + gguf_suffix, names);
    }
  }
  return out;
}

GgufModel gguf_model(const GgufFile& file, const std::string& name) {
  const GgufValue* arch = file.find("general.architecture");
  if (arch == nullptr || arch->is_array() || arch->type != GgufValueType::kString) {
    throw Error(name + ": GGUF metadata has no string 'general.architecture'");
  }
  GgufModel model;
  model.architecture = arch->strings[0];
  if (model.architecture != "qwen3" && model.architecture != "qwen3moe" && model.architecture != "llama") {
    throw Error(name + ": GGUF architecture '" + model.architecture +
                "' is not one minigen runs (qwen3, qwen3moe, llama)");
  }
  model.config = config_from_gguf(file, name, model.architecture);
  // Every tensor's name and piece count against the config before any is decoded: a header may claim millions of
  // stacked pieces in a few bytes of data (dims {1, 1, 5000000}), and decoding those first cost gigabytes.
  std::vector<std::vector<std::string>> names_of;
  for (const GgufTensorInfo& info : file.tensors) {
    std::vector<std::string> names = hf_names(info.name, model.config);
    if (names.empty())
      throw Error(name + ": tensor '" + info.name + "' is not one of the " + model.architecture + " layout's");
    if (info.dims.size() > 3)
      throw Error(name + ": tensor '" + info.name + "' has 4 dimensions; minigen maps none such");
    const uint64_t pieces = info.dims.size() == 3 ? info.dims[2] : 1;
    if (pieces != names.size()) {
      throw Error(name + ": tensor '" + info.name + "' stacks " + std::to_string(pieces) + " matrices, not " +
                  std::to_string(names.size()));
    }
    names_of.push_back(std::move(names));
  }
  const std::optional<GgufTensorType> kept_type = kept_block_type(file);
  for (std::size_t t = 0; t < file.tensors.size(); ++t) {
    const GgufTensorInfo& info = file.tensors[t];
    const std::vector<std::string>& names = names_of[t];
    const bool keep_codes = keeps_codes(info, kept_type);
    std::vector<GgufTensorPiece> pieces;
    try {
      pieces = gguf_tensor_pieces(info, keep_codes);
    } catch (const Error& error) {
      throw Error(name + ": " + error.what());
    }
    if (gguf_block_values(info.type) > 1 && !pieces.front().scales) {  // blocks that came out as values
      model.dequantized.push_back({info.name, info.type});
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (pieces[i].scales) model.tensors[names[i] + kScaleSuffix] = std::move(*pieces[i].scales);
      model.tensors[names[i]] = std::move(pieces[i].values);
    }
  }
  if (model.architecture == "llama") {
    for (int layer = 0; layer < model.config.num_layers; ++layer) {
      for (const auto& [suffix, width] : {std::pair{"self_attn.q_proj.weight", model.config.q_width()},
                                          std::pair{"self_attn.k_proj.weight", model.config.kv_width()}}) {
        const auto found = model.tensors.find(hf_layer(layer) + suffix);
        // Checked here, not only by weights_from_tensors, because the permutation below needs whole heads.
        if (found != model.tensors.end() && found->second.shape.at(0) != width) {
          throw Error(name + ": tensor '" + gguf_layer(layer) + (suffix[10] == 'q' ? "attn_q" : "attn_k") +
                      ".weight' has " + std::to_string(found->second.shape.at(0)) + " rows, not " +
                      std::to_string(width));
        }
      }
    }
    permute_for_llama(model.tensors, model.config, /*to_gguf=*/false);
  }
  return model;
}

}  // namespace minigen
