#pragma once
// minigen's HTTP/1.1 server for a model server's traffic: many idle or slow connections, a few long streams.
//
// The protocol is Boost.Beast's (request parsing with header and body limits, pipelining) over Boost.Asio (one
// event-loop thread owns every socket). minigen adds only the serving policy around it:
//   - a complete request goes to the router, which either answers at once (health, metrics, errors — cheap
//     answers written by the loop itself) or names a handler to run on a worker thread (generation: long,
//     blocking, streaming); pipelined requests are answered one after another, in order, on their connection;
//   - request deadline: the request line, headers and body must all arrive within request_timeout of the moment
//     the connection began waiting for them (a client sending one byte a second is cut off, 408);
//   - idle keep-alive connections close after idle_timeout;
//   - at most max_connections sockets; when full, the connection that has waited longest for its request is closed
//     to make room, so a burst of stalled clients cannot lock out /health;
//   - at most max_workers handlers at once (503 beyond), and a write that makes no progress for write_timeout fails.
// Draining (begin_drain): stop accepting, close every connection that has no request in progress, let running
// handlers finish; serve() returns when none is left. stop() ends at once: handlers see cancelled() and return.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "http/request.h"
#include "http/response.h"
#include "http/response_writer.h"

namespace minigen::http {

using Handler = std::function<void(const Request&, ResponseWriter&)>;
// What the router makes of a request: an answer now, or a handler for a worker thread.
using Routed = std::variant<Response, Handler>;
using Router = std::function<Routed(const Request&)>;
// The body of an error the server itself answers (malformed request, timeout, too large, busy).
using ErrorResponder = std::function<Response(int status, const std::string& message)>;

struct ServerOptions {
  std::chrono::milliseconds request_timeout{10'000};
  std::chrono::milliseconds idle_timeout{5'000};
  std::chrono::milliseconds write_timeout{30'000};
  int max_connections = 512;
  int max_workers = 256;
  RequestLimits limits;
};

struct ServerStats {
  int64_t connections_open = 0;
  int64_t connections_accepted = 0;
  int64_t connections_timed_out = 0;  // closed for a request that did not arrive in time (or an idle keep-alive)
  int64_t connections_evicted = 0;    // closed to make room at max_connections
  int64_t requests = 0;
  int64_t requests_rejected = 0;  // malformed, too large, or no worker free
  int64_t workers_busy = 0;
};

class ServerCore;

class Server {
 public:
  Server(Router router, ErrorResponder errors, ServerOptions options);
  ~Server();  // stops, and waits until every worker thread has returned
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port (port 0: a free port) and returns the port. Throws minigen::Error when it cannot.
  int bind(const std::string& host, int port);
  // Runs the event loop on this thread until stop(), or until a drain has finished; returns after every handler.
  void serve();
  void begin_drain();  // thread-safe
  void stop();         // thread-safe
  bool draining() const;
  int active_workers() const;
  ServerStats stats() const;

 private:
  std::unique_ptr<ServerCore> core_;  // Beast and Asio stay out of this header (and out of every file that serves)
};

}  // namespace minigen::http
