// `minigen generate`: one prompt, K sampled or greedy continuations, streamed text or one JSON object.
#include <chrono>
#include <climits>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command_context.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/grammar_flags.h"
#include "cli/json_output.h"
#include "cli/prompt_flags.h"
#include "cli/run_summary.h"
#include "cli/sampling_flags.h"
#include "core/error.h"
#include "core/profile_report.h"
#include "generate/generate.h"
#include "generate/memory_budget.h"
#include "generate/run_summary.h"
#include "request/output_grammar.h"
#include "request/reply_fields.h"
#include "request/request_error.h"
#include "tokenizer/stream_decoder.h"

namespace minigen::cli {
namespace {

struct GenerateFlags {
  ModelFlags model;
  PromptFlags prompt;
  SamplingFlags sampling;
  GrammarFlags grammar;
  int max_new_tokens = 256;
  bool no_cache = false;
  bool ignore_eos = false;
  int num_return_sequences = 1;
  bool json = false;
  bool profile = false;
};

int run_generate(const GenerateFlags& flags) {
  const SamplingParams sampling = flags.sampling.params();
  if (flags.max_new_tokens < 1) throw Error("-n/--max-new-tokens must be at least 1");
  if (flags.num_return_sequences < 1) throw Error("--num-return-sequences must be at least 1");
  const auto load_start = std::chrono::steady_clock::now();
  LoadedModel loaded = flags.model.load();
  if (const std::string note = adapter_note(*loaded.model); !note.empty()) std::cerr << note << "\n";
  const Tokenizer& tokenizer = *loaded.tokenizer;
  const std::vector<int> prompt = flags.prompt.encode(tokenizer);

  GenerateOptions options;
  options.max_new_tokens = flags.max_new_tokens;
  options.use_cache = !flags.no_cache;
  options.ignore_eos = flags.ignore_eos;
  options.sampling = sampling;
  options.kv_dtype = flags.model.kv_dtype_value();
  if (auto grammar = flags.grammar.compile(tokenizer, loaded.model->config)) options.grammars = {std::move(grammar)};
  if (auto forced = flags.prompt.forced_tool_call(tokenizer, loaded.model->config)) {
    try {
      check_one_output_grammar(!options.grammars.empty(), /*forces_tool_call=*/true);
    } catch (const RequestError&) {
      throw Error("--tool-choice " + flags.prompt.tool_choice +
                  " forces a tool call; it cannot be combined with --json-schema or --json-object");
    }
    options.grammars = {std::move(forced)};
  }
  const std::vector<std::vector<int>> prompts(flags.num_return_sequences, prompt);
  // generate() makes the same check; making it here first lets the message name the flags.
  check_run_memory(loaded.model->config, generation_shape(prompts, options),
                   "lower --num-return-sequences or -n/--max-new-tokens");

  ThreadPool pool(flags.model.thread_count());
  const WeightType weight_type = flags.model.weight_type(*loaded.model);
  Transformer transformer(*loaded.model, pool, weight_type, flags.model.activation_codes(weight_type));
  loaded.model->release_matrices();  // the packed copy is the one that runs
  transformer.warm_up();             // generate() would do it too, but here it stays out of the profile's wall time
  // Text streams as tokens arrive when there is one row; several rows are printed one after another at the end.
  const bool stream = !flags.json && flags.num_return_sequences == 1;
  StreamDecoder decoder(tokenizer, /*skip_special_tokens=*/true);
  TokenCallback on_token;
  if (stream) {
    on_token = [&](const TokenEvent& event) { std::cout << decoder.push(event.token) << std::flush; };
  }
  set_profiling(flags.profile);  // after loading: the profile's wall time is the generation's
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
  GenerateResult result = generate(transformer, prompts, options, on_token);
  result.stats.load_ms += load_ms;
  set_profiling(false);
  const std::string profile = flags.profile ? profile_table(profile_snapshot()) : "";

  if (flags.json) {
    nlohmann::json summary =
        run_summary_json(result, tokenizer, options, loaded.path, run_memory(transformer), loaded.model->adapter.get());
    if (!flags.prompt.chat.empty()) add_chat_reply_fields(summary, flags.prompt.thinking, flags.prompt.offers_tools());
    if (flags.profile) summary["profile"] = profile_json(profile_snapshot());
    std::cout << to_json_text(summary) << "\n";
    std::cerr << profile;
    return 0;
  }
  if (stream) {
    std::cout << decoder.finish() << "\n";
  } else {
    for (std::size_t row = 0; row < result.sequences.size(); ++row) {
      std::cout << "[" << row + 1 << "] " << tokenizer.decode(result.sequences[row].token_ids, true) << "\n";
    }
  }
  std::cerr << run_summary_line(result, run_memory(transformer)) << "\n" << profile;
  return 0;
}

}  // namespace

CommandAction add_generate_command(CLI::App& app) {
  auto flags = std::make_shared<GenerateFlags>();
  CLI::App* command = app.add_subcommand("generate", "generate text from a prompt (MiniMind's generate loop)");
  flags->model.add_to(*command);
  add_lora_flag(*command, flags->model.lora_path);
  flags->prompt.add_to(*command);
  flags->sampling.add_to(*command);
  flags->grammar.add_to(*command);
  command->add_option("-n,--max-new-tokens", flags->max_new_tokens, "tokens to generate at most")
      ->check(integer_in(1, INT_MAX))
      ->default_val(256);
  command->add_flag("--no-cache", flags->no_cache, "re-feed the whole sequence at every step (no KV cache)");
  command->add_flag("--ignore-eos", flags->ignore_eos, "keep going past eos: exactly -n tokens per row");
  command->add_option("--num-return-sequences", flags->num_return_sequences, "rows: copies of the prompt")
      ->check(integer_in(1, kMaxBatchRows))
      ->default_val(1);
  command->add_flag("--json", flags->json,
                    "print one JSON object with the tokens, counters and timings (for --chat also each reply's "
                    "reasoning_content, content and tool_calls)");
  command->add_flag("--profile", flags->profile,
                    "print the time spent per zone (forward, attention, matmul, sampling, …) to stderr, and as "
                    "\"profile\" in --json");
  return [flags] { return run_generate(*flags); };
}

}  // namespace minigen::cli
