#pragma once
// A loaded model described as JSON: where it came from and its shape, for `minigen info --json` and the lab's
// report.json.
#include <nlohmann/json.hpp>

#include "checkpoint/model_loader.h"

namespace minigen {

// path, format, stored dtype, family, parameters, every shape field, moe (or null), context, rope theta, yarn,
// tokenizer vocabulary.
nlohmann::json model_description(const LoadedModel& loaded);

}  // namespace minigen
