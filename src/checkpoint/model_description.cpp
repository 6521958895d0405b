#include "checkpoint/model_description.h"

namespace minigen {

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

}  // namespace minigen
