#include "cli/command_context.h"

#include "cli/flag_checks.h"
#include "core/enum_names.h"
#include "core/format.h"
#include "ops/kv_dtype.h"
#include "ops/weight_type.h"

namespace minigen::cli {

void ModelFlags::add_to(CLI::App& command) {
  command.add_option("-m,--model", model_path,
                     "model: an HF directory (config.json + model.safetensors), a MiniMind .pth file, or a "
                     "shipped model's name (minigen-tiny-sft, minigen-tiny-base) [default: minigen-tiny-sft]");
  add_pth_flags(command, tokenizer_path, num_q_heads, yarn);
  add_threads_flag(command, threads);
  add_weights_flag(command, weights);
  add_activations_flag(command, activations);
  add_kv_dtype_flag(command, kv_dtype);
}

void add_pth_flags(CLI::App& command, std::string& tokenizer_path, int& num_q_heads, bool& yarn) {
  command.add_option(
      "--tokenizer", tokenizer_path,
      "tokenizer.json, the tokenizer_config.json beside it, or their directory (default: beside the model)");
  command.add_option("--heads", num_q_heads, "query heads of a .pth model, which its tensors cannot tell")
      ->default_val(8)
      ->check(integer_in(1, 1024));
  command.add_flag("--yarn", yarn,
                   "a .pth model with minimind-3's YaRN rope scaling (MiniMind's --inference_rope_scaling; a "
                   "directory's config.json says it itself)");
}

void add_lora_flag(CLI::App& command, std::string& lora_path) {
  command.add_option("--lora", lora_path,
                     "a LoRA adapter to run with, unmerged: MiniMind's .pth (model_lora.py's save_lora, e.g. "
                     "out/lora/lora_identity_768.pth), a PEFT folder (adapter_config.json + "
                     "adapter_model.safetensors) or a GGUF adapter");
}

std::string adapter_note(const Model& model) {
  if (!model.adapter) return "";
  const LoraAdapter& adapter = *model.adapter;
  const double share =
      100.0 * static_cast<double>(adapter.parameter_count()) / static_cast<double>(model.config.parameter_count());
  char percent[32];
  std::snprintf(percent, sizeof percent, "%.2g", share);
  return "lora: " + adapter.name + " (" + adapter.format + ") — " + adapter.summary() + ": +" +
         with_thousands(adapter.parameter_count()) + " parameters (" + percent + " % of the model)";
}

void add_threads_flag(CLI::App& command, int& threads) {
  command.add_option("--threads", threads, "worker threads; 0 (the default) means one per core")
      ->check(integer_in(0, 1024));
}

void add_weights_flag(CLI::App& command, std::string& weights) {
  command
      .add_option("--weights", weights,
                  "element type the matrix products read: f32 (exact), f16 (fp16 storage, f32 arithmetic: f32's "
                  "numbers on an fp16 checkpoint), bf16 (half the bytes; bf16 × bf16 products, fp32 sums), q8 (int8 "
                  "blocks of 32, 8.5 bits per weight) or q4 (4-bit blocks, 4.5 bits; output projection q8) "
                  "[default: f32; f16 for a checkpoint stored in fp16; the type a `minigen quantize` model was "
                  "saved in]")
      ->check(CLI::IsMember(names_in(kWeightTypeNames)));
}

void add_activations_flag(CLI::App& command, std::string& activations) {
  command
      .add_option("--activations", activations,
                  "q8/q4 weights: the codes each activation row is quantized to, in blocks of 32 — int16 (q8's "
                  "default: agrees with fp32 activations) or int8 (W8A8, as llama.cpp's Q8_0 and Q4_0: faster "
                  "prefill with AVX-512 VNNI; q4's only choice)")
      ->check(CLI::IsMember(names_in(kActivationCodeNames)));
}

void add_kv_dtype_flag(CLI::App& command, std::string& kv_dtype) {
  command
      .add_option("--kv-dtype", kv_dtype,
                  "element type of the KV cache: f32 (exact), bf16 or f16 (half the bytes), int8 (a quarter, plus "
                  "one fp32 scale per position and kv head)")
      ->default_val("f32")
      ->check(CLI::IsMember(names_in(kKvDTypeNames)));
}

}  // namespace minigen::cli
