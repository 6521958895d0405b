#pragma once
// One client connection: Beast reads its requests one after another (pipelined ones included, in order), the
// router answers each, and the answer is written by the event loop or by a worker thread. The phases:
//
//   idle ──first byte──▶ reading ──request──▶ answering (the loop writes) ──▶ idle, or the next pipelined request
//                                      └─────▶ working (a handler on a worker thread) ──▶ idle, or the next one
//
// Only one deadline runs at a time: the whole request must arrive within request_timeout of its first byte (of the
// accept, for a connection's first request), an idle keep-alive closes after idle_timeout, and a write that makes no
// progress for write_timeout closes the connection. While a handler works, the loop keeps reading: end of file
// means the client is gone (the handler sees cancelled()), and bytes are the client's next requests, kept (up to one
// request's limits) for when the handler is done; once that much is kept, the kernel is asked instead whether the
// client has closed its side.
//
// Everything but send() and hung_up() runs on the event-loop thread. A worker's send() is posted to the loop and
// waits for the write to finish, so the socket is only ever touched by the loop.
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <memory>
#include <optional>
#include <string>

#include "http/server_core.h"

namespace minigen::http {

class Connection : public std::enable_shared_from_this<Connection>, public ClientLink {
 public:
  using Clock = ServerCore::Clock;

  Connection(ServerCore& core, net::ip::tcp::socket socket, std::string remote);

  void start();  // joins the server's table and waits for the first request
  void close();  // idempotent; leaves the table
  // Has no request in progress (waiting for one, or reading it): may be closed to make room or to drain.
  bool waiting_for_request() const { return phase_ == Phase::kIdle || phase_ == Phase::kReading; }
  Clock::time_point waiting_since() const { return waiting_since_; }

  // ClientLink, for the worker thread's ResponseWriter.
  bool send(std::string bytes) override;
  bool hung_up() const override { return hung_up_.load(); }

 private:
  enum class Phase { kIdle, kReading, kAnswering, kWorking, kClosed };
  enum class Deadline { kNone, kRequest, kIdle, kWrite };
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;

  void wait_for_request();
  void read_header();
  void on_header(boost::system::error_code error);
  void read_body();
  void on_body(boost::system::error_code error);
  void on_read_error(boost::system::error_code error);
  void dispatch(Request request);
  void answer(const Response& response, bool keep_alive);
  void refuse(int status, const std::string& message);  // answers an error and closes
  void send_now(const Response& response);              // best effort, for a connection about to close
  void start_worker(Request request, Handler handler, bool keep_alive);
  // On the worker thread; whether the connection can carry the next request.
  bool run_handler(const Request& request, const Handler& handler, bool keep_alive);
  void watch_for_hang_up();
  void probe_for_hang_up();
  void worker_done(bool reusable);
  void resume_after_worker();

  void arm(std::chrono::milliseconds after, Deadline why);
  void disarm();
  void on_deadline();
  std::size_t room() const;  // bytes the buffer may still take

  ServerCore& core_;
  net::ip::tcp::socket socket_;
  std::string remote_;
  ServerCore::ConnectionList::iterator where_;  // in the server's table while not closed
  boost::beast::flat_buffer buffer_;            // received bytes not parsed yet: the rest of pipelined requests
  std::optional<Parser> parser_;
  Phase phase_ = Phase::kReading;
  Clock::time_point waiting_since_;

  net::steady_timer timer_;
  Deadline deadline_ = Deadline::kNone;
  uint64_t deadline_generation_ = 0;  // a timer that fired just before it was re-armed must not act

  std::string out_;  // the bytes of the write in flight
  bool close_after_write_ = false;
  bool watching_ = false;          // a read that looks for a hang-up is in flight (working phase)
  net::steady_timer probe_timer_;  // looks for a hang-up without reading, when the buffer is full
  std::atomic<bool> hung_up_{false};
};

}  // namespace minigen::http
