#include "checkpoint/model_description.h"

#include <map>
#include <utility>

#include "model/packed_weights.h"

namespace minigen {
namespace {

nlohmann::json dequantized_tensors(const LoadedModel& loaded) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const GgufDequantizedTensor& tensor : loaded.gguf_dequantized) {
    tensors.push_back({{"tensor", tensor.name}, {"gguf_type", gguf_type_name(tensor.type)}, {"loaded_as", "f32"}});
  }
  return tensors;
}

}  // namespace

nlohmann::json model_description(const LoadedModel& loaded) {
  const ModelConfig& c = loaded.model->config;
  return {
      {"path", loaded.path.string()},
      {"format", loaded.format},
      {"stored_dtype", dtype_name(loaded.stored_dtype)},
      {"family", identify_family(c)},
      {"parameters", c.parameter_count()},
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.hidden_size},
      {"layers", c.num_layers},
      {"q_heads", c.num_q_heads},
      {"kv_heads", c.num_kv_heads},
      {"head_dim", c.head_dim},
      {"intermediate_size", c.use_moe ? c.moe_intermediate_size : c.intermediate_size},
      {"qk_norm", c.qk_norm},
      {"moe", c.use_moe ? nlohmann::json{{"experts", c.num_experts},
                                         {"experts_per_token", c.num_experts_per_token},
                                         {"shared_experts", c.num_shared_experts}}
                        : nlohmann::json(nullptr)},
      {"context", c.max_position_embeddings},
      {"rope_theta", c.rope_theta},
      {"yarn", c.rope_scaling.has_value()},
      {"tokenizer_vocab", loaded.tokenizer->vocab_size()},
      {"dequantized_tensors", dequantized_tensors(loaded)},
  };
}

nlohmann::json model_description(const LoadedModel& loaded, KvDType kv_dtype) {
  nlohmann::json description = model_description(loaded);
  const std::size_t per_token = loaded.model->config.kv_bytes_per_token(kv_dtype);
  description["kv_cache_dtype"] = kv_dtype_name(kv_dtype);
  description["kv_bytes_per_token"] = per_token;
  description["kv_bytes_per_1000_tokens"] = per_token * 1000;
  return description;
}

std::vector<std::string> dequantized_tensor_lines(const LoadedModel& loaded, WeightType run_type) {
  // Grouped by (stored type, type it runs as), each group's names in file order.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> groups;
  for (const GgufDequantizedTensor& tensor : loaded.gguf_dequantized) {
    const bool output_projection = tensor.name == "token_embd.weight" || tensor.name == "output.weight";
    const WeightType runs_as = output_projection ? output_projection_type(run_type) : run_type;
    groups[{gguf_type_name(tensor.type), std::string(weight_type_name(runs_as))}].push_back(tensor.name);
  }
  constexpr std::size_t kNamesShown = 4;
  std::vector<std::string> lines;
  for (const auto& [types, names] : groups) {
    std::string line = types.first + " → f32 values at load, run as " + types.second + ": ";
    if (names.size() > 1) line += std::to_string(names.size()) + " tensors, ";
    for (std::size_t i = 0; i < names.size() && i < kNamesShown; ++i) line += (i > 0 ? ", " : "") + names[i];
    if (names.size() > kNamesShown) line += ", …";
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace minigen
