#pragma once
// Random LoRA adapters for tests: the module paths a model has, and A/B tensors of a given rank on any of them.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/lora_adapter.h"

namespace minigen::testing {

// Every module path of the model that an adapter may wrap, in layer order: the attention projections, and the
// dense MLP's or (MoE) every routed and shared expert's gate/up/down.
inline std::vector<std::string> adaptable_modules(const ModelConfig& config, bool attention_only = false) {
  std::vector<std::string> modules;
  for (int l = 0; l < config.num_layers; ++l) {
    const std::string layer = "model.layers." + std::to_string(l) + ".";
    for (const char* name : {"q_proj", "k_proj", "v_proj", "o_proj"}) modules.push_back(layer + "self_attn." + name);
    if (attention_only) continue;
    std::vector<std::string> blocks;
    if (!config.use_moe) blocks.push_back(layer + "mlp.");
    for (int e = 0; config.use_moe && e < config.num_experts; ++e) {
      blocks.push_back(layer + "mlp.experts." + std::to_string(e) + ".");
    }
    for (int s = 0; config.use_moe && s < config.num_shared_experts; ++s) {
      blocks.push_back(layer + "mlp.shared_experts." + std::to_string(s) + ".");
    }
    for (const std::string& block : blocks) {
      for (const char* name : {"gate_proj", "up_proj", "down_proj"}) modules.push_back(block + name);
    }
  }
  return modules;
}

// [out, in] of a module path, from the config (the same widths the forward pass uses).
inline std::pair<int, int> module_shape(const ModelConfig& config, const std::string& module) {
  const bool expert = module.find("experts.") != std::string::npos;
  const int intermediate = expert ? config.moe_intermediate_size : config.intermediate_size;
  const auto ends = [&](const char* suffix) { return module.ends_with(suffix); };
  if (ends("q_proj")) return {config.q_width(), config.hidden_size};
  if (ends("k_proj") || ends("v_proj")) return {config.kv_width(), config.hidden_size};
  if (ends("o_proj")) return {config.hidden_size, config.q_width()};
  if (ends("down_proj")) return {config.hidden_size, intermediate};
  return {intermediate, config.hidden_size};
}

// A ~ N(0, 0.02²) as MiniMind initialises it; B ~ N(0, b_std²) (MiniMind starts B at 0, training moves it).
inline std::vector<LoraTensors> random_lora_tensors(const ModelConfig& config, const std::vector<std::string>& modules,
                                                    int rank, uint64_t seed, float b_std = 0.05f) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<LoraTensors> result;
  for (const std::string& module : modules) {
    const auto [out, in] = module_shape(config, module);
    LoraTensors pair;
    pair.module = module;
    pair.a.shape = {rank, in};
    pair.b.shape = {out, rank};
    for (int i = 0; i < rank * in; ++i) pair.a.values.push_back(0.02f * normal(generator));
    for (int i = 0; i < out * rank; ++i) pair.b.values.push_back(b_std * normal(generator));
    result.push_back(std::move(pair));
  }
  return result;
}

inline LoraAdapter random_lora(const ModelConfig& config, const std::vector<std::string>& modules, int rank,
                               uint64_t seed, float b_std = 0.05f, float scale = 1.0f) {
  return lora_from_tensors(config, random_lora_tensors(config, modules, rank, seed, b_std), scale, "random", "test");
}

}  // namespace minigen::testing
