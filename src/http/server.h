#pragma once
// A small HTTP/1.1 server built for a model server's traffic: many idle or slow connections, a few long streams.
//
// One event-loop thread accepts connections and reads requests without blocking, so a slow client costs a socket
// and a buffer, never a thread. A complete request goes to the router, which either answers at once (health,
// metrics, errors — cheap answers written by the loop itself) or names a handler to run on a worker thread
// (generation: long, blocking, streaming). Limits every client meets:
//   - request deadline: the request line, headers and body must all arrive within request_timeout of the moment
//     the connection began waiting for them (a client sending one byte a second is cut off, 408);
//   - idle keep-alive connections close after idle_timeout;
//   - at most max_connections sockets; when full, the connection that has waited longest for its request is closed
//     to make room, so a burst of stalled clients cannot lock out /health;
//   - at most max_workers handlers at once (503 beyond), and a write that makes no progress for write_timeout fails.
// Draining (begin_drain): stop accepting, close every connection that has no request in progress, let running
// handlers finish; serve() returns when none is left. stop() ends at once: handlers see cancelled() and return.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

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

class Server {
 public:
  Server(Router router, ErrorResponder errors, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port (port 0: a free port) and returns the port. Throws minigen::Error when it cannot.
  int bind(const std::string& host, int port);
  // Runs the event loop on this thread until stop(), or until a drain has finished; returns after every handler.
  void serve();
  void begin_drain();  // thread-safe, async-signal-safe
  void stop();         // thread-safe, async-signal-safe
  bool draining() const { return draining_.load(); }
  int active_workers() const { return workers_busy_.load(); }
  ServerStats stats() const;

 private:
  struct Connection;
  using Clock = std::chrono::steady_clock;

  void accept_connections();
  void make_room();
  void read_from(Connection& connection);
  void process(Connection& connection);
  void queue_response(Connection& connection, const Response& response, bool keep_alive);
  void flush(Connection& connection);
  void start_worker(std::unique_ptr<Connection> connection, Request request, Handler handler);
  void take_back_returned();
  void close_connection(std::size_t index);
  void wake();

  Router router_;
  ErrorResponder errors_;
  ServerOptions options_;
  int listen_socket_ = -1;
  int wake_fd_ = -1;  // eventfd: a worker returned a connection, or begin_drain()/stop() was called
  std::vector<std::unique_ptr<Connection>> connections_;  // loop thread only
  Clock::time_point accept_paused_until_{};               // after EMFILE: let the process breathe

  std::atomic<bool> draining_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<int> workers_busy_{0};
  std::mutex returned_mutex_;
  std::condition_variable workers_done_;
  std::vector<std::unique_ptr<Connection>> returned_;  // from workers, for the loop to read the next request

  std::atomic<int64_t> accepted_{0}, timed_out_{0}, evicted_{0}, requests_{0}, rejected_{0}, open_{0};
};

}  // namespace minigen::http
