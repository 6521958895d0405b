#pragma once
// A model's shape as plain data, filled from config.json, from a family name, or inferred from tensor shapes.
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/tensor.h"
#include "ops/kv_block.h"

namespace minigen {

// The range (above, at_most] a floating-point hyper-parameter must lie in (NaN lies in none). validate() checks each;
// the GGUF loader checks its own key against the same range, so that its message names the key. Out of range, the
// value loads but turns the first forward pass into NaN (YaRN takes log(beta) and divides by log(theta); q and k
// are scaled by the attention factor squared), so it is refused at load.
struct NumberRange {
  double above;
  double at_most;
  bool contains(double value) const { return value > above && value <= at_most; }
  std::string text() const;  // "(0, 1]"
};
inline constexpr double kLargestFloat = 3.4028234663852886e38;  // FLT_MAX: RoPE computes in float
inline constexpr NumberRange kRmsNormEpsRange{0, 1};
inline constexpr NumberRange kRopeThetaRange{1, kLargestFloat};
inline constexpr NumberRange kRopeScalingFactorRange{0, kLargestFloat};
inline constexpr NumberRange kYarnBetaRange{0, kLargestFloat};
// Real models use about 1 (HF's default 0.1·ln(factor) + 1 is 2.4 for a factor of a million).
inline constexpr NumberRange kAttentionFactorRange{0, 10};

// "nan", "1e-06", "inf": how messages show a hyper-parameter.
std::string number_text(double value);

// YaRN rope scaling as minimind-3 configures it (off unless the config asks for it).
struct RopeScaling {
  double factor = 16.0;
  int original_max_position_embeddings = 2048;
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  double attention_factor = 1.0;

  bool operator==(const RopeScaling&) const = default;
};

struct ModelConfig {
  std::string family;  // "minimind3", "minimind3-moe", "minimind2", "minimind2-small", "minimind2-moe", "tiny", or
                       // "custom" when the shape matches no table row
  int vocab_size = 6400;
  int hidden_size = 0;
  int num_layers = 0;
  int num_q_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int intermediate_size = 0;  // dense MLP width
  bool qk_norm = false;       // minimind-3 and tiny: RMSNorm over head_dim on q and k before RoPE
  float rms_norm_eps = 1e-6f;
  double rope_theta = 1e6;
  int max_position_embeddings = 32768;
  bool tie_word_embeddings = true;
  std::optional<RopeScaling> rope_scaling;

  // Mixture of experts (use_moe false: all zero).
  bool use_moe = false;
  int num_experts = 0;            // routed experts
  int num_experts_per_token = 0;  // top-k of the router
  int num_shared_experts = 0;     // always-on experts added to the routed output (MiniMind2-MoE: 1)
  int moe_intermediate_size = 0;
  bool norm_topk_prob = true;

  int bos_token_id = 1;
  int eos_token_id = 2;

  int q_width() const { return num_q_heads * head_dim; }
  int kv_width() const { return num_kv_heads * head_dim; }
  KvLayout kv_layout(KvDType dtype = KvDType::kF32) const { return {num_layers, num_kv_heads, head_dim, dtype}; }
  // K and V bytes for one cached token over all layers: 2 · layers · kv_heads · head_dim · bytes_per_element
  // (+ int8's scales, ops/kv_block.h).
  std::size_t kv_bytes_per_token(KvDType dtype = KvDType::kF32) const;
  std::size_t parameter_count() const;  // embedding counted once when tied

  // Throws minigen::Error naming the first inconsistent field (e.g. hidden not divisible, head_dim odd).
  void validate() const;

  bool operator==(const ModelConfig&) const = default;
};

// Names accepted by --family.
std::vector<std::string> family_names();
// The spec's table row for a family; throws minigen::Error listing the known names for an unknown one.
ModelConfig config_for_family(std::string_view family);

// config.json of model_type "minimind" (minimind-3 and MiniMind2 field spellings), "qwen3" or "llama".
// `has_qk_norm_tensors` comes from the weight file, because MiniMind's own config has no qk-norm flag.
ModelConfig config_from_json(const nlohmann::json& config_json, bool has_qk_norm_tensors);
// A config.json carrying MiniMind's field names plus what HF transformers needs to load it as
// Qwen3ForCausalLM (qk-norm models) or LlamaForCausalLM (without qk-norm).
nlohmann::json config_to_json(const ModelConfig& config);
// A .pth carries no config: layers from the key names, hidden from the embedding, kv width from k_proj,
// ffn from gate_proj, experts from the expert keys; the query head count cannot be seen, so it is given.
ModelConfig infer_config_from_tensors(const TensorMap& tensors, int num_q_heads);
// Guesses the family name for a config (for `minigen info`); "custom" if no table row matches.
std::string identify_family(const ModelConfig& config);

}  // namespace minigen
