// `minigen export gguf MODEL OUT.gguf [--type f32|f16|bf16|q8_0|q4_0]`: writes the model, its tokenizer and chat
// template as one llama.cpp GGUF file (checkpoint/gguf_model.h says which architecture each family becomes).
#include <filesystem>
#include <iostream>

#include "checkpoint/gguf_lora.h"
#include "checkpoint/gguf_model.h"
#include "checkpoint/gguf_tokenizer.h"
#include "checkpoint/model_loader.h"
#include "cli/command_context.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "core/enum_names.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/format.h"
#include "model/io/gguf_reader.h"

namespace minigen::cli {
namespace {
namespace fs = std::filesystem;

struct ExportFlags {
  ModelFlags model;
  std::string out;
  std::string type = "f32";
  bool force = false;
};

// --type spells the GGUF tensor types in lower case, as llama.cpp's tools do.
constexpr EnumName<GgufTensorType> kExportTypeNames[] = {{GgufTensorType::kF32, "f32"},
                                                         {GgufTensorType::kF16, "f16"},
                                                         {GgufTensorType::kBF16, "bf16"},
                                                         {GgufTensorType::kQ8_0, "q8_0"},
                                                         {GgufTensorType::kQ4_0, "q4_0"}};

GgufTensorType parse_gguf_type(const std::string& name) {
  if (const auto type = value_named(kExportTypeNames, name)) return *type;
  throw Error("--type must be " + names_listed(kExportTypeNames));
}

// The name to record: a GGUF's general.name, else the file or folder name.
std::string source_name(const LoadedModel& loaded) {
  if (loaded.format == "gguf") {
    const MappedFile file(loaded.path);
    const GgufFile gguf = read_gguf(file.bytes(), loaded.path.string());
    if (const GgufValue* name = gguf.find("general.name");
        name != nullptr && !name->is_array() && name->type == GgufValueType::kString) {
      return name->strings[0];
    }
  }
  return loaded.path.filename().string();
}

int run_export_gguf(const ExportFlags& flags) {
  const GgufTensorType type = parse_gguf_type(flags.type);
  const fs::path out(flags.out);
  if (out.extension() != ".gguf") throw Error("OUT must name a .gguf file");
  check_output_file(out);  // before the model is loaded, which takes a while (and again when written)
  check_file_not_replaced(out, flags.force);
  const LoadedModel loaded = flags.model.load();
  const ModelConfig& config = loaded.model->config;
  GgufExport exported = gguf_export(config, loaded.model->weights, type, source_name(loaded));
  append_gguf_tokenizer(exported.metadata, model_tokenizer_files(loaded, flags.model.tokenizer_option()).tokenizer_json,
                        *loaded.tokenizer, config.vocab_size);
  write_gguf(out, exported.metadata, exported.tensors);
  std::cerr << "wrote " << out.string() << ": architecture " << gguf_architecture(config) << ", " << flags.type
            << " weights, " << exported.tensors.size() << " tensors, "
            << with_thousands(static_cast<long long>(fs::file_size(out))) << " B\n";
  return 0;
}

// `minigen export lora MODEL LORA OUT.gguf`: the adapter as llama.cpp's `--lora` reads it (checkpoint/gguf_lora.h).
int run_export_lora(const ExportFlags& flags) {
  const fs::path out(flags.out);
  if (out.extension() != ".gguf") throw Error("OUT must name a .gguf file");
  check_output_file(out);
  check_file_not_replaced(out, flags.force);
  const LoadedModel loaded = flags.model.load();
  const LoraAdapter& adapter = *loaded.model->adapter;
  const GgufExport exported = gguf_lora_export(loaded.model->config, adapter, adapter.name);
  write_gguf(out, exported.metadata, exported.tensors);
  std::cerr << "wrote " << out.string() << ": LoRA adapter " << adapter.name << " for the "
            << gguf_architecture(loaded.model->config) << " architecture, " << adapter.summary() << ", "
            << exported.tensors.size() << " tensors, " << with_thousands(static_cast<long long>(fs::file_size(out)))
            << " B\n";
  return 0;
}

}  // namespace

CommandAction add_export_command(CLI::App& app) {
  auto flags = std::make_shared<ExportFlags>();
  CLI::App* command = app.add_subcommand("export", "write a model in another program's format");
  command->require_subcommand(1);
  CLI::App* gguf = command->add_subcommand("gguf", "a llama.cpp GGUF v3 file (qwen3 / qwen3moe / llama architecture)");
  gguf->add_option("MODEL", flags->model.model_path, "an HF directory, a MiniMind .pth or a .gguf")->required();
  gguf->add_option("OUT", flags->out, "the .gguf file to write")->required();
  gguf->add_option("--type", flags->type, "weight matrices as " + names_listed(kExportTypeNames) + " (norms stay f32)")
      ->check(CLI::IsMember(names_in(kExportTypeNames)));
  add_pth_flags(*gguf, flags->model.tokenizer_path, flags->model.num_q_heads, flags->model.yarn);
  add_force_flag(*gguf, flags->force);
  auto lora_flags = std::make_shared<ExportFlags>();
  CLI::App* lora = command->add_subcommand("lora", "a LoRA adapter as a llama.cpp GGUF adapter (llama-cli --lora)");
  lora->add_option("MODEL", lora_flags->model.model_path, "the base model the adapter was trained on")->required();
  lora->add_option("LORA", lora_flags->model.lora_path, "the adapter: MiniMind's .pth or a PEFT folder")->required();
  lora->add_option("OUT", lora_flags->out, "the .gguf file to write")->required();
  add_pth_flags(*lora, lora_flags->model.tokenizer_path, lora_flags->model.num_q_heads, lora_flags->model.yarn);
  add_force_flag(*lora, lora_flags->force);
  return [flags, lora_flags, gguf] { return gguf->parsed() ? run_export_gguf(*flags) : run_export_lora(*lora_flags); };
}

}  // namespace minigen::cli
