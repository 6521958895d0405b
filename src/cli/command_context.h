#pragma once
// Flags several commands share (model, tokenizer, threads, weight type).
#include <CLI/CLI.hpp>
#include <string>

#include "checkpoint/model_settings.h"

namespace minigen::cli {

// -m, --tokenizer, --heads, --yarn, --threads, --weights and --kv-dtype, written straight into the settings they
// name (checkpoint/model_settings.h loads and checks them).
struct ModelFlags : ModelSettings {
  void add_to(CLI::App& command);
};

// The flags ModelFlags adds, one group at a time, for commands that load models under other names (lab).
void add_pth_flags(CLI::App& command, std::string& tokenizer_path, int& num_q_heads, bool& yarn);
void add_threads_flag(CLI::App& command, int& threads);
void add_weights_flag(CLI::App& command, std::string& weights);
void add_kv_dtype_flag(CLI::App& command, std::string& kv_dtype);

}  // namespace minigen::cli
