// `minigen info`: what a model is — family, shape, parameters, and what its KV cache costs per token.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "checkpoint/model_description.h"
#include "cli/command_context.h"
#include "cli/commands.h"
#include "cli/json_output.h"

namespace minigen::cli {
namespace {

struct InfoFlags {
  ModelFlags model;
  std::string positional_model;
  bool json = false;
};

int run_info(InfoFlags flags) {
  if (!flags.positional_model.empty()) flags.model.model_path = flags.positional_model;
  const LoadedModel loaded = flags.model.load();
  if (const std::string note = adapter_note(*loaded.model); !note.empty()) std::cerr << note << "\n";
  const ModelConfig& c = loaded.model->config;
  const KvDType kv_dtype = flags.model.kv_dtype_value();
  const std::size_t per_token = c.kv_bytes_per_token(kv_dtype);
  const WeightType weights = flags.model.weight_type(*loaded.model);
  // q8/q4: the activation codes their products run with (checked here as the commands that run would check them).
  const std::optional<ActivationCodes> asked = flags.model.activation_codes(weights);
  const ActivationCodes activations = asked.value_or(default_activation_codes(weights));
  if (flags.json) {
    nlohmann::json description = model_description(loaded, kv_dtype);
    description["weight_type"] = weight_type_name(weights);  // what generate, serve, … run it as
    if (const auto codes = reported_activations(weights, activations); !codes.empty())
      description["activations"] = codes;
    std::cout << to_json_text(description) << "\n";
    return 0;
  }
  std::printf("model        %s (%s, %s)\n", loaded.path.string().c_str(), loaded.format.c_str(),
              dtype_name(loaded.stored_dtype));
  std::printf("family       %s\n", identify_family(c).c_str());
  std::printf("parameters   %zu (%.2f M)\n", c.parameter_count(), c.parameter_count() / 1e6);
  std::printf("shape        hidden %d · %d layers · %d q heads · %d kv heads · head_dim %d · ffn %d%s\n", c.hidden_size,
              c.num_layers, c.num_q_heads, c.num_kv_heads, c.head_dim,
              c.use_moe ? c.moe_intermediate_size : c.intermediate_size, c.qk_norm ? " · qk-norm" : "");
  if (c.use_moe) {
    std::printf("experts      %d routed, top-%d, %d shared\n", c.num_experts, c.num_experts_per_token,
                c.num_shared_experts);
  }
  const std::string activation_note = is_block_quantized(weights)
                                          ? " · activations " + std::string(activation_codes_name(activations)) +
                                                " in blocks of 32" + (asked ? "" : " (the default)")
                                          : "";
  std::printf("weights      %s%s%s\n", std::string(weight_type_name(weights)).c_str(),
              flags.model.weights.empty() && weights == WeightType::kF16
                  ? " (the default for a checkpoint stored in fp16: the f32 type's logits from half the bytes)"
                  : "",
              activation_note.c_str());
  for (const std::string& line : dequantized_tensor_lines(loaded, weights)) {
    std::printf("dequantized  %s\n", line.c_str());
  }
  std::printf("vocab        %d (tokenizer %d) · context %d · rope theta %g\n", c.vocab_size,
              loaded.tokenizer->vocab_size(), c.max_position_embeddings, c.rope_theta);
  const std::string scales = kv_dtype == KvDType::kInt8 ? " + 2 × " + std::to_string(c.num_layers) + " × " +
                                                              std::to_string(c.num_kv_heads) + " × 4 B of scales"
                                                        : "";
  std::printf(
      "KV cache     2 × %d layers × %d kv heads × %d × %zu B%s = %zu B per token, %zu B per 1,000 tokens (%s)\n",
      c.num_layers, c.num_kv_heads, c.head_dim, kv_dtype_bytes(kv_dtype), scales.c_str(), per_token, per_token * 1000,
      std::string(kv_dtype_name(kv_dtype)).c_str());
  return 0;
}

}  // namespace

CommandAction add_info_command(CLI::App& app) {
  auto flags = std::make_shared<InfoFlags>();
  CLI::App* command = app.add_subcommand("info", "describe a model: family, parameters, KV-cache bytes per token");
  command->add_option("model", flags->positional_model, "model directory, .pth or .gguf [default: the shipped model]");
  flags->model.add_to(*command);
  add_lora_flag(*command, flags->model.lora_path);
  command->add_flag("--json", flags->json, "print as JSON");
  return [flags] { return run_info(*flags); };
}

}  // namespace minigen::cli
