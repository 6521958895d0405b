// `minigen tokenizer train`: learn a byte-level BPE vocabulary in minimind-3's layout from text files.
#include <chrono>
#include <climits>
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "core/error.h"
#include "core/file_io.h"
#include "tokenizer/bpe_trainer.h"
#include "tokenizer/tokenizer_writer.h"

namespace minigen::cli {
namespace {

struct TokenizerTrainFlags {
  int vocab_size = 6400;
  int min_frequency = 2;
  std::string out;
  std::vector<std::string> files;
  bool force = false;
};

int run_tokenizer_train(const TokenizerTrainFlags& flags) {
  std::vector<std::filesystem::path> files(flags.files.begin(), flags.files.end());
  for (const auto& file : files) {
    if (!std::filesystem::exists(file)) throw Error("training text not found: " + file.string());
    RegularFile check(file);  // a FIFO or device is refused now, not after the other files were counted
  }
  // Before training, which takes a while: a model folder's tokenizer is never replaced without --force (the model
  // would then run with the wrong tokenizer, silently).
  check_output_directory(flags.out, "--out");
  check_nothing_replaced(flags.out, {"tokenizer.json", "tokenizer_config.json"}, "a tokenizer", flags.force);
  BpeTrainOptions options;
  options.vocab_size = flags.vocab_size;
  options.min_frequency = flags.min_frequency;
  const auto start = std::chrono::steady_clock::now();
  options.progress = [](int done, int total) {
    if (done % 250 == 0 || done == total) std::fprintf(stderr, "\r[tokenizer] merges %d / %d", done, total);
  };
  const TrainedBpe trained = train_bpe(files, options);
  write_tokenizer_files(trained, flags.out);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "\n[tokenizer] %zu tokens, %zu merges written to %s in %.1f s\n", trained.vocab.size(),
               trained.merges.size(), flags.out.c_str(), seconds);
  return 0;
}

}  // namespace

CommandAction add_tokenizer_command(CLI::App& app) {
  auto flags = std::make_shared<TokenizerTrainFlags>();
  CLI::App* group = app.add_subcommand("tokenizer", "tokenizer tools");
  group->require_subcommand(1);
  CLI::App* train = group->add_subcommand("train", "train a byte-level BPE tokenizer (minimind-3 layout) on text");
  train->add_option("--vocab", flags->vocab_size, "vocabulary size, including 36 added tokens and 256 bytes")
      ->default_val(6400)
      ->check(integer_in(292, 65536));
  train->add_option("--min-frequency", flags->min_frequency, "never merge a pair seen fewer times")
      ->check(integer_in(1, INT_MAX))
      ->default_val(2);
  train->add_option("--out", flags->out, "directory for tokenizer.json and tokenizer_config.json (new, or --force)")
      ->required();
  train->add_option("files", flags->files, "UTF-8 text files")->required();
  add_force_flag(*train, flags->force);
  return [flags] { return run_tokenizer_train(*flags); };
}

}  // namespace minigen::cli
