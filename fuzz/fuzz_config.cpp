// config.json parsing (src/model/config.*), with and without qk-norm tensors. Beyond "no crash" and "only
// minigen::Error": an accepted config passes validate(), names its family as identify_family() does, and survives
// config_to_json → config_from_json unchanged (what `minigen init-random` writes is read back as written).
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "fuzz_check.h"
#include "model/config.h"

using namespace minigen;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The way model_loader.cpp reads config.json: parse, then interpret; a JSON syntax error is its own message.
  const nlohmann::json parsed = nlohmann::json::parse(fuzz::as_text(data, size), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return 0;
  for (const bool qk_norm_tensors : {false, true}) {
    ModelConfig config;
    try {
      config = config_from_json(parsed, qk_norm_tensors);
    } catch (const Error&) {
      continue;
    }
    config.validate();  // throws (and so crashes the target) if an accepted config is invalid
    fuzz::check(config.family == identify_family(config), "family");
    const ModelConfig again = config_from_json(config_to_json(config), config.qk_norm);
    fuzz::check(again == config, "config_to_json round trip");
  }
  return 0;
}
