#include "http/connection.h"

#include <poll.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>

#include "http/request_rules.h"

namespace minigen::http {
namespace {

namespace beast = boost::beast;
using boost::system::error_code;

constexpr std::size_t kReadChunk = 16 * 1024;
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

std::string serialize(const Response& response, bool keep_alive) {
  return response_head(response.status, response.headers, response.body.size(), false, keep_alive) + response.body;
}

// A worker's write, handed to the loop: the worker waits here until the loop has written it (or failed).
class WriteWait {
 public:
  void finish(bool written) {
    std::lock_guard lock(mutex_);
    result_ = written;
    done_.notify_all();
  }
  bool wait() {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return result_.has_value(); });
    return *result_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  std::optional<bool> result_;
};

}  // namespace

Connection::Connection(ServerCore& core, net::ip::tcp::socket socket, std::string remote)
    : core_(core),
      socket_(std::move(socket)),
      remote_(std::move(remote)),
      // Never more than one request's worth: beyond this the parser has either completed the request or refused it.
      buffer_(core.options().limits.max_header_bytes + core.options().limits.max_body_bytes + 1),
      timer_(core.loop()),
      probe_timer_(core.loop()) {}

void Connection::start() {
  where_ = core_.add(shared_from_this());
  error_code ignored;
  socket_.non_blocking(true, ignored);  // send_now() must never block the loop
  phase_ = Phase::kReading;
  waiting_since_ = Clock::now();
  arm(core_.options().request_timeout, Deadline::kRequest);
  read_header();
}

void Connection::close() {
  if (phase_ == Phase::kClosed) return;
  const auto keep = shared_from_this();  // the table may hold the last reference
  phase_ = Phase::kClosed;
  disarm();
  probe_timer_.cancel();
  error_code ignored;
  socket_.shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);  // every operation in flight completes with operation_aborted
  core_.remove(where_);
  core_.maybe_finish();
}

std::size_t Connection::room() const { return buffer_.max_size() - buffer_.size(); }

// ---- Deadlines: one at a time ----

void Connection::arm(std::chrono::milliseconds after, Deadline why) {
  deadline_ = why;
  const uint64_t generation = ++deadline_generation_;
  timer_.expires_after(after);
  timer_.async_wait([self = shared_from_this(), generation](error_code error) {
    if (error || generation != self->deadline_generation_ || self->phase_ == Phase::kClosed) return;
    self->on_deadline();
  });
}

void Connection::disarm() {
  deadline_ = Deadline::kNone;
  ++deadline_generation_;
  timer_.cancel();
}

void Connection::on_deadline() {
  const Deadline why = deadline_;
  deadline_ = Deadline::kNone;
  if (why == Deadline::kRequest || why == Deadline::kIdle) {
    // A request that had begun is told why it ends; a silent connection is just closed.
    const bool begun = buffer_.size() > 0 || (parser_ && parser_->is_header_done());
    if (why == Deadline::kRequest && begun) {
      send_now(core_.error_response(408, "the request did not arrive in time"));
    }
    ++core_.timed_out;  // before the close, which a client (or a test) may see at once and then read the stats
  }
  close();  // kWrite: the client stopped reading
}

// ---- Reading requests ----

void Connection::wait_for_request() {
  waiting_since_ = Clock::now();
  if (buffer_.size() > 0) {  // a pipelined request has arrived already
    phase_ = Phase::kReading;
    arm(core_.options().request_timeout, Deadline::kRequest);
    read_header();
    return;
  }
  phase_ = Phase::kIdle;
  arm(core_.options().idle_timeout, Deadline::kIdle);
  socket_.async_read_some(buffer_.prepare(std::min(room(), kReadChunk)),
                          [self = shared_from_this()](error_code error, std::size_t n) {
                            if (self->phase_ != Phase::kIdle) return;
                            if (error) return self->close();
                            self->buffer_.commit(n);
                            // The next request has begun: the whole of it gets the request deadline, from now.
                            self->phase_ = Phase::kReading;
                            self->waiting_since_ = Clock::now();
                            self->arm(self->core_.options().request_timeout, Deadline::kRequest);
                            self->read_header();
                          });
}

void Connection::read_header() {
  const RequestLimits& limits = core_.options().limits;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(limits.max_header_bytes, UINT32_MAX)));
  parser_->body_limit(limits.max_body_bytes);
  beast::http::async_read_header(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](error_code error, std::size_t) { self->on_header(error); });
}

void Connection::on_header(error_code error) {
  if (phase_ != Phase::kReading) return;
  if (error) return on_read_error(error);
  if (auto refusal = check_header(parser_->get(), core_.options().limits)) {
    return refuse(refusal->status, refusal->message);
  }
  if (expects_continue(parser_->get()) && !parser_->is_done()) {
    out_ = kContinue;
    net::async_write(socket_, net::buffer(out_), [self = shared_from_this()](error_code error, std::size_t) {
      if (self->phase_ != Phase::kReading) return;
      if (error) return self->close();
      self->read_body();
    });
    return;
  }
  read_body();
}

void Connection::read_body() {
  if (parser_->is_done()) return on_body({});
  beast::http::async_read(socket_, buffer_, *parser_,
                          [self = shared_from_this()](error_code error, std::size_t) { self->on_body(error); });
}

void Connection::on_body(error_code error) {
  if (phase_ != Phase::kReading) return;
  if (error) return on_read_error(error);
  disarm();
  Request request = to_request(parser_->release(), remote_);
  parser_.reset();
  dispatch(std::move(request));
}

void Connection::on_read_error(error_code error) {
  const auto received = net::buffer_cast<const char*>(buffer_.data());
  const std::string_view unparsed(received, buffer_.size());  // on a failed header, the request line is here
  if (auto refusal = refusal_for(error, parser_ && parser_->is_header_done(), unparsed, core_.options().limits)) {
    return refuse(refusal->status, refusal->message);
  }
  close();
}

// ---- Answering ----

void Connection::dispatch(Request request) {
  ++core_.requests;
  const bool keep_alive = request.keep_alive() && !core_.draining.load();
  Routed routed;
  try {
    routed = core_.router()(request);
  } catch (const std::exception& error) {
    routed = core_.error_response(500, error.what());
  }
  if (auto* response = std::get_if<Response>(&routed)) return answer(*response, keep_alive);
  if (core_.workers_busy.load() >= core_.options().max_workers) {
    ++core_.rejected;
    return answer(core_.error_response(503, "every worker is busy; retry later"), keep_alive);
  }
  start_worker(std::move(request), std::move(std::get<Handler>(routed)), keep_alive);
}

void Connection::answer(const Response& response, bool keep_alive) {
  phase_ = Phase::kAnswering;
  out_ = serialize(response, keep_alive);
  close_after_write_ = !keep_alive;
  arm(core_.options().write_timeout, Deadline::kWrite);
  net::async_write(socket_, net::buffer(out_), [self = shared_from_this()](error_code error, std::size_t) {
    if (self->phase_ != Phase::kAnswering) return;
    self->disarm();
    if (error || self->close_after_write_ || self->core_.draining.load() || self->core_.stopping.load()) {
      return self->close();
    }
    self->wait_for_request();
  });
}

void Connection::refuse(int status, const std::string& message) {
  ++core_.rejected;
  answer(core_.error_response(status, message), false);
}

void Connection::send_now(const Response& response) {
  const std::string bytes = serialize(response, false);
  error_code ignored;
  socket_.send(net::buffer(bytes), 0, ignored);
}

// ---- Handlers on worker threads ----

void Connection::start_worker(Request request, Handler handler, bool keep_alive) {
  phase_ = Phase::kWorking;
  ++core_.workers_busy;
  core_.worker_thread_started();
  const bool started = core_.workers().try_run(
      [self = shared_from_this(), request = std::move(request), handler = std::move(handler), keep_alive]() mutable {
        const bool reusable = self->run_handler(request, handler, keep_alive);
        // Hand the last reference to the loop (a socket is destroyed where it lives), then let go of the server.
        ServerCore& core = self->core_;
        net::post(core.loop(), [self = std::move(self), reusable] { self->worker_done(reusable); });
        core.worker_thread_finished();
      });
  if (!started) {
    core_.worker_thread_finished();
    --core_.workers_busy;
    ++core_.rejected;
    return answer(core_.error_response(503, "no worker thread is free for the request; retry later"), false);
  }
  watch_for_hang_up();
}

bool Connection::run_handler(const Request& request, const Handler& handler, bool keep_alive) {
  ResponseWriter writer(*this, keep_alive, request.version_minor == 0, core_.stopping);
  try {
    handler(request, writer);
  } catch (const std::exception& error) {
    if (!writer.started()) writer.send(core_.error_response(500, error.what()));
  }
  if (!writer.started()) writer.send(core_.error_response(500, "the route sent no response"));
  return writer.reusable();
}

bool Connection::send(std::string bytes) {
  auto wait = std::make_shared<WriteWait>();
  net::post(core_.loop(), [self = shared_from_this(), wait, bytes = std::move(bytes)]() mutable {
    if (self->phase_ != Phase::kWorking) return wait->finish(false);
    self->out_ = std::move(bytes);
    self->arm(self->core_.options().write_timeout, Deadline::kWrite);
    net::async_write(self->socket_, net::buffer(self->out_), [self, wait](error_code error, std::size_t) {
      if (self->phase_ == Phase::kWorking) {
        self->disarm();
        if (error) self->close();
      }
      wait->finish(!error);
    });
  });
  return wait->wait();
}

// While a handler works the loop keeps one read open: it is how a client's hang-up is seen at once.
void Connection::watch_for_hang_up() {
  if (room() == 0) return probe_for_hang_up();
  watching_ = true;
  socket_.async_read_some(buffer_.prepare(std::min(room(), kReadChunk)),
                          [self = shared_from_this()](error_code error, std::size_t n) {
                            self->watching_ = false;
                            if (!error) self->buffer_.commit(n);
                            if (self->phase_ == Phase::kClosed) return;
                            if (error && error != net::error::operation_aborted) self->hung_up_ = true;
                            if (self->phase_ == Phase::kWorking) {
                              if (!error) self->watch_for_hang_up();
                              return;
                            }
                            self->resume_after_worker();  // the handler finished while this read was out
                          });
}

// The buffer holds a request's worth of pipelined bytes, so nothing more is read until they are served; a hang-up
// is then seen by asking the kernel whether the client has closed its side (every 20 ms, on the loop's thread).
void Connection::probe_for_hang_up() {
  probe_timer_.expires_after(std::chrono::milliseconds(20));
  probe_timer_.async_wait([self = shared_from_this()](error_code error) {
    if (error || self->phase_ != Phase::kWorking) return;
    pollfd probe{self->socket_.native_handle(), POLLRDHUP, 0};
    if (::poll(&probe, 1, 0) > 0 && (probe.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
      self->hung_up_ = true;
      return;
    }
    self->probe_for_hang_up();
  });
}

void Connection::worker_done(bool reusable) {
  --core_.workers_busy;
  if (phase_ == Phase::kClosed) return core_.maybe_finish();
  if (!reusable || hung_up_.load() || core_.draining.load() || core_.stopping.load()) return close();
  phase_ = Phase::kAnswering;  // between requests: the next step is resume_after_worker()
  if (watching_) {
    error_code ignored;
    socket_.cancel(ignored);  // the read's handler resumes (with any bytes it had read)
    return;
  }
  resume_after_worker();
}

void Connection::resume_after_worker() {
  if (hung_up_.load()) return close();
  wait_for_request();
}

}  // namespace minigen::http
