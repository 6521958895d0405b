// `minigen init-random`: a deterministic random-weight HF model directory of any family (tests and experiments).
#include <iostream>

#include "checkpoint/model_loader.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "core/error.h"
#include "core/file_io.h"
#include "model/weights.h"

namespace minigen::cli {
namespace {

struct InitRandomFlags {
  std::string family;
  std::string out;
  uint64_t seed = 0;
  std::string dtype = "f32";
  std::string tokenizer;
  int layers = 0;
  bool force = false;
};

DType parse_dtype(const std::string& name) {
  if (name == "f32" || name == "fp32") return DType::kF32;
  if (name == "f16" || name == "fp16") return DType::kF16;
  if (name == "bf16") return DType::kBF16;
  throw Error("--dtype must be f32, f16 or bf16, got '" + name + "'");
}

int run_init_random(const InitRandomFlags& flags) {
  ModelConfig config = config_for_family(flags.family);
  if (flags.layers > 0) config.num_layers = flags.layers;
  const DType dtype = parse_dtype(flags.dtype);
  check_output_directory(flags.out, "--out");
  // A trained model's weights are never replaced by random ones without --force.
  check_nothing_replaced(flags.out, {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"},
                         "a model", flags.force);
  const std::filesystem::path tokenizer =
      flags.tokenizer.empty() ? minigen_home() / "tokenizers" / "minigen-6400" : std::filesystem::path(flags.tokenizer);
  save_model_directory(flags.out, config, random_weights(config, flags.seed), tokenizer, dtype);
  std::cerr << "wrote a random " << flags.family << " model (" << config.num_layers << " layers, "
            << config.parameter_count() << " parameters, seed " << flags.seed << ", " << dtype_name(dtype) << ") to "
            << flags.out << "\n";
  return 0;
}

}  // namespace

CommandAction add_init_random_command(CLI::App& app) {
  auto flags = std::make_shared<InitRandomFlags>();
  CLI::App* command = app.add_subcommand("init-random", "write a deterministic random-weight model directory");
  command
      ->add_option("--family", flags->family,
                   "tiny, minimind3, minimind3-moe, minimind2, minimind2-small, minimind2-moe")
      ->required();
  command->add_option("--out", flags->out, "directory to write (new or empty, or --force)")->required();
  command->add_option("--seed", flags->seed, "weights seed, 0 to 2^64 − 1")->check(seed_value())->default_val(0);
  command->add_option("--dtype", flags->dtype, "weight type in the file: f32, f16 or bf16")->default_val("f32");
  command->add_option("--tokenizer", flags->tokenizer, "directory with tokenizer.json and tokenizer_config.json");
  // 64: four times the deepest family (MiniMind2, 16 layers); MiniMind2 at 64 layers is 0.4 G parameters, 1.6 GB.
  command->add_option("--layers", flags->layers, "override the family's layer count (smaller test models)")
      ->check(integer_in(1, 64));
  add_force_flag(*command, flags->force);
  return [flags] { return run_init_random(*flags); };
}

}  // namespace minigen::cli
