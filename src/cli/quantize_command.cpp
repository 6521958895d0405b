// `minigen quantize MODEL OUT --weights q8|q4`: writes a model directory whose matrices are stored as integer codes
// with fp16 block scales (model/quantized_tensors.h), so it loads straight into the q8/q4 kernels and takes a
// quarter (q8) or an eighth (q4) of the fp32 file's bytes.
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint/model_loader.h"
#include "cli/command_context.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/format.h"
#include "ops/weight_type.h"

namespace minigen::cli {
namespace {

// What --weights accepts: the block-quantized weight types.
std::vector<std::string> block_quantized_type_names() {
  std::vector<std::string> names;
  for (const auto& [type, name] : kWeightTypeNames) {
    if (is_block_quantized(type)) names.emplace_back(name);
  }
  return names;
}

struct QuantizeFlags {
  ModelFlags model;
  std::string out;
  std::string weights;
  bool force = false;
};

// The model card: what the file holds and how to read it, for someone who opens the directory.
std::string model_card(const std::filesystem::path& source, WeightType type, const ModelConfig& config) {
  const std::string name(weight_type_name(type));
  std::ostringstream card;
  card << "# " << name << " weights of " << source.filename().string() << "\n\n"
       << "Written by `minigen quantize " << source.string() << " OUT --weights " << name << "` ("
       << config.parameter_count() << " parameters, " << config.num_layers << " layers). Run it with "
       << "`minigen generate -m OUT` (it runs only as " << name << ").\n\n"
       << "## Layout of model.safetensors\n\n"
       << "Norms are F32. Every weight matrix W [rows][cols] (cols a multiple of 32) is two tensors:\n\n"
       << "- `NAME` — "
       << (type == WeightType::kQ8 ? "I8 [rows][cols]: codes −127 … 127"
                                   : "U8 [rows][cols / 2]: byte j holds code 2j + 8 in its low "
                                     "nibble and code 2j + 1 + 8 in its high nibble (codes −8 … 7)")
       << ";\n- `NAME_scale` — F16 [rows][cols / 32]: one scale d per block of 32 along a row.\n\n"
       << "A weight is W[r][k] = d[r][k / 32] · code[r][k]. "
       << (type == WeightType::kQ8 ? "d = absmax / 127 of the block (rounded to fp16); code = round(w / d), ties to "
                                     "even."
                                   : "d = m / −8, m the block's weight of largest magnitude (rounded to fp16); code = "
                                     "clamp(round(w / d), −8, 7), ties to even.")
       << "\n\nThe tied embedding is stored once, as `model.embed_tokens.weight`"
       << (type == WeightType::kQ4 ? ", in q8 (the output projection every logit comes from stays 8-bit)" : "")
       << ". The metadata key `minigen_weights` says `" << name << "`.\n";
  return card.str();
}

int run_quantize(const QuantizeFlags& flags) {
  const WeightType type = parse_weight_type(flags.weights);
  if (!is_block_quantized(type)) throw Error("--weights must be q8 or q4");
  const std::filesystem::path out(flags.out);
  check_output_directory(out, "OUT");  // before the model is loaded, which takes a while
  check_nothing_replaced(out,
                         {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "README.md"},
                         "a model", flags.force);
  const LoadedModel loaded = flags.model.load();
  if (loaded.model->weights.stored_quantization() != WeightType::kF32) {
    throw Error(loaded.path.string() + " is already quantized; quantize the original model");
  }
  // A GGUF carries its tokenizer: the quantized directory gets the tokenizer.json its keys describe.
  const TokenizerFiles tokenizer = model_tokenizer_files(loaded, flags.model.tokenizer_option());
  save_quantized_model_directory(out, loaded.model->config, loaded.model->weights, tokenizer, type,
                                 model_card(loaded.path, type, loaded.model->config));
  const auto bytes = std::filesystem::file_size(out / "model.safetensors");
  std::cerr << "wrote " << weight_type_name(type) << " weights of " << loaded.path.string() << " to " << out.string()
            << " (model.safetensors " << with_thousands(static_cast<long long>(bytes)) << " B)\n";
  return 0;
}

}  // namespace

CommandAction add_quantize_command(CLI::App& app) {
  auto flags = std::make_shared<QuantizeFlags>();
  CLI::App* command =
      app.add_subcommand("quantize", "write a q8 or q4 copy of a model: integer codes and fp16 block scales");
  command->add_option("MODEL", flags->model.model_path, "an HF directory, a MiniMind .pth or a .gguf")->required();
  command->add_option("OUT", flags->out, "directory to write (new or empty, or --force)")->required();
  command
      ->add_option("--weights", flags->weights,
                   "q8 (int8 blocks of 32, 8.5 bits per weight) or q4 (4-bit blocks, 4.5 bits; embedding q8)")
      ->required()
      ->check(CLI::IsMember(block_quantized_type_names()));
  add_pth_flags(*command, flags->model.tokenizer_path, flags->model.num_q_heads, flags->model.yarn);
  add_force_flag(*command, flags->force);
  return [flags] { return run_quantize(*flags); };
}

}  // namespace minigen::cli
