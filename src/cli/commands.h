#pragma once
// Each subcommand registers itself on the app; `main` only wires them together and turns errors into exit codes.
#include <CLI/CLI.hpp>
#include <functional>

namespace minigen::cli {

// A command's work, run after parsing if the user chose that command. Returns the process exit code.
using CommandAction = std::function<int()>;

CommandAction add_generate_command(CLI::App& app);
CommandAction add_chat_command(CLI::App& app);
CommandAction add_tokenize_command(CLI::App& app);
CommandAction add_detokenize_command(CLI::App& app);
CommandAction add_info_command(CLI::App& app);
CommandAction add_init_random_command(CLI::App& app);
CommandAction add_tokenizer_command(CLI::App& app);
CommandAction add_lab_command(CLI::App& app);
CommandAction add_perplexity_command(CLI::App& app);
CommandAction add_quantize_command(CLI::App& app);
CommandAction add_merge_lora_command(CLI::App& app);
CommandAction add_export_command(CLI::App& app);
CommandAction add_bench_command(CLI::App& app);
CommandAction add_serve_command(CLI::App& app);
CommandAction add_bench_serve_command(CLI::App& app);

}  // namespace minigen::cli
