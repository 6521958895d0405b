#include "checkpoint/model_settings.h"

#include "core/error.h"
#include "ops/thread_pool.h"

namespace minigen {

std::filesystem::path default_model_path() { return minigen_home() / "models" / "minigen-tiny-sft"; }

LoadedModel ModelSettings::load() const {
  std::filesystem::path path = model_path;
  if (path.empty()) {
    path = default_model_path();
    if (!std::filesystem::exists(path)) {
      throw Error("no model given and the default model " + path.string() +
                  " does not exist yet; pass -m DIR, e.g. a random model made with "
                  "`minigen init-random --family tiny --out DIR`");
    }
  }
  LoadOptions options;
  options.num_q_heads = num_q_heads;
  options.yarn = yarn;
  options.tokenizer_path = tokenizer_option();
  return load_model(path, options);
}

std::optional<std::filesystem::path> ModelSettings::tokenizer_option() const {
  if (tokenizer_path.empty()) return std::nullopt;
  return std::filesystem::path(tokenizer_path);
}

WeightType ModelSettings::weight_type(const Model& model) const {
  const WeightType stored = model.weights.stored_quantization();
  if (weights.empty()) return stored;
  const WeightType wanted = parse_weight_type(weights);
  if (stored != WeightType::kF32 && wanted != stored) {
    const std::string name(weight_type_name(stored));
    throw Error("this model is stored as " + name + ": it runs only with --weights " + name +
                " (quantization cannot be undone; quantize the original model for another type)");
  }
  return wanted;
}

KvDType ModelSettings::kv_dtype_value() const { return parse_kv_dtype(kv_dtype); }

int ModelSettings::thread_count() const { return threads > 0 ? threads : ThreadPool::default_thread_count(); }

}  // namespace minigen
