#pragma once
// Flags several commands share (model, tokenizer, threads, weight type).
#include <CLI/CLI.hpp>
#include <string>

#include "checkpoint/model_settings.h"
#include "model/model.h"

namespace minigen::cli {

// -m, --tokenizer, --heads, --yarn, --threads, --weights, --activations and --kv-dtype, written straight into the
// settings they name (checkpoint/model_settings.h loads and checks them).
struct ModelFlags : ModelSettings {
  void add_to(CLI::App& command);
};

// The flags ModelFlags adds, one group at a time, for commands that load models under other names (lab).
void add_pth_flags(CLI::App& command, std::string& tokenizer_path, int& num_q_heads, bool& yarn);
void add_threads_flag(CLI::App& command, int& threads);
void add_weights_flag(CLI::App& command, std::string& weights);
void add_kv_dtype_flag(CLI::App& command, std::string& kv_dtype);
void add_activations_flag(CLI::App& command, std::string& activations);
// --lora FILE, for the commands that run one adapter (generate, chat, bench, perplexity, info, lab).
void add_lora_flag(CLI::App& command, std::string& lora_path);
// "lora: NAME (FORMAT) — q_proj, o_proj in 8 of 8 layers, rank 16: +393,216 parameters (0.6 % of the model)", or
// empty without an adapter. The commands print it on stderr when they load one.
std::string adapter_note(const Model& model);

}  // namespace minigen::cli
