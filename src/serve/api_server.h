#pragma once
// `minigen serve`'s OpenAI-compatible routes over the HTTP server (http/server.h) and the Engine.
//
//   POST /v1/completions, /v1/chat/completions   JSON, or SSE chunks ending with `data: [DONE]` when stream=true
//   GET  /v1/models, /health, /metrics (Prometheus text), / (the web page)
//   POST /v1/load_lora_adapter, /v1/unload_lora_adapter   with allow_runtime_lora only (vLLM's admin routes)
//   SGLang's native routes, for MiniMind's RL trainers (serve/sglang_generate.h, docs/rl-rollouts.md):
//   POST /generate, /update_weights_from_disk, /flush_cache; GET /health_generate, /get_model_info,
//   /get_server_info. With an API key set, every one of them but /health_generate needs it, as /v1/* does.
//
// A request's "model" picks the LoRA adapter it runs with (serve/adapter_registry.h): an adapter's name, or the base
// model's (or none) for no adapter; a name the server does not serve is a 404 model_not_found once any adapter is
// loaded. Responses carry the name that answered.
//
// Checks made before any work, in this order: the Host header (DNS rebinding: a server bound to loopback answers
// only requests addressed to loopback), the method and route (404, 405), the API key for /v1/* (401), a JSON
// Content-Type on POST (415). Generation runs on a worker thread, which watches its client between the engine's
// steps: a client that goes away, streaming or not, is cancelled at once and its KV blocks return to the pool.
#include <atomic>
#include <functional>
#include <mutex>
#include <string>

#include "http/server.h"
#include "openai/openai_api.h"
#include "serve/adapter_registry.h"
#include "serve/engine.h"
#include "serve/request_log.h"

namespace minigen {

// What POST /update_weights_from_disk did: the version now served and where the time went.
struct WeightUpdateReport {
  std::string weight_version;
  double load_seconds = 0;    // reading and packing the new weights, while the old ones kept serving
  double switch_seconds = 0;  // waiting for the requests in flight, then the switch itself
};
// Loads `model_path` and switches to it (ServerStack::update_weights); throws minigen::Error for weights that do not
// fit the served model, which keeps serving. An empty `weight_version` asks the server to number the update.
using WeightUpdater = std::function<WeightUpdateReport(const std::string& model_path, const std::string& weight_version,
                                                       bool abort_all_requests)>;

// The headers of every server-sent event stream the API answers.
http::Headers sse_headers();

struct ApiServerOptions {
  std::string api_key;      // empty: no authentication; else every /v1/* route needs "Authorization: Bearer KEY"
  std::string cors_origin;  // empty: no CORS; "*" or one origin allowed to call the API from a browser page
  std::string system_fingerprint = "minigen";  // OpenAI's field: which backend configuration answered
  // What the products run: the weight type ("q8") and, for q8/q4, the activation codes ("int8"; empty otherwise),
  // reported by /get_server_info.
  std::string weight_type = "f32";
  std::string activations;
  // The model's tokens as byte strings, for grammars (response_format, forced tool calls); null: those are a 400.
  std::shared_ptr<const TokenVocabulary> grammar_vocabulary;
  http::ServerOptions http;
  // One stderr line per request the engine finished (serve/request_log.h); `minigen serve` turns it on, the
  // in-process servers of tests and bench-serve leave it off.
  bool log_requests = false;
  // POST /v1/load_lora_adapter {"lora_name", "lora_path"} and /v1/unload_lora_adapter {"lora_name"}: the client
  // names a file on the server's disk, so `minigen serve` turns this on only together with an API key.
  bool allow_runtime_lora = false;
  // POST /update_weights_from_disk; empty: the route answers 400 (the server cannot switch weights). It names a
  // path on the server's disk too: it needs the API key when one is set, and a server listening beyond loopback
  // without a key refuses it (403).
  WeightUpdater update_weights;
};

class ApiServer {
 public:
  ApiServer(Engine& engine, const Tokenizer& tokenizer, AdapterRegistry& adapters, ApiServerOptions options = {});

  // Binds host:port (port 0: a free port) and returns the port. Bound to a loopback address, the server answers
  // only Host headers naming loopback (localhost, 127.0.0.1, [::1]); bound to any other address, every Host.
  int bind(const std::string& host, int port);
  // Serves until stop(), or until a drain finished; returns once every request handler has.
  void serve() { http_.serve(); }
  // Stop accepting, let requests in progress finish (see Engine::fail_all for the deadline).
  void begin_drain() { http_.begin_drain(); }
  void stop() { http_.stop(); }
  http::ServerStats http_stats() const { return http_.stats(); }

 private:
  http::Routed route(const http::Request& request);
  http::Response error(int status, const std::string& message, const std::string& param = "",
                       const std::string& code = "") const;
  http::Response json_response(int status, const nlohmann::json& body) const;
  bool host_allowed(const http::Request& request) const;
  bool authorized(const http::Request& request) const;
  void add_cors_headers(const http::Request& request, http::Headers& headers) const;
  ResponseIdentity identity(const ApiRequest& request) const;   // a fresh id, the model, the fingerprint
  nlohmann::json models() const;                                // GET /v1/models
  http::Response load_adapter(const http::Request& request);    // POST /v1/load_lora_adapter, on a worker thread
  http::Response unload_adapter(const http::Request& request);  // POST /v1/unload_lora_adapter
  void generate(Endpoint endpoint, const http::Request& http_request, http::ResponseWriter& writer);
  // SGLang's routes (serve/sglang_routes.cpp).
  void native_generate(const http::Request& http_request, http::ResponseWriter& writer);
  http::Response native_info(const std::string& path);
  void update_weights(const http::Request& http_request, http::ResponseWriter& writer);
  void respond_whole(const ApiRequest& request, const std::shared_ptr<JobStream>& stream,
                     const http::Request& http_request, http::ResponseWriter& writer, RequestTimer& timer);
  void respond_streaming(const ApiRequest& request, const std::shared_ptr<JobStream>& stream,
                         const http::Request& http_request, http::ResponseWriter& writer, RequestTimer& timer);
  // The request's log line, when log_requests is on; `outcome` as RequestTimer::finish takes it.
  void log_finished(const RequestTimer& timer, const std::string& id, const JobStream& stream,
                    const std::string& outcome = "") const;

  Engine& engine_;
  const Tokenizer& tokenizer_;
  AdapterRegistry& adapters_;
  ApiServerOptions options_;
  bool loopback_only_ = false;
  http::Server http_;
  mutable std::mutex model_path_mutex_;
  std::atomic<bool> adapter_loading_{false};  // POST /v1/load_lora_adapter in progress
  std::string model_path_;  // /get_model_info's: the base model's name, then each weight update's directory
};

}  // namespace minigen
