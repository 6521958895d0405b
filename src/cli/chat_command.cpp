// `minigen chat`: an interactive conversation that keeps its history and re-renders it with ChatML each turn.
#include <climits>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command_context.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/run_summary.h"
#include "cli/sampling_flags.h"
#include "core/error.h"
#include "core/file_io.h"
#include "generate/generate.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/stream_decoder.h"

namespace minigen::cli {
namespace {

struct ChatFlags {
  ModelFlags model;
  SamplingFlags sampling;
  std::string system;
  int max_new_tokens = 256;
  bool thinking = false;
  bool show_stats = false;
};

int run_chat(const ChatFlags& flags) {
  GenerateOptions options;
  options.sampling = flags.sampling.params();
  options.max_new_tokens = flags.max_new_tokens;
  options.kv_dtype = flags.model.kv_dtype_value();
  if (flags.max_new_tokens < 1) throw Error("-n/--max-new-tokens must be at least 1");
  LoadedModel loaded = flags.model.load();
  if (const std::string note = adapter_note(*loaded.model); !note.empty()) std::cerr << note << "\n";
  const Tokenizer& tokenizer = *loaded.tokenizer;
  ThreadPool pool(flags.model.thread_count());
  const WeightType weight_type = flags.model.weight_type(*loaded.model);
  Transformer transformer(*loaded.model, pool, weight_type, flags.model.activation_codes(weight_type));
  loaded.model->release_matrices();  // the packed copy is the one that runs

  std::vector<ChatMessage> history;
  if (!flags.system.empty()) history.push_back({"system", flags.system});
  std::cerr << "minigen chat — " << loaded.path.string()
            << ". Type a message; /reset clears the history, /quit ends.\n";
  std::string line;
  while (true) {
    std::cout << "> " << std::flush;
    // Bounded, so that endless input without a newline (stdin from /dev/zero) is an error, not unbounded memory.
    if (!read_bounded_line(std::cin, line, kMaxLineBytes, "a chat message") || line == "/quit") break;
    if (line.empty()) continue;
    if (line == "/reset") {
      history.resize(flags.system.empty() ? 0 : 1);
      std::cerr << "(history cleared)\n";
      continue;
    }
    history.push_back({"user", line});
    const std::vector<std::vector<int>> prompts = {
        encode_chatml(tokenizer, history, /*add_generation_prompt=*/true, flags.thinking)};
    StreamDecoder decoder(tokenizer, /*skip_special_tokens=*/true);
    GenerateResult result;
    try {
      result = generate(transformer, prompts, options,
                        [&](const TokenEvent& event) { std::cout << decoder.push(event.token) << std::flush; });
    } catch (const Error& e) {
      // A conversation that outgrew the context: say so and let the user reset, rather than ending the session.
      history.pop_back();
      std::cerr << "minigen: error: " << e.what() << " (use /reset)\n";
      continue;
    }
    std::cout << decoder.finish() << "\n";
    history.push_back({"assistant", tokenizer.decode(result.sequences.front().token_ids, true)});
    if (flags.show_stats) std::cerr << run_summary_line(result, run_memory(transformer)) << "\n";
    // Each turn draws from fresh per-row streams: move the seed on so that turns do not repeat each other's draws.
    options.sampling.seed += 1;
  }
  return 0;
}

}  // namespace

CommandAction add_chat_command(CLI::App& app) {
  auto flags = std::make_shared<ChatFlags>();
  CLI::App* command = app.add_subcommand("chat", "talk with a chat (SFT) model; keeps the conversation's history");
  flags->model.add_to(*command);
  add_lora_flag(*command, flags->model.lora_path);
  flags->sampling.add_to(*command);
  command->add_option("--system", flags->system, "a system message that starts the conversation");
  command->add_option("-n,--max-new-tokens", flags->max_new_tokens, "reply length at most")
      ->check(integer_in(1, INT_MAX))
      ->default_val(256);
  command->add_flag("--think", flags->thinking, "let the model think (open <think> block)");
  command->add_flag("--stats", flags->show_stats, "print the counters and timings after each reply");
  return [flags] { return run_chat(*flags); };
}

}  // namespace minigen::cli
