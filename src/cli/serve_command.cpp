// `minigen serve`: the OpenAI-compatible HTTP server with continuous batching over a paged KV cache.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/byte_size.h"
#include "cli/command_context.h"
#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "core/error.h"
#include "core/profiler.h"
#include "serve/server_stack.h"

namespace minigen::cli {
namespace {

struct ServeFlags {
  ModelFlags model;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string kv_budget = "256MiB";
  int max_batch = 32;
  int token_budget = 256;
  int max_queue = 256;
  std::string api_key;
  std::string cors_origin;
  double drain_timeout_s = 10;
  double request_timeout_s = 10;
  double idle_timeout_s = 5;
  int max_connections = 512;
  bool profile = false;
  std::string served_model_name;  // empty: the model folder's or file's name
  std::vector<std::string> lora;  // NAME=FILE or FILE (named by its stem), each served beside the base model
  bool allow_runtime_lora = false;
};

// --lora NAME=FILE, or FILE alone (the adapter is then called by the file's stem, as `generate --lora` names it).
// A '=' counts only before the first '/', so a path that holds one is still a path.
std::pair<std::string, std::string> adapter_name_and_file(const std::string& flag) {
  const std::size_t equals = flag.find('=');
  if (equals != std::string::npos && flag.find('/') > equals) return {flag.substr(0, equals), flag.substr(equals + 1)};
  std::filesystem::path file(flag);
  if (file.filename().empty()) file = file.parent_path();  // a PEFT folder given as "dir/"
  return {file.stem().string(), flag};
}

std::chrono::milliseconds to_milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
}

void print_capacity(const ServerStack& stack, const LoadedModel& loaded, const ServeFlags& flags, int port) {
  const ModelConfig& config = loaded.model->config;
  const int blocks = stack.blocks().total_blocks();
  // Capacity, the way vLLM reports it: the KV cache in tokens, and how many requests of a given length fit at once.
  const int64_t tokens = static_cast<int64_t>(blocks) * BlockPool::kBlockTokens;
  std::fprintf(stderr, "[minigen] model %s: %d layers, %d kv heads × %d, weights %s (%.1f MB), %d threads\n",
               loaded.path.string().c_str(), config.num_layers, config.num_kv_heads, config.head_dim,
               std::string(weight_type_name(stack.transformer().weight_type())).c_str(),
               stack.transformer().weight_bytes() / 1e6, stack.transformer().pool().num_threads());
  const std::size_t block_bytes = stack.blocks().block_bytes();
  std::fprintf(stderr,
               "[minigen] KV cache %s: %d blocks × %d tokens = %lld tokens (%.1f MiB, %zu bytes per block, %zu per "
               "token)\n",
               std::string(kv_dtype_name(stack.blocks().dtype())).c_str(), blocks, BlockPool::kBlockTokens,
               static_cast<long long>(tokens), static_cast<double>(blocks) * block_bytes / (1024.0 * 1024.0),
               block_bytes, block_bytes / BlockPool::kBlockTokens);
  for (int length : {512, 2048, config.max_position_embeddings}) {
    const int64_t per_request = (length + BlockPool::kBlockTokens - 1) / BlockPool::kBlockTokens;
    std::fprintf(stderr, "[minigen] maximum concurrency for %d tokens per request: %.2fx\n", length,
                 static_cast<double>(blocks) / per_request);
  }
  const int64_t context_blocks =
      (config.max_position_embeddings + BlockPool::kBlockTokens - 1) / BlockPool::kBlockTokens;
  if (blocks < context_blocks) {
    // vLLM refuses to start in this case; minigen serves, and refuses each request that would outgrow the pool.
    const double needed_mib = static_cast<double>(context_blocks) * block_bytes / (1024.0 * 1024.0);
    std::fprintf(stderr,
                 "[minigen] warning: --kv-budget %s holds %lld tokens, fewer than one request of the model's full "
                 "context (%d tokens): a request whose prompt and max_tokens need more is refused with a 400; "
                 "--kv-budget %.0fMiB holds one\n",
                 flags.kv_budget.c_str(), static_cast<long long>(tokens), config.max_position_embeddings,
                 std::ceil(needed_mib));
  }
  std::fprintf(stderr,
               "[minigen] batch up to %d sequences, %d tokens per step, queue %d, %d connections; API key %s; "
               "listening on http://%s:%d\n",
               flags.max_batch, flags.token_budget, flags.max_queue, flags.max_connections,
               stack.options().api.api_key.empty() ? "off" : "on", flags.host.c_str(), port);
}

// SIGTERM or SIGINT: drain — stop accepting, let requests in progress finish for --drain-timeout, fail the rest,
// exit 0. A second signal exits at once. Signals are taken by sigtimedwait on this thread (blocked everywhere
// else), so the drain runs as ordinary code rather than inside a signal handler.
void watch_signals(const sigset_t& signals, ServerStack& stack, std::chrono::milliseconds drain_timeout,
                   const std::atomic<bool>& finished) {
  using Clock = std::chrono::steady_clock;
  const timespec tick{0, 100'000'000};
  int first = 0;
  Clock::time_point deadline;
  bool failed_rest = false;
  while (!finished.load()) {
    const int signal = ::sigtimedwait(&signals, nullptr, &tick);
    if (signal > 0 && first != 0) {
      std::fprintf(stderr, "[minigen] second signal (%d): exiting now\n", signal);
      std::_Exit(128 + signal);
    }
    if (signal > 0) {
      first = signal;
      deadline = Clock::now() + drain_timeout;
      std::fprintf(stderr, "[minigen] signal %d: draining (no new connections; %.1f s for requests in progress)\n",
                   signal, drain_timeout.count() / 1000.0);
      stack.begin_drain();
    }
    if (first != 0 && !failed_rest && Clock::now() >= deadline) {
      std::fprintf(stderr, "[minigen] drain deadline reached: failing the %lld request(s) still in progress\n",
                   static_cast<long long>(stack.api().http_stats().workers_busy));
      stack.finish_drain();
      failed_rest = true;
    }
    if (failed_rest && Clock::now() >= deadline + std::chrono::seconds(5)) stack.stop();  // a stuck write
  }
}

int run_serve_command(const ServeFlags& flags) {
  // Before any thread starts, so that every thread inherits the mask and only the watcher takes the signals.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  ServeOptions options;
  options.threads = flags.model.thread_count();
  options.kv_budget_bytes = parse_byte_size(flags.kv_budget);
  options.max_batch = flags.max_batch;
  options.token_budget = flags.token_budget;
  options.max_queue = flags.max_queue;
  options.kv_dtype = flags.model.kv_dtype_value();
  options.api.api_key = flags.api_key;
  if (options.api.api_key.empty()) {
    if (const char* key = std::getenv("MINIGEN_API_KEY")) options.api.api_key = key;
  }
  options.api.cors_origin = flags.cors_origin;
  options.api.http.request_timeout = to_milliseconds(flags.request_timeout_s);
  options.api.http.idle_timeout = to_milliseconds(flags.idle_timeout_s);
  options.api.http.max_connections = flags.max_connections;
  options.api.log_requests = true;
  options.api.allow_runtime_lora = flags.allow_runtime_lora;
  if (flags.allow_runtime_lora && options.api.api_key.empty()) {
    // The load route opens a file the client names: never on a server anyone who reaches it may call.
    throw Error(
        "--allow-runtime-lora needs an API key (--api-key or $MINIGEN_API_KEY): loading an adapter reads a "
        "file the client names on this machine");
  }

  LoadedModel loaded = flags.model.load();
  options.weight_type = flags.model.weight_type(*loaded.model);
  options.activations = flags.model.activation_codes(options.weight_type);
  const std::string model_name =
      flags.served_model_name.empty() ? loaded.path.filename().string() : flags.served_model_name;
  ServerStack stack(*loaded.model, *loaded.tokenizer, model_name, options);
  loaded.model->release_matrices();  // the packed copy is the one that runs
  for (const std::string& flag : flags.lora) {
    const auto [name, file] = adapter_name_and_file(flag);
    const ServedAdapter served = stack.adapters().load(name, file);
    std::fprintf(stderr, "[minigen] lora %s: %s (%s) — %s, %.1f MB\n", served.name.c_str(), file.c_str(),
                 served.weights->format.c_str(), served.weights->summary().c_str(), served.weights->fp32_bytes() / 1e6);
  }
  const int port = stack.bind(flags.host, flags.port);
  print_capacity(stack, loaded, flags, port);
  set_profiling(flags.profile);  // /metrics exports the zones while profiling is on

  std::atomic<bool> finished{false};
  std::thread watcher([&] { watch_signals(signals, stack, to_milliseconds(flags.drain_timeout_s), finished); });
  stack.serve();
  finished.store(true);
  watcher.join();
  std::fprintf(stderr, "[minigen] stopped\n");
  return 0;
}

}  // namespace

CommandAction add_serve_command(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* command = app.add_subcommand(
      "serve",
      "OpenAI-compatible HTTP server: continuous batching over a paged KV cache, streaming, /metrics, web page");
  flags->model.add_to(*command);
  command
      ->add_option("--host", flags->host,
                   "address to listen on; a loopback address answers only requests addressed to localhost")
      ->default_val("127.0.0.1");
  command->add_option("--port", flags->port, "port (0: any free port)")->default_val(8080)->check(integer_in(0, 65535));
  command->add_option("--kv-budget", flags->kv_budget, "memory for the KV cache pool, e.g. 256MiB, 1GiB")
      ->default_val("256MiB");
  command->add_option("--max-batch", flags->max_batch, "sequences decoded together at most")
      ->default_val(32)
      ->check(integer_in(1, 4096));
  command->add_option("--token-budget", flags->token_budget, "tokens fed per step (decodes + prefill chunks)")
      ->default_val(256)
      ->check(integer_in(1, 1 << 20));
  command->add_option("--max-queue", flags->max_queue, "requests allowed to wait; beyond it the answer is 429")
      ->default_val(256)
      ->check(integer_in(1, 1 << 20));
  command->add_option("--api-key", flags->api_key,
                      "require 'Authorization: Bearer KEY' on every /v1/* route (default: $MINIGEN_API_KEY)");
  command->add_option("--cors-origin", flags->cors_origin,
                      "allow browser pages from this origin (or *) to call the API; off by default");
  command
      ->add_option("--drain-timeout", flags->drain_timeout_s,
                   "seconds requests in progress may take to finish after SIGTERM/SIGINT")
      ->default_val(10)
      ->check(number_in(0.0, 3600.0));
  command
      ->add_option("--request-timeout", flags->request_timeout_s,
                   "seconds a client has to send a whole request (line, headers and body); 408 after")
      ->default_val(10)
      ->check(number_in(0.1, 3600.0));
  command->add_option("--idle-timeout", flags->idle_timeout_s, "seconds an idle keep-alive connection stays open")
      ->default_val(5)
      ->check(number_in(0.1, 3600.0));
  command
      ->add_option("--max-connections", flags->max_connections,
                   "open connections at most; when full, the one waiting longest for its request is closed")
      ->default_val(512)
      ->check(integer_in(2, 100000));
  command->add_option("--served-model-name", flags->served_model_name,
                      "the model's name in /v1/models and in every response's \"model\" (as vLLM's flag) "
                      "[default: the model folder's or file's name]");
  command
      ->add_option("--lora", flags->lora,
                   "serve a LoRA adapter beside the base model as NAME=FILE (MiniMind .pth, PEFT folder or GGUF "
                   "adapter; FILE alone: named by its stem); repeatable. A request's \"model\": \"NAME\" runs "
                   "it, the base model's name none; one batch mixes them")
      ->allow_extra_args(false);
  command->add_flag("--allow-runtime-lora", flags->allow_runtime_lora,
                    "enable POST /v1/load_lora_adapter {\"lora_name\", \"lora_path\"} and /v1/unload_lora_adapter "
                    "{\"lora_name\"} (vLLM's routes); needs an API key");
  command->add_flag("--profile", flags->profile,
                    "time the profiler's zones (forward, matmul, sampling, HTTP write, …) and export them in /metrics "
                    "as minigen_profile_seconds_total and minigen_profile_calls_total");
  return [flags] { return run_serve_command(*flags); };
}

}  // namespace minigen::cli
