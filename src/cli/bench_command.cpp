// `minigen bench`: llama-bench-style speed measurements — prefill, decode, batched decode, TTFT, decoding without
// the cache — each against the memory-bandwidth bound measured in the same run.
#include <iostream>
#include <memory>

#include "bench/bench_runner.h"
#include "bench/system_description.h"
#include "cli/command_context.h"
#include "cli/commands.h"
#include "cli/json_output.h"
#include "cli/prompt_flags.h"
#include "core/child_process.h"
#include "core/error.h"
#include "core/profile_report.h"
#include "model/weights.h"

namespace minigen::cli {
namespace {

constexpr std::string_view kRandomPrefix = "random:";
// Random models are only for speed, but a fixed seed keeps their greedy tokens (and the drift check) reproducible.
constexpr uint64_t kRandomModelSeed = 1;

struct BenchCommandFlags {
  std::string model;
  std::string tokenizer;
  std::string heads = "8";
  bench::BenchFlagValues values;
  std::string one_shot_text;
  bool json = false;
  bool profile = false;
};

// The model to measure: a file or directory as every command takes, or a family's random model built in memory,
// so that a 104 M-parameter MiniMind2 can be timed without a file.
struct BenchModel {
  std::unique_ptr<const Model> random_model;
  LoadedModel loaded;
  bench::ModelDescription description;

  const Model& model() const { return random_model ? *random_model : *loaded.model; }
};

BenchModel load_bench_model(const BenchCommandFlags& flags) {
  BenchModel bench_model;
  if (flags.model.rfind(kRandomPrefix, 0) == 0) {
    const std::string family = flags.model.substr(kRandomPrefix.size());
    const ModelConfig config = config_for_family(family);
    std::cerr << "[bench] building a random " << family << " model (" << config.parameter_count()
              << " parameters, seed " << kRandomModelSeed << ")\n";
    bench_model.random_model = std::make_unique<Model>(config, random_weights(config, kRandomModelSeed));
    bench_model.description.source = flags.model;
  } else {
    ModelFlags model_flags;
    model_flags.model_path = flags.model;
    model_flags.tokenizer_path = flags.tokenizer;
    model_flags.num_q_heads = bench::parse_positive_int("--heads", flags.heads, 1024);
    bench_model.loaded = model_flags.load();
    bench_model.description.source = bench_model.loaded.path.string();
  }
  const ModelConfig& config = bench_model.model().config;
  bench_model.description.family = identify_family(config);
  bench_model.description.parameters = config.parameter_count();
  bench_model.description.context = config.max_position_embeddings;
  bench_model.description.vocab_size = config.vocab_size;
  return bench_model;
}

// --one-shot TEXT: the text as `generate -f` encodes it, and the flags that make a fresh minigen load the same model.
bench::OneShotPrompt one_shot_prompt(const BenchCommandFlags& flags, const BenchModel& bench_model) {
  PromptFlags prompt;
  prompt.file = flags.one_shot_text;
  bench::OneShotPrompt one_shot;
  one_shot.text_path = std::filesystem::absolute(flags.one_shot_text);
  one_shot.ids = prompt.encode(*bench_model.loaded.tokenizer);
  one_shot.program = this_executable();
  one_shot.model_arguments = {"-m", bench_model.loaded.path.string()};
  if (!flags.tokenizer.empty())
    one_shot.model_arguments.insert(one_shot.model_arguments.end(), {"--tokenizer", flags.tokenizer});
  one_shot.model_arguments.insert(one_shot.model_arguments.end(), {"--heads", flags.heads});
  return one_shot;
}

int run_bench_command(const BenchCommandFlags& flags) {
  // Bad flags fail before a model is loaded or built.
  const bench::BenchOptions options = bench::bench_options_from_flags(flags.values, ThreadPool::default_thread_count());
  if (!flags.one_shot_text.empty() && flags.model.rfind(kRandomPrefix, 0) == 0) {
    throw Error("--one-shot runs `minigen generate` on the model, so it needs a model file with a tokenizer, not " +
                flags.model);
  }
  const BenchModel bench_model = load_bench_model(flags);
  bench::BenchOptions measured = options;
  if (!flags.one_shot_text.empty()) measured.one_shot = one_shot_prompt(flags, bench_model);
  set_profiling(flags.profile);  // the whole run: every test, warm-ups and the bandwidth measurement included
  bench::BenchReport report = bench::run_bench(bench_model.model(), bench_model.description, measured, std::cerr);
  set_profiling(false);
  if (flags.profile) std::cerr << profile_table(profile_snapshot());
  report.system = bench::describe_system();
  if (flags.json) {
    nlohmann::json json = bench::report_json(report);
    if (flags.profile) json["profile"] = profile_json(profile_snapshot());
    std::cout << to_json_text(json) << "\n";
  } else {
    std::cout << bench::render_text(report);
  }
  return 0;
}

}  // namespace

CommandAction add_bench_command(CLI::App& app) {
  auto flags = std::make_shared<BenchCommandFlags>();
  CLI::App* command = app.add_subcommand(
      "bench",
      "measure speed like llama-bench: pp, tg, batched decode, TTFT, no-cache tg, against the bandwidth bound");
  command->add_option("-m,--model", flags->model,
                      "an HF directory or .pth, or random:FAMILY (tiny, minimind2, minimind3, …: random weights "
                      "built in memory) [default: the shipped minigen-tiny-sft]");
  command->add_option("--tokenizer", flags->tokenizer, "tokenizer.json or its directory (default: beside the model)");
  command->add_option("--heads", flags->heads, "query heads of a .pth model [default: 8]");
  command->add_option("-p,--prompt", flags->values.prompt_tokens,
                      "prompt tokens of pp and TTFT [default: 512; quick 64]");
  command->add_option("-n,--gen", flags->values.generate_tokens,
                      "tokens generated by tg and each batch test [default: 128; quick 16]");
  command->add_option("-b,--batch", flags->values.batch_sizes,
                      "rows of the batch decode tests, comma-separated [default: 1,8,32; quick 1,4]");
  command->add_option("--threads", flags->values.threads, "thread counts, comma-separated [default: one per core]");
  command->add_option("--weights", flags->values.weights,
                      "weight types f32, f16, bf16, q8, q4, comma-separated [default: f32]");
  command->add_option("--activations", flags->values.activations,
                      "q8/q4 activation codes int16, int8, comma-separated: each q8/q4 type runs once per entry (q4 "
                      "with int8 only) [default: each type's own, q8 int16 and q4 int8]");
  command->add_option("--kv-dtype", flags->values.kv_dtypes,
                      "KV cache types f32, bf16, f16, int8, comma-separated: the first for every test, each for "
                      "--long-context [default: f32]");
  command->add_option("--long-context", flags->values.long_context,
                      "also decode 32 tokens after prompts of these lengths, comma-separated (e.g. 8192,16384), "
                      "once per --kv-dtype; the prompt is prefilled once, untimed [default: off]");
  command->add_option("--lora-rank", flags->values.lora_rank,
                      "also time LoRA adapters: random ones of this rank in MiniMind's shape (q_proj and o_proj): tg "
                      "with one adapter, and 32 rows over 4 adapters against the same batch without and against one "
                      "batch per adapter [default: off]");
  command->add_option("--lora", flags->values.lora_path,
                      "the same LoRA tests with a real adapter (MiniMind .pth, PEFT folder or GGUF) and 3 copies of it "
                      "[default: off]");
  command->add_option("--one-shot", flags->one_shot_text,
                      "also run `minigen generate -f FILE --greedy -n N` as a fresh process, in turn with the same "
                      "generation warm in this one: its TTFT against the warm TTFT and its inter-token time against "
                      "tg's step [default: off]");
  command->add_option("-r,--repetitions", flags->values.repetitions,
                      "timed runs per test, after one warm-up [default: 5; quick 2]");
  command->add_flag("--no-cache", flags->values.no_cache,
                    "also generate without the KV cache (slow: P·N + N(N−1)/2 tokens)");
  command->add_flag("--quick", flags->values.quick, "smaller sizes, 2 repetitions, a 512 MiB DRAM buffer: seconds");
  command->add_flag("--json", flags->json,
                    "print one JSON object with every number instead of the text and table (progress stays on stderr)");
  command->add_flag("--profile", flags->profile,
                    "print the time spent per zone over the whole run to stderr, and as \"profile\" in --json");
  return [flags] { return run_bench_command(*flags); };
}

}  // namespace minigen::cli
