// minigen: a generation engine for MiniMind-family language models.
//
// Exit codes: 0 success (and --help); 1 for every error the user can fix — a bad flag or value (the argument
// parser's errors included), a bad or missing file, a request the model cannot hold — always with exactly one line
// "minigen: error: …" on stderr (a file system's refusal included); 2 for an internal error (a bug), "minigen: internal
// error: …". Under MINIGEN_LANG=zh (or a command's --lang zh) the line reads "minigen：错误：…", in Chinese where the
// error has a translation (core/translated_error.h), in English after the Chinese prefix where it has none.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/sampling_flags.h"
#include "core/error.h"
#include "core/message_language.h"
#include "core/translated_error.h"
#include "ops/simd_override.h"

namespace {

void print_error(const std::string& english, const std::string& chinese = "") {
  if (minigen::chinese_messages()) {
    std::cerr << "minigen：错误：" << (chinese.empty() ? english : chinese) << "\n";
  } else {
    std::cerr << "minigen: error: " << english << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"minigen — exact, measured generation for MiniMind-family language models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("minigen ") + MINIGEN_VERSION);  // CMake's project version
  std::vector<std::pair<CLI::App*, minigen::cli::CommandAction>> commands;
  auto add = [&](minigen::cli::CommandAction (*add_command)(CLI::App&)) {
    const std::size_t before = app.get_subcommands({}).size();
    minigen::cli::CommandAction action = add_command(app);
    commands.emplace_back(app.get_subcommands({})[before], std::move(action));
  };
  add(minigen::cli::add_generate_command);
  add(minigen::cli::add_chat_command);
  add(minigen::cli::add_tokenize_command);
  add(minigen::cli::add_detokenize_command);
  add(minigen::cli::add_info_command);
  add(minigen::cli::add_init_random_command);
  add(minigen::cli::add_tokenizer_command);
  add(minigen::cli::add_lab_command);
  add(minigen::cli::add_perplexity_command);
  add(minigen::cli::add_quantize_command);
  add(minigen::cli::add_merge_lora_command);
  add(minigen::cli::add_export_command);
  add(minigen::cli::add_bench_command);
  add(minigen::cli::add_serve_command);
  add(minigen::cli::add_bench_serve_command);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help or --version: CLI11 prints the text
  } catch (const CLI::ParseError& e) {
    print_error(minigen::cli::parse_error_line(e, app));
    return 1;
  }
  try {
    minigen::apply_simd_override_from_environment();
    for (auto& [command, action] : commands) {
      if (command->parsed()) return action();
    }
  } catch (const minigen::InvalidSamplingParam& e) {  // found where the vocabulary is known: named as the flag
    std::cout.flush();
    print_error(minigen::cli::sampling_flag_name(e.param()) + " " + e.problem());
    return 1;
  } catch (const minigen::Error& e) {
    std::cout.flush();
    const auto* translated = dynamic_cast<const minigen::TranslatedError*>(&e);
    print_error(e.what(), translated != nullptr ? translated->chinese() : "");
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    // A refusal of the file system (permissions, a full disk, a path through a file) is the user's to fix, not a bug;
    // writers report their own failures, this catches any path a check missed.
    std::cout.flush();
    print_error(e.what());
    return 1;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << (minigen::chinese_messages() ? "minigen：内部错误：" : "minigen: internal error: ") << e.what()
              << "\n";
    return 2;
  }
  return 0;
}
