// `minigen serve`: the OpenAI-compatible HTTP server with continuous batching over a paged KV cache.
#include <csignal>
#include <cstdio>
#include <iostream>

#include "cache/block_pool.h"
#include "cli/command_context.h"
#include "cli/commands.h"
#include "core/error.h"
#include "serve/byte_size.h"
#include "serve/engine.h"
#include "serve/http_server.h"

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
};

HttpServer* running_server = nullptr;

void stop_on_signal(int) {
  if (running_server != nullptr) running_server->stop();
}

int run_serve_command(const ServeFlags& flags) {
  const std::size_t budget = parse_byte_size(flags.kv_budget);
  LoadedModel loaded = flags.model.load();
  const ModelConfig& config = loaded.model->config;
  const int blocks = BlockPool::blocks_for_budget(config, budget);
  if (blocks < 1) {
    throw Error("--kv-budget " + flags.kv_budget + " is smaller than one KV block (" +
                std::to_string(BlockPool::bytes_per_block(config)) + " bytes)");
  }
  ThreadPool pool(flags.model.thread_count());
  Transformer transformer(*loaded.model, pool, flags.model.weight_type());
  BlockPool blocks_pool(config, blocks);
  Engine engine(transformer, blocks_pool, *loaded.tokenizer, {flags.max_batch, flags.token_budget}, flags.max_queue);
  HttpServer server(engine, *loaded.tokenizer, loaded.path.filename().string());
  const int port = server.bind(flags.host, flags.port);

  // Capacity, the way vLLM reports it: the KV cache in tokens, and how many requests of a given length fit at once.
  const int64_t tokens = static_cast<int64_t>(blocks) * BlockPool::kBlockTokens;
  std::fprintf(stderr, "[minigen] model %s: %d layers, %d kv heads × %d, weights %s (%.1f MB), %d threads\n",
               loaded.path.string().c_str(), config.num_layers, config.num_kv_heads, config.head_dim,
               std::string(weight_type_name(transformer.weight_type())).c_str(), transformer.weight_bytes() / 1e6,
               pool.num_threads());
  std::fprintf(stderr, "[minigen] KV cache: %d blocks × %d tokens = %lld tokens (%.1f MiB, %zu bytes per block)\n",
               blocks, BlockPool::kBlockTokens, static_cast<long long>(tokens),
               static_cast<double>(blocks) * BlockPool::bytes_per_block(config) / (1024.0 * 1024.0),
               BlockPool::bytes_per_block(config));
  for (int length : {512, 2048, config.max_position_embeddings}) {
    const int64_t per_request = (length + BlockPool::kBlockTokens - 1) / BlockPool::kBlockTokens;
    std::fprintf(stderr, "[minigen] maximum concurrency for %d tokens per request: %.2fx\n", length,
                 static_cast<double>(blocks) / per_request);
  }
  std::fprintf(stderr, "[minigen] batch up to %d sequences, %d tokens per step, queue %d; listening on http://%s:%d\n",
               flags.max_batch, flags.token_budget, flags.max_queue, flags.host.c_str(), port);
  running_server = &server;
  std::signal(SIGINT, stop_on_signal);
  std::signal(SIGTERM, stop_on_signal);
  server.serve();
  running_server = nullptr;
  std::fprintf(stderr, "[minigen] stopped\n");
  return 0;
}

}  // namespace

CommandAction add_serve_command(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* command = app.add_subcommand(
      "serve", "OpenAI-compatible HTTP server: continuous batching over a paged KV cache, streaming, /metrics, web page");
  flags->model.add_to(*command);
  command->add_option("--host", flags->host, "address to listen on")->default_val("127.0.0.1");
  command->add_option("--port", flags->port, "port (0: any free port)")->default_val(8080)->check(CLI::Range(0, 65535));
  command->add_option("--kv-budget", flags->kv_budget, "memory for the KV cache pool, e.g. 256MiB, 1GiB")
      ->default_val("256MiB");
  command->add_option("--max-batch", flags->max_batch, "sequences decoded together at most")
      ->default_val(32)
      ->check(CLI::Range(1, 4096));
  command->add_option("--token-budget", flags->token_budget, "tokens fed per step (decodes + prefill chunks)")
      ->default_val(256)
      ->check(CLI::Range(1, 1 << 20));
  command->add_option("--max-queue", flags->max_queue, "requests allowed to wait; beyond it the answer is 429")
      ->default_val(256)
      ->check(CLI::Range(1, 1 << 20));
  return [flags] { return run_serve_command(*flags); };
}

}  // namespace minigen::cli
