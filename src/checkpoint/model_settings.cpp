#include "checkpoint/model_settings.h"

#include <algorithm>

#include "checkpoint/lora_loader.h"
#include "core/error.h"
#include "core/nearest_name.h"
#include "core/translated_error.h"
#include "ops/thread_pool.h"

namespace minigen {

std::filesystem::path default_model_path() { return minigen_home() / "models" / "minigen-tiny-sft"; }

std::vector<std::string> shipped_model_names() {
  std::vector<std::string> names;
  std::error_code error;
  std::filesystem::path models;
  try {
    models = minigen_home() / "models";
  } catch (const Error&) {
    return names;  // no shipped files: nothing to offer by name
  }
  for (const auto& entry : std::filesystem::directory_iterator(models, error)) {
    if (std::filesystem::exists(entry.path() / "config.json", error)) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::filesystem::path resolve_model_path(const std::string& given) {
  namespace fs = std::filesystem;
  if (given.empty()) {
    const fs::path path = default_model_path();
    if (!fs::exists(path)) {
      throw TranslatedError("no model given and the default model " + path.string() +
                                " does not exist yet; pass -m DIR, e.g. a random model made with "
                                "`minigen init-random --family tiny --out DIR`",
                            "没有给出模型，默认模型 " + path.string() +
                                " 还不存在；请用 -m DIR 指定，例如用 `minigen init-random --family tiny --out DIR` "
                                "生成的随机模型");
    }
    return path;
  }
  const fs::path path(given);
  std::error_code error;
  if (fs::exists(path, error)) return path;
  if (const fs::path shipped_tree = resolve_user_file(given); shipped_tree != path) return shipped_tree;
  const std::vector<std::string> shipped = shipped_model_names();
  const bool bare_name = given.find('/') == std::string::npos;
  if (bare_name && std::find(shipped.begin(), shipped.end(), given) != shipped.end()) {
    return minigen_home() / "models" / given;
  }
  std::string message = "model not found: " + given;
  std::string chinese = "找不到模型：" + given;
  if (bare_name && !shipped.empty()) {
    std::string names;
    for (const std::string& name : shipped) names += (names.empty() ? "" : ", ") + name;
    const std::optional<std::string> nearest = nearest_name(given, shipped);
    message += nearest ? " (did you mean the shipped model '" + *nearest + "'?)"
                       : " (not a file or folder here, nor a shipped model: " + names + ")";
    std::string names_zh;
    for (const std::string& name : shipped) names_zh += (names_zh.empty() ? "" : "、") + name;
    chinese += nearest ? "（是指自带的模型 “" + *nearest + "” 吗？）"
                       : "（这里没有这个文件或文件夹，它也不是自带的模型：" + names_zh + "）";
  }
  throw TranslatedError(message, chinese);
}

std::filesystem::path resolve_user_file(const std::string& given) {
  namespace fs = std::filesystem;
  const fs::path path(given);
  std::error_code error;
  if (given.empty() || path.is_absolute() || fs::exists(path, error)) return path;
  fs::path home;
  try {
    home = minigen_home();
  } catch (const Error&) {
    return path;  // no shipped files to look in
  }
  const fs::path shipped = home / path;
  return fs::exists(shipped, error) ? shipped : path;
}

LoadedModel ModelSettings::load() const {
  const std::filesystem::path path = resolve_model_path(model_path);
  LoadOptions options;
  options.num_q_heads = num_q_heads;
  options.yarn = yarn;
  options.tokenizer_path = tokenizer_option();
  LoadedModel loaded = load_model(path, options);
  if (!lora_path.empty()) loaded.model->adapter = load_lora_adapter(lora_path, loaded.model->config);
  return loaded;
}

std::optional<std::filesystem::path> ModelSettings::tokenizer_option() const {
  if (tokenizer_path.empty()) return std::nullopt;
  return resolve_user_file(tokenizer_path);
}

WeightType ModelSettings::weight_type(const Model& model) const {
  const WeightType stored = model.weights.stored_quantization();
  if (weights.empty()) {
    // An fp16 checkpoint runs as f16 by default: the same logits as f32, bit for bit, from half the bytes.
    if (stored == WeightType::kF32 && model.weights.matrices_stored_in_f16()) return WeightType::kF16;
    return stored;
  }
  const WeightType wanted = parse_weight_type(weights);
  if (stored != WeightType::kF32 && wanted != stored) {
    const std::string name(weight_type_name(stored));
    throw Error("this model is stored as " + name + ": it runs only with --weights " + name +
                " (quantization cannot be undone; quantize the original model for another type)");
  }
  return wanted;
}

KvDType ModelSettings::kv_dtype_value() const { return parse_kv_dtype(kv_dtype); }

std::optional<ActivationCodes> ModelSettings::activation_codes(WeightType type) const {
  if (activations.empty()) return std::nullopt;
  const ActivationCodes codes = parse_activation_codes(activations);
  if (!is_block_quantized(type)) {
    throw Error("--activations " + activations + " needs --weights q8 or q4 (" + std::string(weight_type_name(type)) +
                " products take fp32 activations)");
  }
  if (type == WeightType::kQ4 && codes != ActivationCodes::kInt8) {
    throw Error("--activations " + activations +
                ": q4 weights take int8 activations only (their kernels multiply "
                "bytes; llama.cpp's Q4_0 does the same)");
  }
  return codes;
}

int ModelSettings::thread_count() const { return threads > 0 ? threads : ThreadPool::default_thread_count(); }

}  // namespace minigen
