#pragma once
// `minigen serve`'s HTTP front: OpenAI-compatible routes over the Engine (cpp-httplib, one thread per connection).
//
//   POST /v1/completions, /v1/chat/completions   JSON, or SSE chunks ending with `data: [DONE]` when stream=true
//   GET  /v1/models, /health, /metrics (Prometheus text), / (the web page)
//
// A streaming client that disconnects is noticed at the next write (a keep-alive comment goes out when no token
// is ready), and its sequences are cancelled at once, returning their KV blocks.
#include <memory>
#include <string>

#include "serve/engine.h"

namespace httplib {
class Server;
}

namespace minigen {

class HttpServer {
 public:
  HttpServer(Engine& engine, const Tokenizer& tokenizer, std::string model_name);
  ~HttpServer();

  // Binds host:port (port 0: any free port); returns the bound port. Throws minigen::Error when it cannot.
  int bind(const std::string& host, int port);
  // Serves until stop() (blocking).
  void serve();
  void stop();

 private:
  void add_routes();

  Engine& engine_;
  const Tokenizer& tokenizer_;
  std::string model_name_;
  std::unique_ptr<httplib::Server> server_;
  int listening_socket_ = -1;
};

// The Prometheus text of an engine status (exposed for tests).
std::string metrics_text(const EngineStatus& status);

}  // namespace minigen
