#include "model/config.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <numbers>

#include "core/error.h"
#include "core/format.h"

namespace minigen {

std::string number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

std::string NumberRange::text() const { return "(" + number_text(above) + ", " + number_text(at_most) + "]"; }

namespace {

using nlohmann::json;

// Upper bounds on the fields that size allocations (matrices, caches, scratch). Each is several times the largest
// public model's (vocabularies of 262,144, hidden 16,384, feed-forward 53,248, 126 layers, 128 heads of 128 or 256,
// 256 experts), keeps every product in parameter_count() and kv_bytes_per_token() far from overflowing, and turns a
// config.json that claims absurd sizes into one error naming the field. (Weight memory itself is bounded by the
// weight file: every tensor's shape is checked against the config before the model is built.) The context,
// max_position_embeddings, may be anything up to 2^31 − 1: nothing is sized by it (ops/rope.h, cache/kv_cache.h).
constexpr int kMaxVocabSize = 1 << 20;
constexpr int kMaxHiddenSize = 1 << 15;
constexpr int kMaxIntermediateSize = 1 << 17;
constexpr int kMaxLayers = 512;
constexpr int kMaxHeads = 512;
constexpr int kMaxHeadDim = 1024;
constexpr int kMaxAttentionWidth = 1 << 16;  // q_heads · head_dim
constexpr int kMaxExperts = 1024;

// ---------------------------------------------------------------------------------------------------------------
// The family table (spec §1).

ModelConfig dense_family(const char* name, int hidden, int layers, int q_heads, int kv_heads, int head_dim,
                         int intermediate, bool qk_norm, float eps) {
  ModelConfig config;
  config.family = name;
  config.hidden_size = hidden;
  config.num_layers = layers;
  config.num_q_heads = q_heads;
  config.num_kv_heads = kv_heads;
  config.head_dim = head_dim;
  config.intermediate_size = intermediate;
  config.qk_norm = qk_norm;
  config.rms_norm_eps = eps;
  return config;
}

ModelConfig with_experts(ModelConfig config, int experts, int per_token, int shared) {
  config.use_moe = true;
  config.num_experts = experts;
  config.num_experts_per_token = per_token;
  config.num_shared_experts = shared;
  config.moe_intermediate_size = config.intermediate_size;
  config.norm_topk_prob = true;
  return config;
}

const std::vector<ModelConfig>& family_table() {
  static const std::vector<ModelConfig> table = {
      dense_family("minimind3", 768, 8, 8, 4, 96, 2432, true, 1e-6f),
      with_experts(dense_family("minimind3-moe", 768, 8, 8, 4, 96, 2432, true, 1e-6f), 4, 1, 0),
      dense_family("minimind2", 768, 16, 8, 2, 96, 2048, false, 1e-5f),
      dense_family("minimind2-small", 512, 8, 8, 2, 64, 1408, false, 1e-5f),
      with_experts(dense_family("minimind2-moe", 640, 8, 8, 2, 80, 1728, false, 1e-5f), 4, 2, 1),
      dense_family("tiny", 256, 4, 8, 2, 32, 832, true, 1e-6f),
  };
  return table;
}

bool same_shape(const ModelConfig& a, const ModelConfig& b) {
  if (a.vocab_size != b.vocab_size || a.hidden_size != b.hidden_size || a.num_layers != b.num_layers ||
      a.num_q_heads != b.num_q_heads || a.num_kv_heads != b.num_kv_heads || a.head_dim != b.head_dim ||
      a.qk_norm != b.qk_norm || a.use_moe != b.use_moe) {
    return false;
  }
  if (!a.use_moe) return a.intermediate_size == b.intermediate_size;
  return a.num_experts == b.num_experts && a.num_experts_per_token == b.num_experts_per_token &&
         a.num_shared_experts == b.num_shared_experts && a.moe_intermediate_size == b.moe_intermediate_size;
}

// MiniMind's default feed-forward widths when a config leaves intermediate_size out.
// minimind-3: ceil(hidden·π/64)·64.
int minimind3_intermediate_size(int hidden) {
  return static_cast<int>(std::ceil(hidden * std::numbers::pi / 64.0)) * 64;
}
// MiniMind2 (and the older LMConfig, whose `multiple_of` is 64): int(hidden·8/3) rounded up to a multiple.
int minimind2_intermediate_size(int hidden, int multiple_of) {
  const int raw = static_cast<int>(hidden * 8.0 / 3.0);
  return multiple_of * ((raw + multiple_of - 1) / multiple_of);
}

// ---------------------------------------------------------------------------------------------------------------
// Reading config.json fields. MiniMind renamed its fields between generations (dim → hidden_size, ...), so every
// lookup takes the list of spellings; null counts as absent, as Python's None does.

class ConfigFields {
 public:
  explicit ConfigFields(const json& object) : object_(object) {}

  // The first spelling present, or nullptr; `found_name` receives it.
  const json* find(std::initializer_list<const char*> names, std::string* found_name = nullptr) const {
    for (const char* name : names) {
      const auto found = object_.find(name);
      if (found != object_.end() && !found->is_null()) {
        if (found_name != nullptr) *found_name = name;
        return &*found;
      }
    }
    return nullptr;
  }

  bool has(std::initializer_list<const char*> names) const { return find(names) != nullptr; }

  int integer(std::initializer_list<const char*> names, std::optional<int> fallback, int minimum = 1) const {
    std::string name;
    const json* value = find(names, &name);
    if (value == nullptr) {
      if (!fallback) fail_missing(names);
      return *fallback;
    }
    return checked_integer(*value, name, minimum);
  }

  // transformers allows a list of eos ids; minigen stops on the first.
  int token_id(const char* name, int fallback) const {
    const json* value = find({name});
    if (value != nullptr && value->is_array() && !value->empty()) return checked_integer((*value)[0], name, 0);
    return integer({name}, fallback, /*minimum=*/0);
  }

  double positive_number(std::initializer_list<const char*> names, double fallback) const {
    std::string name;
    const json* value = find(names, &name);
    if (value == nullptr) return fallback;
    if (!value->is_number() || !(value->get<double>() > 0) || !std::isfinite(value->get<double>())) {
      fail(name, "must be a positive number, got " + value->dump());
    }
    return value->get<double>();
  }

  bool boolean(std::initializer_list<const char*> names, bool fallback) const {
    std::string name;
    const json* value = find(names, &name);
    if (value == nullptr) return fallback;
    if (!value->is_boolean()) fail(name, "must be true or false, got " + value->dump());
    return value->get<bool>();
  }

  std::string text(const char* name) const {
    const json* value = find({name});
    if (value == nullptr) fail_missing({name});
    if (!value->is_string()) fail(name, "must be a string, got " + value->dump());
    return value->get<std::string>();
  }

  [[noreturn]] static void fail(const std::string& name, const std::string& problem) {
    throw Error("config.json: field '" + name + "' " + problem);
  }

 private:
  static int checked_integer(const json& value, const std::string& name, int minimum) {
    const std::string requirement = minimum > 0 ? "a positive integer" : "a non-negative integer";
    // Integral floats (768.0) are accepted: Python writes some sizes that way.
    if (!value.is_number() || value.get<double>() != std::floor(value.get<double>()) || value.get<double>() < minimum ||
        value.get<double>() > INT_MAX) {
      fail(name, "must be " + requirement + ", got " + value.dump());
    }
    return static_cast<int>(value.get<double>());
  }

  [[noreturn]] static void fail_missing(std::initializer_list<const char*> names) {
    std::string spelled;
    for (const char* name : names) spelled += std::string(spelled.empty() ? "'" : " or '") + name + "'";
    throw Error("config.json: missing required field " + spelled);
  }

  const json& object_;
};

enum class ConfigDialect { kMiniMind, kQwen3, kLlama };

// YaRN settings from a rope_scaling object. MiniMind defaults a missing attention_factor to 1; HF transformers
// (qwen3, llama configs) to 0.1·ln(factor) + 1, so each dialect keeps its own library's meaning.
RopeScaling parse_yarn(const json& object, ConfigDialect dialect) {
  if (!object.is_object()) ConfigFields::fail("rope_scaling", "must be an object, got " + object.dump());
  const ConfigFields fields(object);
  const json* type = fields.find({"type", "rope_type"});
  if (type != nullptr && *type != "yarn" && *type != "default") {
    ConfigFields::fail("rope_scaling", "has type " + type->dump() + "; only yarn is supported");
  }
  RopeScaling scaling;
  scaling.factor = fields.positive_number({"factor"}, scaling.factor);
  scaling.original_max_position_embeddings =
      fields.integer({"original_max_position_embeddings"}, scaling.original_max_position_embeddings);
  scaling.beta_fast = fields.positive_number({"beta_fast"}, scaling.beta_fast);
  scaling.beta_slow = fields.positive_number({"beta_slow"}, scaling.beta_slow);
  const double hf_default = 0.1 * std::log(scaling.factor) + 1.0;
  scaling.attention_factor =
      fields.positive_number({"attention_factor"}, dialect == ConfigDialect::kMiniMind ? 1.0 : hf_default);
  return scaling;
}

// The "type" (MiniMind, older transformers) or "rope_type" (newer) of a rope settings object; "" if it has none.
std::string rope_type_of(const json& object) {
  if (!object.is_object()) return "";
  const json* type = ConfigFields(object).find({"type", "rope_type"});
  return type != nullptr && type->is_string() ? type->get<std::string>() : "";
}

std::optional<RopeScaling> parse_rope_scaling(const ConfigFields& fields, ConfigDialect dialect) {
  const json* scaling = fields.find({"rope_scaling"});
  bool configured = scaling != nullptr && rope_type_of(*scaling) != "default";
  if (scaling == nullptr) {
    // Newer transformers keep the rope settings in rope_parameters, which always exists and says "default" when
    // nothing is scaled.
    scaling = fields.find({"rope_parameters"});
    configured = scaling != nullptr && !rope_type_of(*scaling).empty() && rope_type_of(*scaling) != "default";
  }
  // MiniMind switches YaRN on with inference_rope_scaling; when that flag is present it decides.
  if (dialect == ConfigDialect::kMiniMind && fields.has({"inference_rope_scaling"})) {
    if (!fields.boolean({"inference_rope_scaling"}, false)) return std::nullopt;
    return configured ? parse_yarn(*scaling, dialect) : RopeScaling{};
  }
  if (!configured) return std::nullopt;
  return parse_yarn(*scaling, dialect);
}

double parse_rope_theta(const ConfigFields& fields, ConfigDialect dialect) {
  // MiniMind's default is 1e6; transformers' Qwen3 and Llama default to 1e4.
  const double fallback = dialect == ConfigDialect::kMiniMind ? 1e6 : 1e4;
  if (fields.has({"rope_theta"})) return fields.positive_number({"rope_theta"}, fallback);
  const json* parameters = fields.find({"rope_parameters"});
  if (parameters != nullptr && parameters->is_object()) {
    return ConfigFields(*parameters).positive_number({"rope_theta"}, fallback);
  }
  return fallback;
}

// MoE fields in both MiniMind spellings (minimind-3: num_experts; MiniMind2: n_routed_experts, n_shared_experts,
// the latter a bool in the oldest LMConfig) and Qwen3-MoE's. Defaults follow the MiniMind generation that
// `qk_norm` identifies: minimind-3 routes top-1 with no shared expert, MiniMind2 top-2 plus one shared expert.
void parse_experts(const ConfigFields& fields, ModelConfig& config) {
  config.num_experts = fields.integer({"num_experts", "n_routed_experts"}, 4);
  config.num_experts_per_token = fields.integer({"num_experts_per_tok"}, config.qk_norm ? 1 : 2);
  const json* shared = fields.find({"n_shared_experts"});
  if (shared != nullptr && shared->is_boolean()) {
    config.num_shared_experts = shared->get<bool>() ? 1 : 0;
  } else {
    config.num_shared_experts = fields.integer({"n_shared_experts"}, config.qk_norm ? 0 : 1, /*minimum=*/0);
  }
  config.moe_intermediate_size = fields.integer({"moe_intermediate_size"}, config.intermediate_size);
  config.norm_topk_prob = fields.boolean({"norm_topk_prob"}, true);
}

void check_number(const char* field, double value, const NumberRange& range) {
  if (!range.contains(value)) {
    throw Error("model config: " + std::string(field) + " = " + number_text(value) + " is outside " + range.text());
  }
}

void check_range(const char* field, long long value, long long minimum, long long maximum) {
  if (value < minimum || value > maximum) {
    throw Error("model config: " + std::string(field) + " = " + std::to_string(value) + " is outside [" +
                std::to_string(minimum) + ", " + std::to_string(maximum) + "]");
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------

std::size_t ModelConfig::kv_bytes_per_token(KvDType dtype) const { return kv_layout(dtype).bytes_per_token(); }

std::size_t ModelConfig::parameter_count() const {
  const std::size_t hidden = static_cast<std::size_t>(hidden_size);
  const std::size_t embedding = static_cast<std::size_t>(vocab_size) * hidden;
  // Attention: Wq [q_width, hidden], Wk and Wv [kv_width, hidden], Wo [hidden, q_width]; two RMSNorm weights.
  std::size_t per_layer =
      2 * hidden + 2 * hidden * static_cast<std::size_t>(q_width()) + 2 * hidden * static_cast<std::size_t>(kv_width());
  if (qk_norm) per_layer += 2 * static_cast<std::size_t>(head_dim);
  // Each feed-forward block has gate, up [width, hidden] and down [hidden, width].
  if (use_moe) {
    const std::size_t expert = 3 * hidden * static_cast<std::size_t>(moe_intermediate_size);
    per_layer += static_cast<std::size_t>(num_experts) * hidden;  // router
    per_layer += static_cast<std::size_t>(num_experts + num_shared_experts) * expert;
  } else {
    per_layer += 3 * hidden * static_cast<std::size_t>(intermediate_size);
  }
  const std::size_t output_projection = tie_word_embeddings ? 0 : embedding;
  return embedding + output_projection + static_cast<std::size_t>(num_layers) * per_layer + hidden;
}

void ModelConfig::validate() const {
  check_range("vocab_size", vocab_size, 1, kMaxVocabSize);
  check_range("hidden_size", hidden_size, 1, kMaxHiddenSize);
  // Named as config.json spells them (transformers' names), since that is where a user would fix them.
  check_range("num_hidden_layers", num_layers, 1, kMaxLayers);
  check_range("num_attention_heads", num_q_heads, 1, kMaxHeads);
  check_range("num_key_value_heads", num_kv_heads, 1, kMaxHeads);
  check_range("head_dim", head_dim, 2, kMaxHeadDim);
  check_range("intermediate_size", intermediate_size, 1, kMaxIntermediateSize);
  check_range("num_attention_heads × head_dim", static_cast<long long>(num_q_heads) * head_dim, 2, kMaxAttentionWidth);
  check_range("max_position_embeddings", max_position_embeddings, 1, INT_MAX);
  check_range("bos_token_id", bos_token_id, 0, vocab_size - 1);
  check_range("eos_token_id", eos_token_id, 0, vocab_size - 1);
  // Grouped-query attention: query head h reads kv head h / (q_heads / kv_heads).
  if (num_q_heads % num_kv_heads != 0) {
    throw Error("model config: num_q_heads " + std::to_string(num_q_heads) + " is not a multiple of num_kv_heads " +
                std::to_string(num_kv_heads));
  }
  // Rotate-half RoPE pairs element i with i + head_dim/2.
  if (head_dim % 2 != 0) throw Error("model config: head_dim " + std::to_string(head_dim) + " is odd");
  // q_width may differ from hidden_size (Qwen3 allows an explicit head_dim: Wo maps q_width back to hidden).
  check_number("rms_norm_eps", rms_norm_eps, kRmsNormEpsRange);
  check_number("rope_theta", rope_theta, kRopeThetaRange);
  if (rope_scaling) {
    check_number("rope_scaling factor", rope_scaling->factor, kRopeScalingFactorRange);
    check_range("rope_scaling original_max_position_embeddings", rope_scaling->original_max_position_embeddings, 1,
                INT_MAX);
    check_number("rope_scaling beta_fast", rope_scaling->beta_fast, kYarnBetaRange);
    check_number("rope_scaling beta_slow", rope_scaling->beta_slow, kYarnBetaRange);
    check_number("rope_scaling attention_factor", rope_scaling->attention_factor, kAttentionFactorRange);
  }
  if (use_moe) {
    check_range("num_experts", num_experts, 1, kMaxExperts);
    check_range("num_experts_per_token", num_experts_per_token, 1, num_experts);
    check_range("num_shared_experts", num_shared_experts, 0, kMaxExperts);
    check_range("moe_intermediate_size", moe_intermediate_size, 1, kMaxIntermediateSize);
  } else if (num_experts != 0 || num_experts_per_token != 0 || num_shared_experts != 0 || moe_intermediate_size != 0) {
    throw Error("model config: expert counts are set but use_moe is false");
  }
}

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const ModelConfig& config : family_table()) names.push_back(config.family);
  return names;
}

ModelConfig config_for_family(std::string_view family) {
  for (const ModelConfig& config : family_table()) {
    if (config.family == family) return config;
  }
  std::string known;
  for (const std::string& name : family_names()) known += (known.empty() ? "" : ", ") + name;
  throw Error("unknown model family '" + std::string(family) + "' (known: " + known + ")");
}

std::string identify_family(const ModelConfig& config) {
  for (const ModelConfig& row : family_table()) {
    if (same_shape(config, row)) return row.family;
  }
  return "custom";
}

ModelConfig config_from_json(const nlohmann::json& config_json, bool has_qk_norm_tensors) {
  if (!config_json.is_object()) throw Error("config.json: not a JSON object");
  const ConfigFields fields(config_json);
  const std::string model_type = fields.text("model_type");
  ConfigDialect dialect;
  ModelConfig config;
  if (model_type == "minimind") {
    dialect = ConfigDialect::kMiniMind;
    config.qk_norm = has_qk_norm_tensors;  // MiniMind's config has no flag: minimind-3 has the tensors, MiniMind2 not
  } else if (model_type == "qwen3" || model_type == "qwen3_moe") {
    dialect = ConfigDialect::kQwen3;
    config.qk_norm = true;
  } else if (model_type == "llama") {
    dialect = ConfigDialect::kLlama;
    config.qk_norm = false;
  } else {
    ConfigFields::fail("model_type", "is '" + model_type + "'; expected \"minimind\", \"qwen3\" or \"llama\"");
  }
  const bool minimind = dialect == ConfigDialect::kMiniMind;

  config.hidden_size = fields.integer({"hidden_size", "dim"}, std::nullopt);
  config.num_layers = fields.integer({"num_hidden_layers", "n_layers"}, std::nullopt);
  config.num_q_heads = fields.integer({"num_attention_heads", "n_heads"}, std::nullopt);
  // Without a kv head count MiniMind uses its generation's default; transformers means plain multi-head attention.
  const int default_kv_heads = minimind ? (config.qk_norm ? 4 : 2) : config.num_q_heads;
  config.num_kv_heads = fields.integer({"num_key_value_heads", "n_kv_heads"}, default_kv_heads);
  if (fields.has({"head_dim"})) {
    config.head_dim = fields.integer({"head_dim"}, std::nullopt);
  } else if (config.hidden_size % config.num_q_heads != 0) {
    ConfigFields::fail("hidden_size", "is not divisible by the number of attention heads, and head_dim is absent");
  } else {
    config.head_dim = config.hidden_size / config.num_q_heads;
  }
  const int multiple_of = fields.integer({"multiple_of"}, 64);
  // The default width is derived from these two, so they are checked before the arithmetic can overflow.
  check_range("hidden_size", config.hidden_size, 1, kMaxHiddenSize);
  check_range("multiple_of", multiple_of, 1, kMaxIntermediateSize);
  const int default_intermediate = config.qk_norm ? minimind3_intermediate_size(config.hidden_size)
                                                  : minimind2_intermediate_size(config.hidden_size, multiple_of);
  config.intermediate_size = fields.integer({"intermediate_size", "hidden_dim"}, default_intermediate);
  config.rms_norm_eps =
      static_cast<float>(fields.positive_number({"rms_norm_eps", "norm_eps"}, config.qk_norm ? 1e-6 : 1e-5));
  config.rope_theta = parse_rope_theta(fields, dialect);
  config.rope_scaling = parse_rope_scaling(fields, dialect);
  config.max_position_embeddings = fields.integer({"max_position_embeddings"}, 32768);
  config.vocab_size = fields.integer({"vocab_size"}, 6400);
  // transformers' Qwen3 and Llama configs leave tie_word_embeddings out when it is false, their default.
  config.tie_word_embeddings = fields.boolean({"tie_word_embeddings"}, minimind);
  config.bos_token_id = fields.token_id("bos_token_id", 1);
  config.eos_token_id = fields.token_id("eos_token_id", 2);

  const bool use_moe = fields.boolean({"use_moe"}, false) ||
                       (dialect == ConfigDialect::kQwen3 && fields.integer({"num_experts"}, 0, /*minimum=*/0) > 0);
  if (use_moe) {
    config.use_moe = true;
    parse_experts(fields, config);
  }
  if (fields.has({"hidden_act"}) && config_json["hidden_act"] != "silu") {
    ConfigFields::fail("hidden_act", "is " + config_json["hidden_act"].dump() + "; only silu is supported");
  }
  config.validate();
  config.family = identify_family(config);
  return config;
}

nlohmann::json config_to_json(const ModelConfig& config) {
  json out = json::object();
  // HF has no dense-plus-MoE Qwen3 class: a qk-norm MoE model is Qwen3-MoE, whose expert tensors are named like
  // MiniMind's. Nothing in transformers loads MiniMind2-MoE; it keeps the llama type plus MiniMind's MoE fields.
  if (config.qk_norm) {
    out["architectures"] = {config.use_moe ? "Qwen3MoeForCausalLM" : "Qwen3ForCausalLM"};
    out["model_type"] = config.use_moe ? "qwen3_moe" : "qwen3";
  } else {
    out["architectures"] = {"LlamaForCausalLM"};
    out["model_type"] = "llama";
  }
  out["attention_bias"] = false;
  out["hidden_act"] = "silu";
  out["hidden_size"] = config.hidden_size;
  out["num_hidden_layers"] = config.num_layers;
  out["num_attention_heads"] = config.num_q_heads;
  out["num_key_value_heads"] = config.num_kv_heads;
  out["head_dim"] = config.head_dim;
  out["intermediate_size"] = config.intermediate_size;
  out["rms_norm_eps"] = as_typed_decimal(config.rms_norm_eps);
  out["rope_theta"] = config.rope_theta;
  out["max_position_embeddings"] = config.max_position_embeddings;
  out["vocab_size"] = config.vocab_size;
  out["bos_token_id"] = config.bos_token_id;
  out["eos_token_id"] = config.eos_token_id;
  out["tie_word_embeddings"] = config.tie_word_embeddings;
  out["torch_dtype"] = "float32";
  out["use_moe"] = config.use_moe;
  if (config.use_moe) {
    out["num_experts"] = config.num_experts;
    out["num_experts_per_tok"] = config.num_experts_per_token;
    out["n_shared_experts"] = config.num_shared_experts;
    out["moe_intermediate_size"] = config.moe_intermediate_size;
    out["norm_topk_prob"] = config.norm_topk_prob;
  }
  out["inference_rope_scaling"] = config.rope_scaling.has_value();
  if (config.rope_scaling) {
    const RopeScaling& scaling = *config.rope_scaling;
    out["rope_scaling"] = {{"type", "yarn"},
                           {"rope_type", "yarn"},
                           {"factor", scaling.factor},
                           {"original_max_position_embeddings", scaling.original_max_position_embeddings},
                           {"beta_fast", scaling.beta_fast},
                           {"beta_slow", scaling.beta_slow},
                           {"attention_factor", scaling.attention_factor}};
  } else {
    out["rope_scaling"] = nullptr;
  }
  return out;
}

}  // namespace minigen
