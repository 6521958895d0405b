#include "checkpoint/model_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "checkpoint/gguf_model.h"
#include "checkpoint/gguf_tokenizer.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/json_parse.h"
#include "model/io/gguf_reader.h"
#include "model/io/safetensors.h"
#include "model/io/torch_pth.h"

namespace minigen {
namespace fs = std::filesystem;
namespace {

nlohmann::json read_json_file(const fs::path& path) {
  const std::string text = read_whole_file(path, kMaxConfigFileBytes, "config.json");
  try {
    return parse_untrusted_json<nlohmann::json>(text);
  } catch (const Error& error) {
    throw Error(path.string() + " " + error.what());
  }
}

bool has_qk_norm_tensors(const TensorMap& tensors) {
  return tensors.count("model.layers.0.self_attn.q_norm.weight") != 0;
}

DType dominant_dtype(const TensorMap& tensors) {
  return tensors.empty() ? DType::kF32 : tensors.begin()->second.stored_dtype;
}

// A directory given as a model without config.json: what it holds instead and what to pass. MiniMind's trainer
// writes its checkpoints to out/ (full_sft_512.pth, pretrain_768.pth, …) and keeps the tokenizer in model/.
std::string not_a_model_directory(const fs::path& directory) {
  std::vector<std::string> checkpoints;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    const fs::path& file = entry.path();
    if (file.extension() == ".pth" || file.extension() == ".pt" || file.extension() == ".gguf") {
      checkpoints.push_back(file.filename().string());
    }
  }
  std::sort(checkpoints.begin(), checkpoints.end());
  const std::string name = directory.string();
  if (!checkpoints.empty()) {
    std::string list;
    for (const std::string& file : checkpoints) list += (list.empty() ? "" : ", ") + file;
    return "no config.json in " + name + ", but it holds " + std::to_string(checkpoints.size()) + " checkpoint" +
           (checkpoints.size() == 1 ? "" : "s") + ": " + list + "; pass one as the model, e.g. -m " +
           (directory / checkpoints.front()).string() +
           " --tokenizer DIR (the folder with tokenizer.json, e.g. MiniMind's model/)";
  }
  if (fs::exists(directory / "tokenizer.json")) {
    return "no config.json in " + name +
           ": it holds a tokenizer but no model weights (MiniMind's model/ folder?); pass it as --tokenizer " + name +
           " and the checkpoint as -m, e.g. -m out/full_sft_512.pth (MiniMind's trainer writes them to out/)";
  }
  return "no config.json in " + name +
         ": a model is a directory with config.json and model.safetensors (or pytorch_model.bin), or a .pth, "
         ".safetensors or .gguf file";
}

// The weights of an HF directory: model.safetensors or pytorch_model.bin (transformers' save_pretrained with
// safe_serialization=False, which MiniMind's SGLang rollout engine uses: a torch.save zip, as a .pth is).
// With both, the newer one: save_pretrained(safe_serialization=False) into a folder that held a model.safetensors
// leaves the old file there, and serving it would quietly undo an RL trainer's update.
fs::path directory_weights_file(const fs::path& directory) {
  const fs::path safetensors = directory / "model.safetensors";
  const fs::path torch_zip = directory / "pytorch_model.bin";
  std::error_code error;
  const bool has_safetensors = fs::exists(safetensors, error);
  const bool has_torch_zip = fs::exists(torch_zip, error);
  if (has_safetensors && has_torch_zip) {
    return fs::last_write_time(torch_zip, error) > fs::last_write_time(safetensors, error) ? torch_zip : safetensors;
  }
  if (has_safetensors) return safetensors;
  if (has_torch_zip) return torch_zip;
  for (const char* index : {"model.safetensors.index.json", "pytorch_model.bin.index.json"}) {
    if (fs::exists(directory / index)) {
      throw Error(directory.string() + " holds a sharded checkpoint (" + index +
                  "); minigen reads one model.safetensors or pytorch_model.bin");
    }
  }
  throw Error("no model.safetensors or pytorch_model.bin in " + directory.string());
}

std::unique_ptr<const Tokenizer> tokenizer_of_gguf(const GgufTokenizerFiles& files, const fs::path& path) {
  try {
    return std::make_unique<const Tokenizer>(
        Tokenizer::from_json_text(files.tokenizer_json, files.tokenizer_config_json));
  } catch (const Error& error) {
    throw Error(path.string() + ": the GGUF's tokenizer: " + error.what());
  }
}

}  // namespace

fs::path tokenizer_json_path(const fs::path& path) {
  if (fs::is_directory(path)) return path / "tokenizer.json";
  // tokenizer_config.json is always beside tokenizer.json: pointing at either file means that folder.
  if (path.filename() == "tokenizer_config.json") return path.parent_path() / "tokenizer.json";
  return path;
}

std::unique_ptr<const Tokenizer> load_tokenizer(const fs::path& path) {
  fs::path tokenizer_json = tokenizer_json_path(path);
  if (!fs::exists(tokenizer_json)) throw Error("no tokenizer found at " + tokenizer_json.string());
  std::optional<fs::path> tokenizer_config;
  const fs::path config_path = tokenizer_json.parent_path() / "tokenizer_config.json";
  if (fs::exists(config_path)) tokenizer_config = config_path;
  return std::make_unique<const Tokenizer>(Tokenizer::from_files(tokenizer_json, tokenizer_config));
}

std::unique_ptr<const Tokenizer> load_model_tokenizer(const fs::path& model) {
  if (!fs::exists(model)) throw Error("model not found: " + model.string());
  if (model.extension() == ".gguf") {
    const MappedFile file(model);
    return tokenizer_of_gguf(gguf_tokenizer_files(read_gguf(file.bytes(), model.string()), model.string()), model);
  }
  return load_tokenizer(fs::is_directory(model) ? model : model.parent_path());
}

fs::path minigen_home() {
  if (const char* home = std::getenv("MINIGEN_HOME"); home != nullptr && *home != '\0') return fs::path(home);
  // Beside the binary in the build tree (build/share/minigen → the source tree), above it once installed
  // (PREFIX/bin/minigen → PREFIX/share/minigen). The same lookup serves the tests, which run from the build tree.
  // The Python module is code in python3's process, so /proc/self/exe is python3: it looks from its own file
  // instead (build/python/minigen*.so → build/share/minigen; PREFIX/lib/python3.X/dist-packages/minigen*.so →
  // PREFIX/share/minigen), found with dladdr on this very function.
  std::error_code error;
  const fs::path binary_directory = fs::read_symlink("/proc/self/exe", error).parent_path();
  std::vector<fs::path> candidates = {binary_directory / "share" / "minigen",
                                      binary_directory.parent_path() / "share" / "minigen"};
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&minigen_home), &info) != 0 && info.dli_fname != nullptr &&
      info.dli_fname[0] == '/') {
    fs::path code_file = fs::weakly_canonical(fs::path(info.dli_fname), error);
    if (code_file.empty()) code_file = info.dli_fname;
    for (fs::path directory = code_file.parent_path(); directory.has_relative_path();
         directory = directory.parent_path()) {
      candidates.push_back(directory / "share" / "minigen");
    }
  }
  for (const fs::path& candidate : candidates) {
    if (fs::is_directory(candidate / "models", error)) return candidate;
  }
  throw Error("cannot find minigen's shipped files (models, tokenizers) in share/minigen beside or above " +
              binary_directory.string() + "; set MINIGEN_HOME to the folder that holds them");
}

namespace {

// A torch zip (MiniMind's .pth, transformers' pytorch_model.bin) or a safetensors file.
TensorMap read_weights_file(const fs::path& file, const TensorReadOptions& read) {
  const std::string extension = file.extension().string();
  if (extension == ".bin" || extension == ".pth" || extension == ".pt") return read_torch_pth(file, read);
  return read_safetensors(file, read);
}

struct CheckedTensors {
  ModelConfig config;
  TensorMap tensors;
};

// The tensors of `file`, read only after what the file claims — every name, shape and dtype, read without the
// values — fits the model `config_of` makes of those claims: a tensor that would be refused (an unused 2 GB one, a
// matrix of the wrong shape) is never copied into memory, so a refused file costs its header, not its size.
CheckedTensors read_checked_tensors(const fs::path& file, const TensorReadOptions& read,
                                    const std::function<ModelConfig(const TensorMap&)>& config_of) {
  TensorReadOptions claims_only = read;
  claims_only.shapes_only = true;
  TensorMap claimed = read_weights_file(file, claims_only);
  weights_from_tensors(config_of(claimed), std::move(claimed));  // throws what the real read would, before it
  TensorMap tensors = read_weights_file(file, read);
  // Made again from the values: a .pth's tied embedding is inferred from them (lm_head equal to embed_tokens).
  ModelConfig config = config_of(tensors);
  return {std::move(config), std::move(tensors)};
}

}  // namespace

LoadedModel load_model(const fs::path& path, const LoadOptions& options) {
  if (!fs::exists(path)) throw Error("model not found: " + path.string());
  LoadedModel loaded;
  loaded.path = path;
  ModelConfig config;
  TensorMap tensors;
  fs::path tokenizer_location;
  std::optional<GgufTokenizerFiles> gguf_tokenizer;  // a GGUF carries its tokenizer
  if (fs::is_directory(path) || path.extension() == ".safetensors") {
    const fs::path directory = fs::is_directory(path) ? path : path.parent_path();
    if (!fs::exists(directory / "config.json")) throw Error(not_a_model_directory(directory));
    const nlohmann::json config_json = read_json_file(directory / "config.json");
    const fs::path weights_file = fs::is_directory(path) ? directory_weights_file(directory) : path;
    loaded.format = weights_file.extension() == ".bin" ? "pytorch_model.bin" : "safetensors";
    CheckedTensors checked = read_checked_tensors(weights_file, {}, [&](const TensorMap& claimed) {
      return config_from_json(config_json, has_qk_norm_tensors(claimed));
    });
    config = std::move(checked.config);
    tensors = std::move(checked.tensors);
    tokenizer_location = directory;
  } else if (path.extension() == ".pth" || path.extension() == ".pt") {
    CheckedTensors checked = read_checked_tensors(path, {}, [&](const TensorMap& claimed) {
      ModelConfig inferred = infer_config_from_tensors(claimed, options.num_q_heads);
      if (options.yarn) inferred.rope_scaling = RopeScaling{};  // minimind-3's YaRN settings
      return inferred;
    });
    config = std::move(checked.config);
    tensors = std::move(checked.tensors);
    loaded.format = "pth";
    tokenizer_location = path.parent_path();
  } else if (path.extension() == ".gguf") {
    const MappedFile file(path);
    const GgufFile gguf = read_gguf(file.bytes(), path.string());
    GgufModel model = gguf_model(gguf, path.string());
    config = std::move(model.config);
    tensors = std::move(model.tensors);
    loaded.gguf_dequantized = std::move(model.dequantized);
    if (!options.tokenizer_path) gguf_tokenizer = gguf_tokenizer_files(gguf, path.string());
    loaded.format = "gguf";
  } else {
    throw Error(path.string() + " is neither a model directory, a .safetensors, .gguf nor .pth file");
  }
  if (options.tokenizer_path) tokenizer_location = *options.tokenizer_path;
  config.validate();
  loaded.stored_dtype = dominant_dtype(tensors);
  if (loaded.format == "pth" && !options.tokenizer_path && !fs::exists(tokenizer_location / "tokenizer.json")) {
    // MiniMind saves checkpoints to out/ and keeps the tokenizer in model/: say where to point.
    throw Error("no tokenizer.json beside " + path.string() +
                "; a .pth holds no tokenizer: pass --tokenizer DIR (the folder with tokenizer.json and "
                "tokenizer_config.json, e.g. MiniMind's model/)");
  }
  if (gguf_tokenizer) {
    loaded.tokenizer = tokenizer_of_gguf(*gguf_tokenizer, path);
  } else {
    loaded.tokenizer = load_tokenizer(tokenizer_location);
  }
  if (loaded.tokenizer->vocab_size() > config.vocab_size) {
    throw Error("the tokenizer has " + std::to_string(loaded.tokenizer->vocab_size()) + " tokens but the model only " +
                std::to_string(config.vocab_size));
  }
  ModelWeights weights = weights_from_tensors(config, std::move(tensors));
  loaded.model = std::make_unique<Model>(std::move(config), std::move(weights));
  return loaded;
}

namespace {

// The first field of config.json that would change a served model's numbers although every tensor's shape fits
// (how q_proj's rows split into heads, RoPE, the norms' epsilon, the stop token), or empty.
std::string numerics_difference(const ModelConfig& served, const ModelConfig& stated) {
  const std::pair<const char*, bool> differences[] = {
      {"num_attention_heads", served.num_q_heads != stated.num_q_heads},
      {"num_key_value_heads", served.num_kv_heads != stated.num_kv_heads},
      {"head_dim", served.head_dim != stated.head_dim},
      {"rope_theta", served.rope_theta != stated.rope_theta},
      {"rope_scaling", served.rope_scaling != stated.rope_scaling},
      {"rms_norm_eps", served.rms_norm_eps != stated.rms_norm_eps},
      {"num_experts_per_tok", served.num_experts_per_token != stated.num_experts_per_token},
      {"norm_topk_prob", served.use_moe && served.norm_topk_prob != stated.norm_topk_prob},
      {"eos_token_id", served.eos_token_id != stated.eos_token_id},
  };
  for (const auto& [field, differs] : differences) {
    if (differs) return field;
  }
  return "";
}

}  // namespace

std::unique_ptr<Model> load_replacement_weights(const fs::path& path, const ModelConfig& served,
                                                const TensorReadOptions& read) {
  const std::string name = path.string();
  if (!fs::exists(path)) throw Error("model_path " + name + " does not exist");
  TensorMap tensors;
  std::optional<ModelConfig> stated;  // what the directory's config.json says, when there is one
  try {
    if (fs::is_directory(path) || path.extension() == ".safetensors") {
      const fs::path directory = fs::is_directory(path) ? path : path.parent_path();
      const fs::path weights_file = fs::is_directory(path) ? directory_weights_file(directory) : path;
      std::optional<nlohmann::json> config_json;
      if (fs::exists(directory / "config.json")) {
        config_json = read_json_file(directory / "config.json");
      } else if (fs::is_directory(path)) {
        throw Error("no config.json in " + name);
      }
      tensors = read_checked_tensors(weights_file, read, [&](const TensorMap& claimed) {
                  // What config.json says, with the qk-norm question answered by the file's claims (read once).
                  if (config_json && !stated) stated = config_from_json(*config_json, has_qk_norm_tensors(claimed));
                  return served;
                }).tensors;
    } else if (path.extension() == ".pth" || path.extension() == ".pt") {
      tensors = read_checked_tensors(path, read, [&](const TensorMap&) { return served; }).tensors;
    } else {
      throw Error(name + " is neither a model directory nor a .safetensors or .pth file");
    }
    ModelWeights weights = weights_from_tensors(served, std::move(tensors));
    if (stated) {
      const std::string field = numerics_difference(served, *stated);
      if (!field.empty()) {
        throw Error("config.json's " + field + " differs from the served model's (the tensors' shapes fit, but the " +
                    "numbers would not be this model's)");
      }
    }
    return std::make_unique<Model>(served, std::move(weights));
  } catch (const Error& error) {
    std::string message = error.what();
    if (message.rfind(name, 0) == 0) throw;
    // The shapes were checked against the model being served, not against this directory's config.json.
    if (const std::size_t at = message.find("the config needs"); at != std::string::npos) {
      message.replace(at, std::string("the config needs").size(), "the served model needs");
    }
    throw Error(name + ": " + message);
  }
}

TokenizerFiles read_tokenizer_files(const fs::path& path) {
  const bool directory = fs::is_directory(path);
  const fs::path tokenizer_json = tokenizer_json_path(path);
  const fs::path tokenizer_config = tokenizer_json.parent_path() / "tokenizer_config.json";
  if (!fs::exists(tokenizer_json)) {
    throw Error(directory ? "tokenizer directory " + path.string() + " has no tokenizer.json"
                          : "no tokenizer found at " + path.string());
  }
  TokenizerFiles files{read_whole_file(tokenizer_json, kMaxTokenizerFileBytes, "tokenizer.json"), std::nullopt};
  if (fs::exists(tokenizer_config)) {
    files.tokenizer_config_json = read_whole_file(tokenizer_config, kMaxConfigFileBytes, "tokenizer_config.json");
  }
  return files;
}

TokenizerFiles model_tokenizer_files(const LoadedModel& loaded, const std::optional<fs::path>& tokenizer_path) {
  if (tokenizer_path) return read_tokenizer_files(*tokenizer_path);
  if (loaded.format == "gguf") {
    const MappedFile file(loaded.path);
    GgufTokenizerFiles own = gguf_tokenizer_files(read_gguf(file.bytes(), loaded.path.string()), loaded.path.string());
    return {std::move(own.tokenizer_json), std::move(own.tokenizer_config_json)};
  }
  return read_tokenizer_files(fs::is_directory(loaded.path) ? loaded.path : loaded.path.parent_path());
}

namespace {

// Writes config.json, model.safetensors (by `write_weights`), the tokenizer files and any `extra_files` into one
// OutputDirectory: every file under a temporary name until all are written, so an error leaves nothing behind.
void save_directory(const fs::path& directory, const ModelConfig& config, const TokenizerFiles& tokenizer,
                    const std::function<void(const fs::path&)>& write_weights,
                    const std::vector<std::pair<std::string, std::string>>& extra_files) {
  OutputDirectory out(directory, "output directory");
  out.write_with("model.safetensors", write_weights);
  out.write("tokenizer.json", tokenizer.tokenizer_json);
  if (tokenizer.tokenizer_config_json) out.write("tokenizer_config.json", *tokenizer.tokenizer_config_json);
  for (const auto& [name, contents] : extra_files) out.write(name, contents);
  out.write("config.json", config_to_json(config).dump(2) + "\n");  // renamed last: then the model is whole
  out.commit();
}

}  // namespace

void save_model_directory(const fs::path& directory, const ModelConfig& config, const ModelWeights& weights,
                          const fs::path& tokenizer_directory, DType dtype) {
  // Read (and so checked: regular files of a sane size) before anything is written.
  save_model_directory(directory, config, weights, read_tokenizer_files(tokenizer_directory), dtype);
}

void save_model_directory(const fs::path& directory, const ModelConfig& config, const ModelWeights& weights,
                          const TokenizerFiles& tokenizer, DType dtype) {
  save_directory(directory, config, tokenizer,
                 [&](const fs::path& path) {
                   write_safetensors(path, tensors_from_weights(config, weights), dtype,
                                     {{"format", "pt"}, {"producer", "minigen"}});
                 },
                 {});
}

void save_quantized_model_directory(const fs::path& directory, const ModelConfig& config, const ModelWeights& weights,
                                    const TokenizerFiles& tokenizer, WeightType type, const std::string& model_card) {
  if (!is_block_quantized(type))
    throw Error("save_quantized_model_directory: q8 or q4, not " + std::string(weight_type_name(type)));
  const TensorMap tensors = tensors_from_weights(config, weights, type);  // before any file is made
  save_directory(
      directory, config, tokenizer,
      [&](const fs::path& path) {
        write_safetensors_as_stored(
            path, tensors,
            {{"format", "pt"}, {"producer", "minigen"}, {"minigen_weights", std::string(weight_type_name(type))}});
      },
      {{"README.md", model_card}});
}

}  // namespace minigen
