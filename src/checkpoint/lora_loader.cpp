#include "checkpoint/lora_loader.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "checkpoint/gguf_lora.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/json_parse.h"
#include "model/io/safetensors.h"
#include "model/io/torch_pth.h"

namespace minigen {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kMaxAdapterConfigBytes = 1 << 20;

// Pairs up `<module><a_suffix>` and `<module><b_suffix>` tensors; every tensor must be one of a pair, after
// `strip_prefix` (and the DataParallel / torch.compile prefixes MiniMind's save_lora also strips) is removed.
std::vector<LoraTensors> pair_tensors(TensorMap& tensors, const std::string& strip_prefix, const std::string& a_suffix,
                                      const std::string& b_suffix, const std::string& source) {
  std::map<std::string, LoraTensors> pairs;
  for (auto& [raw_name, tensor] : tensors) {
    std::string name = raw_name;
    for (const std::string& prefix : {std::string("module."), std::string("_orig_mod."), strip_prefix}) {
      if (!prefix.empty() && name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
    }
    const auto ends_with = [&](const std::string& suffix) {
      return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with(a_suffix)) {
      LoraTensors& pair = pairs[name.substr(0, name.size() - a_suffix.size())];
      pair.a = std::move(tensor);
    } else if (ends_with(b_suffix)) {
      LoraTensors& pair = pairs[name.substr(0, name.size() - b_suffix.size())];
      pair.b = std::move(tensor);
    } else {
      throw Error(source + " holds '" + raw_name + "' " + shape_string(tensor.shape) +
                  ", which is not a LoRA matrix (…" + a_suffix + " / …" + b_suffix +
                  "); a whole model is passed with -m, an adapter with --lora");
    }
  }
  std::vector<LoraTensors> result;
  for (auto& [module, pair] : pairs) {
    if (pair.a.shape.empty() || pair.b.shape.empty()) {
      throw Error(source + ": '" + module + "' has " + (pair.a.shape.empty() ? "a B but no A" : "an A but no B"));
    }
    pair.module = module;
    result.push_back(std::move(pair));
  }
  return result;
}

}  // namespace

LoraAdapter lora_from_minimind_tensors(TensorMap tensors, const ModelConfig& config, const std::string& source) {
  std::vector<LoraTensors> pairs = pair_tensors(tensors, "", ".lora.A.weight", ".lora.B.weight", source);
  return lora_from_tensors(config, std::move(pairs), 1.0f, source, "MiniMind .pth");
}

LoraAdapter lora_from_peft(const nlohmann::json& adapter_config, TensorMap tensors, const ModelConfig& config,
                           const std::string& source) {
  const std::string where = source + " (adapter_config.json)";
  if (!adapter_config.is_object()) throw Error(where + " is not a JSON object");
  const auto field = [&](const char* key) -> const nlohmann::json* {
    const auto found = adapter_config.find(key);
    return found == adapter_config.end() || found->is_null() ? nullptr : &*found;
  };
  if (const nlohmann::json* type = field("peft_type"); type && (!type->is_string() || *type != "LORA")) {
    throw Error(where + ": peft_type is " + type->dump() + "; minigen reads LORA adapters");
  }
  const nlohmann::json* r = field("r");
  if (r == nullptr || !r->is_number_integer() || r->get<int64_t>() < 1 || r->get<int64_t>() > 65536) {
    throw Error(where + ": \"r\" must be an integer from 1 to 65536");
  }
  const nlohmann::json* alpha = field("lora_alpha");
  if (alpha != nullptr && (!alpha->is_number() || !std::isfinite(alpha->get<double>()))) {
    throw Error(where + ": \"lora_alpha\" must be a number");
  }
  const nlohmann::json* bias = field("bias");
  if (bias != nullptr && (!bias->is_string() || *bias != "none")) {
    throw Error(where + ": bias is " + bias->dump() + "; minigen's models have no biases, so it reads \"none\"");
  }
  for (const char* unsupported : {"fan_in_fan_out", "use_dora"}) {
    const nlohmann::json* flag = field(unsupported);
    if (flag != nullptr && (!flag->is_boolean() || flag->get<bool>())) {
      throw Error(where + ": " + unsupported + " is " + flag->dump() + "; minigen reads adapters without it");
    }
  }
  for (const char* pattern : {"rank_pattern", "alpha_pattern"}) {
    const nlohmann::json* map = field(pattern);
    if (map != nullptr && !(map->is_object() && map->empty())) {
      throw Error(where + ": " + pattern + " gives some modules their own rank or alpha; minigen reads one r and " +
                  "one lora_alpha for every module");
    }
  }
  const nlohmann::json* rslora = field("use_rslora");
  const bool use_rslora = rslora != nullptr && rslora->is_boolean() && rslora->get<bool>();
  const double rank = static_cast<double>(r->get<int64_t>());
  const double alpha_value = alpha != nullptr ? alpha->get<double>() : 8.0;  // PEFT's default lora_alpha
  const float scale = static_cast<float>(use_rslora ? alpha_value / std::sqrt(rank) : alpha_value / rank);

  std::vector<LoraTensors> pairs =
      pair_tensors(tensors, "base_model.model.", ".lora_A.weight", ".lora_B.weight", source);
  for (const LoraTensors& pair : pairs) {
    if (pair.a.shape.size() == 2 && pair.a.shape[0] != r->get<int64_t>()) {
      throw Error(source + ": '" + pair.module + "' has rank " + std::to_string(pair.a.shape[0]) +
                  " but adapter_config.json says r = " + std::to_string(r->get<int64_t>()));
    }
  }
  LoraAdapter adapter = lora_from_tensors(config, std::move(pairs), scale, source, "PEFT");
  adapter.alpha = static_cast<float>(alpha_value);
  return adapter;
}

std::shared_ptr<const LoraAdapter> load_lora_adapter(const fs::path& path, const ModelConfig& config) {
  std::error_code error;
  if (!fs::exists(path, error)) throw Error("LoRA adapter not found: " + path.string());
  LoraAdapter adapter;
  const bool peft_folder = fs::is_directory(path, error);
  const fs::path folder = peft_folder ? path : path.parent_path();
  if (peft_folder || (path.extension() == ".safetensors" && fs::exists(folder / "adapter_config.json", error))) {
    const fs::path config_path = folder / "adapter_config.json";
    const fs::path tensors_path = peft_folder ? folder / "adapter_model.safetensors" : path;
    if (!fs::exists(config_path, error)) {
      throw Error(path.string() +
                  " is a folder without adapter_config.json: a PEFT adapter folder holds "
                  "adapter_config.json and adapter_model.safetensors");
    }
    if (!fs::exists(tensors_path, error)) {
      throw Error(folder.string() +
                  " has no adapter_model.safetensors (minigen reads PEFT's safetensors, not "
                  "adapter_model.bin)");
    }
    const std::string text = read_whole_file(config_path, kMaxAdapterConfigBytes, "adapter_config.json");
    nlohmann::json adapter_config;
    try {
      adapter_config = parse_untrusted_json<nlohmann::json>(text);
    } catch (const Error& parse_error) {
      throw Error(config_path.string() + " " + parse_error.what());
    }
    // What the file claims first (names, shapes, dtypes), the values only once they fit the model: a tensor that
    // would be refused is never copied into memory.
    lora_from_peft(adapter_config, read_safetensors(tensors_path, {.shapes_only = true}), config, folder.string());
    adapter = lora_from_peft(adapter_config, read_safetensors(tensors_path), config, folder.string());
    adapter.name = (peft_folder ? path : folder).filename().string();
  } else if (path.extension() == ".gguf") {
    const MappedFile file(path);
    adapter = lora_from_gguf(read_gguf(file.bytes(), path.string()), config, path.string());
    adapter.name = path.stem().string();
  } else {
    lora_from_minimind_tensors(read_torch_pth(path, {.shapes_only = true}), config, path.string());  // as above
    adapter = lora_from_minimind_tensors(read_torch_pth(path), config, path.string());
    adapter.name = path.stem().string();
  }
  return std::make_shared<const LoraAdapter>(std::move(adapter));
}

}  // namespace minigen
