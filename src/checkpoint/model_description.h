#pragma once
// A loaded model described as JSON: where it came from and its shape, for `minigen info --json`, the lab's
// report.json and the Python module's Model.config.
#include <nlohmann/json.hpp>

#include "checkpoint/model_loader.h"
#include "ops/kv_dtype.h"

namespace minigen {

// path, format, stored dtype, family, parameters, every shape field, moe (or null), context, rope theta, yarn,
// tokenizer vocabulary.
nlohmann::json model_description(const LoadedModel& loaded);
// The same, plus what its KV cache costs in `kv_dtype`: kv_cache_dtype, kv_bytes_per_token, kv_bytes_per_1000_tokens
// (`minigen info --json`'s object).
nlohmann::json model_description(const LoadedModel& loaded, KvDType kv_dtype);

}  // namespace minigen
