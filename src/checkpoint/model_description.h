#pragma once
// A loaded model described as JSON: where it came from and its shape, for `minigen info --json`, the lab's
// report.json and the Python module's Model.config.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/model_loader.h"
#include "ops/kv_dtype.h"
#include "ops/weight_type.h"

namespace minigen {

// path, format, stored dtype, family, parameters, every shape field, moe (or null), context, rope theta, yarn,
// tokenizer vocabulary, and a GGUF's dequantized tensors ([{"tensor", "gguf_type", "loaded_as": "f32"}], else []).
nlohmann::json model_description(const LoadedModel& loaded);
// The same, plus what its KV cache costs in `kv_dtype`: kv_cache_dtype, kv_bytes_per_token, kv_bytes_per_1000_tokens
// (`minigen info --json`'s object).
nlohmann::json model_description(const LoadedModel& loaded, KvDType kv_dtype);

// A GGUF's dequantized tensors for `minigen info`, one line per stored type: "Q6_K → f32 values at load, run as q8:
// token_embd.weight". A tensor runs in the model's `run_type`, the embedding and output projection in the output
// projection's type (q8 in a q4 model). Empty for other models.
std::vector<std::string> dequantized_tensor_lines(const LoadedModel& loaded, WeightType run_type);

}  // namespace minigen
