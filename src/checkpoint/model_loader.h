#pragma once
// Finds and loads a model from disk: an HF directory (config.json + model.safetensors or pytorch_model.bin + tokenizer
// files) or a MiniMind .pth state dict (configuration inferred from tensor shapes, tokenizer from a flag or from
// beside it).
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/gguf_model.h"
#include "model/model.h"
#include "model/tensor.h"
#include "tokenizer/bpe_tokenizer.h"

namespace minigen {

struct LoadOptions {
  int num_q_heads = 8;                                  // a .pth cannot tell the head count; MiniMind's default is 8
  std::optional<std::filesystem::path> tokenizer_path;  // tokenizer.json or the directory holding it
  // YaRN for a .pth (whose config.json would say inference_rope_scaling): minimind-3's factor 16 over 2,048
  // positions, what MiniMind's eval switches on with --inference_rope_scaling.
  bool yarn = false;
};

struct LoadedModel {
  std::unique_ptr<Model> model;  // not const: release_matrices() once packed
  std::unique_ptr<const Tokenizer> tokenizer;
  std::filesystem::path path;
  std::string format;  // "safetensors", "pytorch_model.bin" (an HF directory's torch zip), "pth" or "gguf"
  DType stored_dtype = DType::kF32;
  std::vector<GgufDequantizedTensor> gguf_dequantized;  // a GGUF's K-quant (…) tensors, now fp32 values
};

LoadedModel load_model(const std::filesystem::path& path, const LoadOptions& options = {});

// New weights for a model being served (POST /update_weights_from_disk, an RL trainer's new policy): an HF directory
// (model.safetensors or pytorch_model.bin; f32, fp16 or bf16; tied weights stored once or twice) or a .safetensors or
// .pth file, read against the served model's configuration. Throws minigen::Error starting with the path for a
// tensor of another shape (naming it), a missing or extra tensor, or a config.json field that changes the numbers
// although every shape fits (heads, RoPE, eps, eos); nothing of the served model is touched. No tokenizer is read:
// the served one stays. `read` is passed to the tensor reader (keep_fp16_matrices for a model served as f16).
std::unique_ptr<Model> load_replacement_weights(const std::filesystem::path& path, const ModelConfig& served,
                                                const TensorReadOptions& read = {});

// A tokenizer.json, or the directory holding it (with tokenizer_config.json beside it when present).
std::unique_ptr<const Tokenizer> load_tokenizer(const std::filesystem::path& path);
// The tokenizer a model comes with, without reading its weights: a GGUF's own tokenizer keys, else the
// tokenizer.json of the model's directory (beside a .pth or .safetensors file), as load_model finds them.
std::unique_ptr<const Tokenizer> load_model_tokenizer(const std::filesystem::path& model);
// The tokenizer.json a --tokenizer path means: the directory's, the file itself, or the one beside a
// tokenizer_config.json (people point at either file of the pair).
std::filesystem::path tokenizer_json_path(const std::filesystem::path& path);

// The texts of a model's tokenizer files, as they are copied into a saved model.
struct TokenizerFiles {
  std::string tokenizer_json;
  std::optional<std::string> tokenizer_config_json;
};
// tokenizer.json (required) and tokenizer_config.json (if present) from a directory, or beside a tokenizer.json.
TokenizerFiles read_tokenizer_files(const std::filesystem::path& path);
// The tokenizer a loaded model came with: `tokenizer_path`'s when given, else a GGUF's own keys, else the files
// beside the model.
TokenizerFiles model_tokenizer_files(const LoadedModel& loaded,
                                     const std::optional<std::filesystem::path>& tokenizer_path);

// Writes an HF directory: config.json, model.safetensors (in `dtype`) and the tokenizer files copied from
// `tokenizer_directory`. Files are written next to each other under temporary names and renamed at the end, so an
// error leaves no half-made directory (core/file_io.h's OutputDirectory).
void save_model_directory(const std::filesystem::path& directory, const ModelConfig& config,
                          const ModelWeights& weights, const std::filesystem::path& tokenizer_directory,
                          DType dtype = DType::kF32);

// The same with the tokenizer's files given as texts (e.g. a GGUF's own, model_tokenizer_files).
void save_model_directory(const std::filesystem::path& directory, const ModelConfig& config,
                          const ModelWeights& weights, const TokenizerFiles& tokenizer, DType dtype = DType::kF32);

// The same for a q8/q4 model (`minigen quantize`): integer codes and fp16 scales (model/quantized_tensors.h), float
// norms, `tokenizer`'s files, and `model_card` as README.md.
void save_quantized_model_directory(const std::filesystem::path& directory, const ModelConfig& config,
                                    const ModelWeights& weights, const TokenizerFiles& tokenizer, WeightType type,
                                    const std::string& model_card);

// Where minigen finds its shipped files (default models, tokenizer, examples): $MINIGEN_HOME if set, else
// share/minigen beside the binary (the build tree) or above it (an installed tree), or in a folder above the shared
// object this code is in (the Python module, build tree or installed). Throws minigen::Error when there is none.
std::filesystem::path minigen_home();

}  // namespace minigen
