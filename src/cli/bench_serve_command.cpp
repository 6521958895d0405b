// `minigen bench-serve`: the serving load test — many streaming clients against `minigen serve` (a running one at
// --url, or one started in this process), then the checks: no errors, no leaked KV block, a real batching speed-up.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/byte_size.h"
#include "cli/command_context.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/json_output.h"
#include "core/error.h"
#include "loadtest/load_tester.h"
#include "loadtest/rollout_bench.h"
#include "loadtest/soak_runner.h"

namespace minigen::cli {
namespace {

struct BenchServeFlags {
  std::string url;  // empty: start a server in this process
  ModelFlags model;
  std::string kv_budget = "256MiB";
  int max_batch = 32;
  int token_budget = 256;
  load_test::LoadTestOptions load;
  double soak_minutes = 0;
  double soak_sample_seconds = 60;
  std::string rollout;  // "BxGxN": MiniMind's rollout shape instead of the load test
  load_test::RolloutBenchOptions rollout_options;
  bool json = false;
  bool quick = false;
};

// "123.4 ms", or "–" when no request produced the number.
std::string milliseconds(double value) {
  if (std::isnan(value)) return "–";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f ms", value);
  return text;
}

void print_line(const char* label, const std::string& text) { std::printf("%-15s %s\n", label, text.c_str()); }

std::string format(const char* pattern, double a, double b = 0, double c = 0) {
  char text[256];
  std::snprintf(text, sizeof text, pattern, a, b, c);
  return text;
}

void print_phase_row(const char* label, const load_test::PhaseResult& phase) {
  std::printf("  %-16s %9.2f %9lld %11.1f %12.2f %14s %16s\n", label, phase.wall_seconds,
              static_cast<long long>(phase.tokens()), phase.tokens_per_second(), phase.requests_per_second(),
              milliseconds(phase.ttft_percentile_ms(50)).c_str(),
              milliseconds(phase.latency_percentile_ms(50)).c_str());
}

void print_report(const load_test::LoadTestReport& report, const std::string& server_description) {
  const load_test::LoadTestOptions& options = report.options;
  int chat = 0, shared = 0, planned = 0, not_cancelled = 0, done = 0;
  for (std::size_t i = 0; i < report.requests.size(); ++i) {
    chat += report.requests[i].chat;
    shared += report.requests[i].shared_prefix;
    planned += report.requests[i].cancel_after_tokens > 0;
    if (!report.load.outcomes[i].cancelled) {
      ++not_cancelled;
      done += report.load.outcomes[i].done;
    }
  }
  const int requests = static_cast<int>(report.requests.size());
  std::printf("minigen bench-serve · %s\n\n", server_description.c_str());
  print_line("load", std::to_string(requests) + " streaming requests, " + std::to_string(options.concurrency) +
                         " at a time · " + std::to_string(chat) + " chat / " + std::to_string(requests - chat) +
                         " completion · " + std::to_string(shared) + " behind the shared system prompt");
  print_line("", "short, medium and long prompts · max_tokens " + std::to_string(std::min(16, options.max_tokens)) +
                     "–" + std::to_string(options.max_tokens) + " · temperature 0.8, a seed per request");
  print_line("wall time", format("%.2f s", report.load.wall_seconds));
  print_line("throughput",
             format("%.1f generated tokens/s · %.2f requests/s (%.0f tokens)", report.load.tokens_per_second(),
                    report.load.requests_per_second(), static_cast<double>(report.load.tokens())));
  print_line("TTFT", "p50 " + milliseconds(report.load.ttft_percentile_ms(50)) + " · p99 " +
                         milliseconds(report.load.ttft_percentile_ms(99)));
  print_line("latency", "p50 " + milliseconds(report.load.latency_percentile_ms(50)) + " · p99 " +
                            milliseconds(report.load.latency_percentile_ms(99)));
  print_line("errors", std::to_string(report.load.errors()));
  print_line("cancelled", std::to_string(report.load.cancelled()) + " closed mid-stream (" + std::to_string(planned) +
                              " planned after 1–" + std::to_string(std::max(1, options.max_tokens / 4)) +
                              " tokens; the others finished first)");
  print_line("[DONE]", std::to_string(done) + " of the " + std::to_string(not_cancelled) + " requests not cancelled");
  print_line(
      "leaked blocks",
      std::to_string(report.after_load.kv_blocks_used) +
          (report.after_load.drained ? format(" (server idle %.2f s after the last request)", report.after_load.seconds)
                                     : format(" (server still busy after %.0f s)", report.after_load.seconds)));
  const load_test::PrefixCacheUse& prefix = report.prefix_cache;
  print_line(
      "prefix cache",
      format("%.0f of %.0f block lookups hit", static_cast<double>(prefix.block_hits),
             static_cast<double>(prefix.block_lookups)) +
          format(" · %.0f of %.0f prompt tokens cached (%.1f %%)", static_cast<double>(prefix.prompt_tokens_cached),
                 static_cast<double>(prefix.prompt_tokens_cached + prefix.prompt_tokens_computed),
                 100.0 * prefix.cached_fraction()));

  if (!report.sequential_requests.empty()) {
    std::printf(
        "\ncomparison      %zu decode-bound requests (short prompts, exactly %d new tokens each), no cancellations\n",
        report.sequential_requests.size(), report.sequential_requests.front().max_tokens);
    std::printf("  %-16s %9s %9s %11s %12s %14s %16s\n", "", "wall s", "tokens", "tokens/s", "requests/s", "TTFT p50",
                "latency p50");
    print_phase_row("one at a time", report.sequential);
    print_phase_row((std::to_string(options.concurrency) + " at a time").c_str(), report.concurrent);
    print_line("speed-up", format("%.2f× in tokens/s (target ≥ 5×)", report.speedup()));
    print_line("errors",
               std::to_string(report.sequential.errors() + report.concurrent.errors()) +
                   format(" · leaked blocks at the end %.0f", static_cast<double>(report.at_end.kv_blocks_used)));
  }
  std::printf("\n");
  print_line("result", std::string(report.passed() ? "PASS" : "FAIL") + " (" + std::to_string(report.errors()) +
                           " errors, " + std::to_string(report.leaked_blocks()) + " leaked blocks)");
}

void print_first_errors(const load_test::LoadTestReport& report) {
  int shown = 0;
  for (const load_test::PhaseResult* phase : {&report.load, &report.concurrent, &report.sequential}) {
    for (const load_test::RequestOutcome& outcome : phase->outcomes) {
      if (!outcome.error.empty() && shown++ < 5) std::cerr << "[bench-serve] error: " << outcome.error << "\n";
    }
  }
}

int run_soak(const BenchServeFlags& flags, const std::string& url, const std::string& description) {
  load_test::SoakOptions options;
  options.minutes = flags.soak_minutes;
  options.sample_seconds = flags.soak_sample_seconds;
  options.concurrency = flags.load.concurrency;
  options.max_tokens = flags.load.max_tokens;
  options.cancel_fraction = flags.load.cancel_fraction;
  options.seed = flags.load.seed;
  options.progress = &std::cerr;
  const load_test::SoakReport report = load_test::run_soak(url, options);
  if (flags.json) {
    std::cout << to_json_text(load_test::soak_json(report)) << "\n";
  } else {
    std::printf("minigen bench-serve --soak · %s\n\n", description.c_str());
    print_line("load",
               format("%.1f min, %.0f clients back to back", report.options.minutes, report.options.concurrency));
    print_line("requests", std::to_string(report.requests) + ": " + std::to_string(report.generations) +
                               " streaming generations (" + std::to_string(report.cancelled) + " closed mid-stream), " +
                               std::to_string(report.abandoned) + " abandoned non-streaming, " +
                               std::to_string(report.bad_requests) + " bad requests");
    print_line("unexpected", std::to_string(report.unexpected) + " (wrong status, broken stream, transport error)");
    std::printf("%-15s %8s %10s %11s %9s %12s\n", "samples", "seconds", "requests", "unexpected", "RSS MB",
                "KV in use");
    for (const load_test::SoakSample& point : report.samples) {
      std::printf("%-15s %8.0f %10lld %11lld %9.1f %12lld\n", "", point.seconds, static_cast<long long>(point.requests),
                  static_cast<long long>(point.unexpected), point.rss_mb, static_cast<long long>(point.kv_blocks_used));
    }
    print_line("RSS slope",
               format("%+.3f MB per 1,000 requests after the first third of the run", report.rss_slope_mb_per_1000));
    print_line("leaked blocks", std::to_string(report.leaked_blocks) + (report.drained ? "" : " (server not idle)"));
    print_line("result", report.passed() ? "PASS" : "FAIL");
  }
  for (const std::string& error : report.first_errors) std::cerr << "[soak] error: " << error << "\n";
  return report.passed() ? 0 : 1;
}

// "4x6x256" → batch, generations, new tokens.
void parse_rollout_shape(const std::string& shape, load_test::RolloutBenchOptions& options) {
  int values[3] = {0, 0, 0};
  char x1 = 0, x2 = 0;
  int consumed = 0;
  if (std::sscanf(shape.c_str(), "%d%c%d%c%d%n", &values[0], &x1, &values[1], &x2, &values[2], &consumed) != 5 ||
      consumed != static_cast<int>(shape.size()) || x1 != 'x' || x2 != 'x' || values[0] < 1 || values[1] < 1 ||
      values[2] < 1 || values[0] * values[1] > 1024 || values[2] > 1 << 16) {
    throw Error("--rollout takes BxGxN (prompts x generations x new tokens, B·G ≤ 1024), e.g. 4x6x256; got '" + shape +
                "'");
  }
  options.batch = values[0];
  options.generations = values[1];
  options.new_tokens = values[2];
}

int run_rollout(const BenchServeFlags& flags, const std::string& url, const std::string& description) {
  const load_test::RolloutBenchReport report = load_test::run_rollout_bench(url, flags.rollout_options);
  if (flags.json) {
    std::cout << to_json_text(load_test::rollout_report_json(report)) << "\n";
  } else {
    const load_test::RolloutBenchOptions& options = report.options;
    std::printf("minigen bench-serve --rollout · %s\n\n", description.c_str());
    print_line("rollout", std::to_string(options.batch) + " prompts × " + std::to_string(options.generations) +
                              " generations × " + std::to_string(options.new_tokens) + " new tokens (prompts of " +
                              std::to_string(options.prompt_tokens) +
                              " ids) in one /generate, temperature 0.8, return_logprob — what "
                              "SGLangRolloutEngine.rollout() sends");
    for (std::size_t r = 0; r < report.rounds.size(); ++r) {
      const load_test::RolloutRound& round = report.rounds[r];
      if (round.update_seconds > 0) {
        print_line("update", format("%.3f s from the client (server: load and pack %.3f s, switch %.3f s)",
                                    round.update_seconds, round.server_load_seconds, round.server_switch_seconds));
      }
      print_line(("round " + std::to_string(r + 1)).c_str(),
                 format("%.0f tokens in %.2f s · %.0f tokens/s", static_cast<double>(round.tokens), round.wall_seconds,
                        round.tokens_per_second()) +
                     " · " + std::to_string(round.cached_tokens) + " prompt tokens from the prefix cache");
    }
    print_line("result", report.passed() ? "PASS" : "FAIL");
  }
  for (const std::string& error : report.errors) std::cerr << "[bench-serve] error: " << error << "\n";
  return report.passed() ? 0 : 1;
}

int run_bench_serve_command(BenchServeFlags flags, const CLI::App& command) {
  if (flags.quick) {  // the ctest-sized run; explicit flags still win
    if (command.count("--requests") == 0) flags.load.requests = 40;
    if (command.count("--concurrency") == 0) flags.load.concurrency = 8;
    if (command.count("--max-tokens") == 0) flags.load.max_tokens = 24;
    if (command.count("--compare-sequential") == 0) flags.load.compare_requests = 8;
  }
  flags.load.progress = &std::cerr;
  if (!flags.rollout.empty()) parse_rollout_shape(flags.rollout, flags.rollout_options);
  if (!flags.rollout_options.update_from.empty() && flags.url.empty()) {  // the server is this process
    flags.rollout_options.update_from = std::filesystem::absolute(flags.rollout_options.update_from).string();
  }

  std::unique_ptr<LoadedModel> loaded;
  std::unique_ptr<load_test::LocalServer> server;
  std::string url = flags.url;
  std::string description = url;
  if (url.empty()) {
    load_test::LocalServerOptions options;
    options.threads = flags.model.thread_count();
    options.kv_budget_bytes = parse_byte_size(flags.kv_budget);
    options.max_batch = flags.max_batch;
    options.token_budget = flags.token_budget;
    // The whole load may be queued at once; the test is about the engine, not the 429 path.
    options.max_queue = std::max(256, flags.load.requests);
    options.kv_dtype = flags.model.kv_dtype_value();
    loaded = std::make_unique<LoadedModel>(flags.model.load());
    options.weight_type = flags.model.weight_type(*loaded->model);
    options.activations = flags.model.activation_codes(options.weight_type);
    const std::string name = loaded->path.filename().string();
    server = std::make_unique<load_test::LocalServer>(*loaded->model, *loaded->tokenizer, name, options);
    url = server->url();
    description = url + " (in-process: " + name + ", " + std::to_string(server->threads()) + " threads, " +
                  std::to_string(server->kv_blocks()) + " KV blocks of " +
                  std::string(kv_dtype_name(options.kv_dtype)) + ", max batch " + std::to_string(flags.max_batch) + ")";
    std::cerr << "[bench-serve] started " << description << "\n";
  } else if (!flags.model.model_path.empty()) {
    throw Error("-m and --url exclude each other: --url tests a server that already runs its model");
  }

  if (flags.soak_minutes > 0) return run_soak(flags, url, description);
  if (!flags.rollout.empty()) return run_rollout(flags, url, description);
  const load_test::LoadTestReport report = load_test::run_load_test(url, flags.load);
  if (flags.json) {
    std::cout << to_json_text(load_test::report_json(report)) << "\n";
  } else {
    print_report(report, description);
  }
  print_first_errors(report);
  return report.passed() ? 0 : 1;
}

}  // namespace

CommandAction add_bench_serve_command(CLI::App& app) {
  auto flags = std::make_shared<BenchServeFlags>();
  CLI::App* command = app.add_subcommand(
      "bench-serve",
      "serving load test: concurrent streaming clients, cancellations, prefix sharing; errors, leaked KV blocks, "
      "TTFT/latency percentiles and the speed-up of batching over one-at-a-time");
  command->add_option("--url", flags->url,
                      "test a running server, e.g. http://127.0.0.1:8080 [default: start one "
                      "in this process on a free port]");
  flags->model.add_to(*command);
  command->add_option("--kv-budget", flags->kv_budget, "in-process server: memory for the KV cache pool")
      ->default_val("256MiB");
  command->add_option("--max-batch", flags->max_batch, "in-process server: sequences decoded together at most")
      ->default_val(32)
      ->check(integer_in(1, 4096));
  command->add_option("--token-budget", flags->token_budget, "in-process server: tokens fed per step")
      ->default_val(256)
      ->check(integer_in(1, 1 << 20));
  command->add_option("--request-model", flags->load.model,
                      "the \"model\" every request names, e.g. a LoRA adapter the server serves [default: none, the "
                      "base model]");
  command->add_option("--requests", flags->load.requests, "requests in the load phase")
      ->default_val(200)
      ->check(integer_in(1, 1 << 20));
  command->add_option("--concurrency", flags->load.concurrency, "clients sending at once")
      ->default_val(32)
      ->check(integer_in(1, 128));
  command
      ->add_option("--cancel-fraction", flags->load.cancel_fraction,
                   "share of load requests the client closes mid-stream")
      ->default_val(0.1)
      ->check(number_in(0.0, 1.0));
  command->add_option("--max-tokens", flags->load.max_tokens, "largest max_tokens of a request (each draws 16..this)")
      ->default_val(64)
      ->check(integer_in(1, 1 << 16));
  command
      ->add_option("--compare-sequential", flags->load.compare_requests,
                   "requests run one at a time and then concurrently for the speed-up (0: skip)")
      ->default_val(24)
      ->check(integer_in(0, 1 << 16));
  command->add_option("--seed", flags->load.seed, "seed of the request mix")->default_val(1)->check(seed_value());
  command
      ->add_option("--soak", flags->soak_minutes,
                   "instead of the load test: steady load for this many minutes with cancellations and bad "
                   "requests mixed in, the server's RSS sampled (see --soak-sample)")
      ->check(number_in(0.0, 24.0 * 60));
  command->add_option("--soak-sample", flags->soak_sample_seconds, "seconds between the soak's samples")
      ->default_val(60)
      ->check(number_in(0.5, 3600.0));
  command->add_option("--rollout", flags->rollout,
                      "instead of the load test: MiniMind's RL rollout shape BxGxN (B prompts x G generations x N "
                      "new tokens, e.g. 4x6x256) through /generate with logprobs, as SGLangRolloutEngine sends it");
  command->add_option("--rollout-rounds", flags->rollout_options.rounds, "--rollout: rollouts one after another")
      ->default_val(2)
      ->check(integer_in(1, 1000));
  command->add_option("--prompt-tokens", flags->rollout_options.prompt_tokens, "--rollout: each prompt's length")
      ->default_val(40)
      ->check(integer_in(1, 1 << 16));
  command->add_option("--update-from", flags->rollout_options.update_from,
                      "--rollout: POST /update_weights_from_disk with this directory before every round but the "
                      "first, as update_policy does (give an absolute path when --url names a server elsewhere)");
  command->add_flag("--json", flags->json, "print one JSON object with every number");
  command->add_flag("--quick", flags->quick,
                    "a run for CI: 40 requests, concurrency 8, max_tokens 24, comparison of 8 (explicit flags win)");
  return [flags, command] { return run_bench_serve_command(*flags, *command); };
}

}  // namespace minigen::cli
