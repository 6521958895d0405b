// `minigen merge-lora MODEL LORA OUT`: MiniMind's merge_lora — a full model whose wrapped matrices are W + B·A
// (× the adapter's scale), written as an HF directory (fp16 by default, as merge_lora saves). It then runs both the
// merged model and the model with the adapter unmerged on three prompts and reports how far apart they are: they
// differ only by rounding (the merged weights are rounded to the file's type; unmerged, W x and B(A x) are rounded
// separately), so greedy tokens should agree and logits differ in the last bits.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cache/kv_cache.h"
#include "checkpoint/model_loader.h"
#include "cli/command_context.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/format.h"
#include "model/transformer.h"
#include "request/chat_turn.h"
#include "tokenizer/chat_template.h"

namespace minigen::cli {
namespace {

struct MergeLoraFlags {
  ModelFlags model;  // model_path and lora_path are the positional MODEL and LORA
  std::string out;
  std::string dtype = "f16";
  bool force = false;
};

constexpr int kComparedTokens = 32;

struct Comparison {
  int agreeing_tokens = 0;  // greedy tokens equal before the first difference, summed over the prompts
  int compared_tokens = 0;
  double max_logit_difference = 0;  // over every position of the unmerged model's greedy sequence
  int positions = 0;
};

// Greedy continuation of `prompt` (eos ignored), one token per forward call on a KV cache.
std::vector<int> greedy(Transformer& transformer, std::vector<int> sequence, int new_tokens) {
  KvCache cache(transformer.model().config.kv_layout(), static_cast<int>(sequence.size()) + new_tokens);
  std::vector<int> feed = sequence;
  for (int step = 0; step < new_tokens; ++step) {
    const ForwardRow row{&cache, feed};
    const std::vector<float>& logits = transformer.forward({&row, 1});
    const int next = static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    sequence.push_back(next);
    feed = {next};
  }
  return sequence;
}

// Logits at every position of `sequence`, one call without the cache.
std::vector<float> all_logits(Transformer& transformer, const std::vector<int>& sequence) {
  KvCache cache(transformer.model().config.kv_layout(), static_cast<int>(sequence.size()));
  const ForwardRow row{&cache, sequence, /*all_logits=*/true};
  return transformer.forward({&row, 1});
}

Comparison compare(Transformer& unmerged, Transformer& merged, const std::vector<std::vector<int>>& prompts) {
  Comparison result;
  for (const std::vector<int>& prompt : prompts) {
    const std::vector<int> a = greedy(unmerged, prompt, kComparedTokens);
    const std::vector<int> b = greedy(merged, prompt, kComparedTokens);
    int agree = 0;
    while (agree < kComparedTokens && a[prompt.size() + agree] == b[prompt.size() + agree]) ++agree;
    result.agreeing_tokens += agree;
    result.compared_tokens += kComparedTokens;
    const std::vector<float> la = all_logits(unmerged, a);
    const std::vector<float> lb = all_logits(merged, a);
    for (std::size_t i = 0; i < la.size(); ++i) {
      result.max_logit_difference = std::max(result.max_logit_difference, std::fabs(double(la[i]) - double(lb[i])));
    }
    result.positions += static_cast<int>(a.size());
  }
  return result;
}

DType parse_output_dtype(const std::string& name) {
  if (name == "f32") return DType::kF32;
  if (name == "f16") return DType::kF16;
  if (name == "bf16") return DType::kBF16;
  throw Error("--dtype must be f32, f16 or bf16");
}

int run_merge_lora(const MergeLoraFlags& flags) {
  const DType dtype = parse_output_dtype(flags.dtype);
  const std::filesystem::path out(flags.out);
  check_output_directory(out, "OUT");
  check_nothing_replaced(out, {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"},
                         "a model", flags.force);
  LoadedModel loaded = flags.model.load();
  std::cerr << adapter_note(*loaded.model) << "\n";
  if (loaded.model->weights.stored_quantization() != WeightType::kF32) {
    throw Error(loaded.path.string() + " is stored quantized; merge into the fp32/fp16 model, then quantize");
  }
  ModelWeights merged_weights = loaded.model->weights;
  merge_lora_into(merged_weights, *loaded.model->adapter);
  save_model_directory(out, loaded.model->config, merged_weights,
                       model_tokenizer_files(loaded, flags.model.tokenizer_option()), dtype);
  const auto bytes = std::filesystem::file_size(out / "model.safetensors");
  std::cout << "wrote " << out.string() << ": " << loaded.model->adapter->name << " merged into "
            << loaded.path.filename().string() << ", " << dtype_name(dtype) << " (model.safetensors "
            << with_thousands(static_cast<long long>(bytes)) << " B)\n";

  // The file as written (rounded to its type) against the adapter unmerged, in fp32.
  const LoadedModel merged = load_model(out);
  const Tokenizer& tokenizer = *loaded.tokenizer;
  const std::vector<std::vector<int>> prompts = {
      encode_chat_turn(tokenizer, ChatTurn{"", "Who are you?"}),
      encode_chat_turn(tokenizer, ChatTurn{"", "What does 'river' mean?"}),
      encode_base_prompt(tokenizer, "In the beginning"),
  };
  ThreadPool pool(flags.model.thread_count());
  Transformer unmerged_transformer(*loaded.model, pool);
  Transformer merged_transformer(*merged.model, pool);
  const Comparison c = compare(unmerged_transformer, merged_transformer, prompts);
  char difference[32];
  std::snprintf(difference, sizeof difference, "%.3g", c.max_logit_difference);
  std::cout << "merged vs unmerged on " << prompts.size() << " prompts: greedy tokens agree " << c.agreeing_tokens
            << " of " << c.compared_tokens << " (until the first difference); max |logit difference| " << difference
            << " over " << c.positions << " positions × " << loaded.model->config.vocab_size << " logits\n";
  return 0;
}

}  // namespace

CommandAction add_merge_lora_command(CLI::App& app) {
  auto flags = std::make_shared<MergeLoraFlags>();
  CLI::App* command = app.add_subcommand(
      "merge-lora",
      "write a model with a LoRA adapter merged in (W + B·A, MiniMind's merge_lora) and compare it with "
      "the adapter unmerged");
  command->add_option("MODEL", flags->model.model_path, "an HF directory, a MiniMind .pth or a shipped model's name")
      ->required();
  command->add_option("LORA", flags->model.lora_path, "the adapter: MiniMind's .pth, a PEFT folder or a GGUF adapter")
      ->required();
  command->add_option("OUT", flags->out, "directory to write (new or empty, or --force)")->required();
  command
      ->add_option("--dtype", flags->dtype,
                   "element type of the written weights: f16 (MiniMind's merge_lora), bf16 "
                   "or f32 [default: f16]")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  add_pth_flags(*command, flags->model.tokenizer_path, flags->model.num_q_heads, flags->model.yarn);
  add_threads_flag(*command, flags->model.threads);
  add_force_flag(*command, flags->force);
  return [flags] { return run_merge_lora(*flags); };
}

}  // namespace minigen::cli
