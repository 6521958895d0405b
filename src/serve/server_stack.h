#pragma once
// Everything `minigen serve` runs, assembled in one place: the thread pool, the transformer, the KV block pool,
// the engine and the API server. The serve command and the in-process server of the load test both build this.
//
// Shutting down gracefully (SIGTERM): begin_drain() stops accepting and closes idle connections; requests in
// progress may finish until the drain deadline, after which finish_drain() fails what is left (503, or an error
// event on a stream) and serve() returns.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "cache/block_pool.h"
#include "model/model.h"
#include "model/transformer.h"
#include "ops/thread_pool.h"
#include "ops/weight_type.h"
#include "serve/api_server.h"
#include "serve/engine.h"

namespace minigen {

struct ServeOptions {
  int threads = 0;  // 0: one per core
  std::size_t kv_budget_bytes = 256u << 20;
  int max_batch = 32;
  int token_budget = 256;
  int max_queue = 256;
  WeightType weight_type = WeightType::kF32;
  std::optional<ActivationCodes> activations;  // q8/q4: none means the type's default (ops/weight_type.h)
  KvDType kv_dtype = KvDType::kF32;            // the pool's blocks are sized by it
  ApiServerOptions api;
};

class ServerStack {
 public:
  // Throws minigen::Error when the KV budget is smaller than one block.
  ServerStack(const Model& model, const Tokenizer& tokenizer, std::string model_name, ServeOptions options);
  ServerStack(const ServerStack&) = delete;
  ServerStack& operator=(const ServerStack&) = delete;

  int bind(const std::string& host, int port) { return api_.bind(host, port); }
  void serve() { api_.serve(); }
  void begin_drain() { api_.begin_drain(); }
  void finish_drain() { engine_.fail_all("the server is shutting down"); }
  void stop() {
    engine_.fail_all("the server is shutting down");
    api_.stop();
  }

  // POST /update_weights_from_disk: reads `model_path` (checkpoint/model_loader.h, load_replacement_weights) and
  // packs it in the served weight type while the old weights keep serving, then switches (Engine::replace_weights)
  // and frees the old ones. One update at a time. Throws minigen::Error, before anything changed, for weights that
  // do not fit the served model.
  WeightUpdateReport update_weights(const std::string& model_path, const std::string& weight_version,
                                    bool abort_all_requests);

  // How update_weights reads a directory: load_replacement_weights unless replaced (a test holds a load mid-way
  // to watch the server meanwhile). Set before serving.
  using WeightLoader =
      std::function<std::unique_ptr<Model>(const std::string&, const ModelConfig&, const TensorReadOptions&)>;
  void set_weight_loader(WeightLoader loader) { weight_loader_ = std::move(loader); }

  const ServeOptions& options() const { return options_; }
  ThreadPool& threads() { return threads_; }
  // The weights served now (for the startup summary: an update replaces them).
  const Transformer& transformer() const { return *transformer_; }
  const BlockPool& blocks() const { return blocks_; }
  Engine& engine() { return engine_; }
  AdapterRegistry& adapters() { return adapters_; }
  ApiServer& api() { return api_; }

 private:
  ServeOptions options_;
  ThreadPool threads_;
  std::unique_ptr<Model> updated_model_;      // the model of the last weight update (the first one is the caller's)
  std::unique_ptr<Transformer> transformer_;  // the weights served
  std::mutex update_mutex_;
  WeightLoader weight_loader_;
  int updates_ = 0;
  BlockPool blocks_;
  Engine engine_;
  AdapterRegistry adapters_;  // the base model's name and the LoRA adapters served beside it
  ApiServer api_;
};

}  // namespace minigen
