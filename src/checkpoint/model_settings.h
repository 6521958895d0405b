#pragma once
// Which model a frontend runs and how: the file or directory (or the shipped default), its tokenizer, the .pth
// details its tensors cannot tell, threads, the weight and KV-cache element types. The CLI's -m, --tokenizer,
// --heads, --yarn, --threads, --weights and --kv-dtype write it (cli/command_context.h), Python's Model(...) fills it
// from its keyword arguments; loading and the checks are here, once, with the same messages for both.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/model_loader.h"
#include "ops/kv_dtype.h"
#include "ops/weight_type.h"

namespace minigen {

struct ModelSettings {
  std::string model_path;  // empty: the shipped default model
  std::string tokenizer_path;
  int num_q_heads = 8;
  bool yarn = false;
  int threads = 0;      // 0: one per core
  std::string weights;  // empty: f32 (f16 for a checkpoint stored in fp16), or the type a quantized model was saved in
  std::string kv_dtype = "f32";
  // q8/q4 products' activation codes: "int8" (W8A8) or "int16"; empty: the weight type's default (q8 int16, q4 int8).
  std::string activations;
  std::string lora_path;  // a LoRA adapter to run with (checkpoint/lora_loader.h); empty: none

  LoadedModel load() const;
  // The tokenizer path as LoadOptions takes it: empty when not given.
  std::optional<std::filesystem::path> tokenizer_option() const;
  int thread_count() const;
  // `weights`, checked against the model: a q8/q4 model file runs only in its own type.
  WeightType weight_type(const Model& model) const;
  KvDType kv_dtype_value() const;
  // `activations` for weights of `type`: nullopt when not given; throws minigen::Error "--activations int8 needs
  // --weights q8 or q4 …" for another type, and for q4 × int16.
  std::optional<ActivationCodes> activation_codes(WeightType type) const;
};

// The model used when none is given.
std::filesystem::path default_model_path();

// The model a -m value (or Python's Model(path)) means: the path itself when it exists; else, for a bare name
// ("minigen-tiny-sft"), the shipped model of that name in minigen_home()/models, so that shipped models load by name
// from any folder, and for a relative path of the shipped tree ("models/minigen-tiny-sft") that shipped folder;
// empty means default_model_path(). Throws Error when it is neither, naming the shipped models (and the nearest one
// when the name looks like a typo of one).
std::filesystem::path resolve_model_path(const std::string& given);

// A file the user named (-f, --jsonl, the lab's --chat-prompts and --eval, …): the path itself when it exists here;
// else a relative path that names one of minigen's shipped files ("examples/genesis-183.txt",
// "examples/zh/poems.txt") is that shipped file, so the commands in the docs work from any folder; else the path
// unchanged, for the reader's own "cannot open" error.
std::filesystem::path resolve_user_file(const std::string& given);

// The names of the shipped models (the folders of minigen_home()/models that hold a config.json), sorted; empty when
// minigen's shipped files cannot be found.
std::vector<std::string> shipped_model_names();

}  // namespace minigen
