#pragma once
// Flags several commands share (model, tokenizer, threads, weight type) and the helpers that turn them into a loaded
// model.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>
#include <string>

#include "checkpoint/model_loader.h"
#include "ops/kv_dtype.h"
#include "ops/weight_type.h"

namespace minigen::cli {

struct ModelFlags {
  std::string model_path;  // empty: the shipped default model
  std::string tokenizer_path;
  int num_q_heads = 8;
  bool yarn = false;
  int threads = 0;      // 0: one per core
  std::string weights;  // empty: f32, or the type a quantized model was saved in
  std::string kv_dtype = "f32";

  void add_to(CLI::App& command);
  LoadedModel load() const;
  // --tokenizer as LoadOptions takes it: empty when not given.
  std::optional<std::filesystem::path> tokenizer_option() const;
  int thread_count() const;
  // --weights, checked against the model: a q8/q4 model file runs only in its own type.
  WeightType weight_type(const Model& model) const;
  KvDType kv_dtype_value() const;
};

// The flags ModelFlags adds, one group at a time, for commands that load models under other names (lab).
void add_pth_flags(CLI::App& command, std::string& tokenizer_path, int& num_q_heads, bool& yarn);
void add_threads_flag(CLI::App& command, int& threads);
void add_weights_flag(CLI::App& command, std::string& weights);
void add_kv_dtype_flag(CLI::App& command, std::string& kv_dtype);

// The model used when -m is not given.
std::filesystem::path default_model_path();

}  // namespace minigen::cli
