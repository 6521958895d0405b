#pragma once
// Inside the server (not for routes): the event loop, the table of open connections and the policy that spans
// them — accepting, making room at the connection limit, draining, stopping. Every member not marked otherwise is
// touched only on the event-loop thread, so none needs a lock; other threads reach it through post().
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <list>
#include <mutex>
#include <optional>

#include "http/server.h"
#include "http/worker_pool.h"

namespace minigen::http {

class Connection;
namespace net = boost::asio;

class ServerCore {
 public:
  using Clock = std::chrono::steady_clock;

  ServerCore(Router router, ErrorResponder errors, ServerOptions options);

  int bind(const std::string& host, int port);
  void serve();
  void begin_drain();
  void stop();

  // For connections (event-loop thread).
  using ConnectionList = std::list<std::shared_ptr<Connection>>;  // the table owns each open connection
  ConnectionList::iterator add(std::shared_ptr<Connection> connection);
  void remove(ConnectionList::iterator where);
  // After any change that may end a drain or a stop: returns from serve() once nothing is left.
  void maybe_finish();

  // For handlers: counted from the moment a handler is given a thread until that thread touches nothing of the
  // server any more, so that ~Server can wait for the last one.
  void worker_thread_started();
  void worker_thread_finished();
  void wait_for_worker_threads();

  net::io_context& loop() { return loop_; }
  WorkerPool& workers() { return workers_; }
  const Router& router() const { return router_; }
  const ServerOptions& options() const { return options_; }
  Response error_response(int status, const std::string& message) const { return errors_(status, message); }

  std::atomic<bool> draining{false};  // read by workers too
  std::atomic<bool> stopping{false};
  std::atomic<int> workers_busy{0};
  std::atomic<int64_t> accepted{0}, timed_out{0}, evicted{0}, requests{0}, rejected{0}, open{0};

 private:
  void accept_next();
  void make_room();
  void close_all(bool only_waiting);

  net::io_context loop_;  // declared first, destroyed last: every socket and timer below belongs to it
  net::ip::tcp::acceptor acceptor_{loop_};
  net::steady_timer accept_pause_{loop_};  // after EMFILE: let the process breathe before accepting again
  std::optional<net::executor_work_guard<net::io_context::executor_type>> keep_running_;
  Router router_;
  ErrorResponder errors_;
  ServerOptions options_;
  ConnectionList connections_;
  WorkerPool workers_{options_.max_workers};  // after options_, which sizes it

  std::mutex threads_mutex_;
  std::condition_variable threads_done_;
  int worker_threads_ = 0;
};

}  // namespace minigen::http
