#include "http/server.h"

#include <boost/asio/post.hpp>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "http/connection.h"

namespace minigen::http {
namespace {

using boost::system::error_code;
using net::ip::tcp;

std::string peer_name(const tcp::socket& socket) {
  error_code error;
  const tcp::endpoint peer = socket.remote_endpoint(error);
  if (error) return "?";
  return peer.address().to_string() + ":" + std::to_string(peer.port());
}

bool out_of_descriptors(const error_code& error) {
  return error == net::error::no_descriptors || error == net::error::no_buffer_space ||
         error == net::error::no_memory || error.value() == ENFILE;
}

}  // namespace

// ---- ServerCore ----

ServerCore::ServerCore(Router router, ErrorResponder errors, ServerOptions options)
    : router_(std::move(router)), errors_(std::move(errors)), options_(options) {}

int ServerCore::bind(const std::string& host, int port) {
  const std::string port_text = std::to_string(port);
  error_code error;
  const auto found = tcp::resolver(loop_).resolve(host.empty() ? "0.0.0.0" : host, port_text,
                                                  tcp::resolver::passive | tcp::resolver::numeric_service, error);
  if (error) throw Error("cannot listen on " + host + ":" + port_text + ": " + error.message());
  std::string failure = "no address";
  for (const auto& entry : found) {
    tcp::acceptor acceptor(loop_);
    if (!acceptor.open(entry.endpoint().protocol(), error) &&
        !acceptor.set_option(tcp::acceptor::reuse_address(true), error) && !acceptor.bind(entry.endpoint(), error) &&
        !acceptor.listen(net::socket_base::max_listen_connections, error)) {
      acceptor_ = std::move(acceptor);
      return acceptor_.local_endpoint().port();
    }
    failure = error.message();
  }
  throw Error("cannot listen on " + host + ":" + port_text + ": " + failure);
}

void ServerCore::serve() {
  keep_running_.emplace(net::make_work_guard(loop_));
  net::post(loop_, [this] {
    if (stopping.load() || draining.load()) return maybe_finish();
    accept_next();
  });
  // A completion handler that throws (only allocation can) must not end the server: the loop goes on.
  while (true) {
    try {
      loop_.run();
      return;
    } catch (const std::exception& error) {
      std::fprintf(stderr, "[minigen] http: %s\n", error.what());
    }
  }
}

void ServerCore::accept_next() {
  if (!acceptor_.is_open()) return;
  acceptor_.async_accept([this](error_code error, tcp::socket socket) {
    if (!acceptor_.is_open() || error == net::error::operation_aborted) return;
    if (error) {
      if (!out_of_descriptors(error)) return accept_next();
      accept_pause_.expires_after(std::chrono::milliseconds(100));  // out of descriptors: back off
      accept_pause_.async_wait([this](error_code waited) {
        if (!waited) accept_next();
      });
      return;
    }
    ++accepted;
    if (open.load() >= options_.max_connections) make_room();
    if (open.load() >= options_.max_connections) {
      ++rejected;
      const Response busy = errors_(503, "too many open connections; retry later");
      const std::string bytes = response_head(busy.status, busy.headers, busy.body.size(), false, false) + busy.body;
      error_code ignored;
      socket.non_blocking(true, ignored);
      socket.send(net::buffer(bytes), 0, ignored);  // best effort: the client is turned away either way
      socket.close(ignored);
      return accept_next();
    }
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);  // stream tokens as they are written
    std::string remote = peer_name(socket);
    std::make_shared<Connection>(*this, std::move(socket), std::move(remote))->start();
    accept_next();
  });
}

// At max_connections, the connection that has waited longest for a request makes room: a stalled client, not a
// fresh one (and not a response being written or a handler at work).
void ServerCore::make_room() {
  Connection* oldest = nullptr;
  for (const auto& connection : connections_) {
    if (!connection->waiting_for_request()) continue;
    if (oldest == nullptr || connection->waiting_since() < oldest->waiting_since()) oldest = connection.get();
  }
  if (oldest == nullptr) return;
  ++evicted;  // counted before the close is visible to the client
  oldest->close();
}

ServerCore::ConnectionList::iterator ServerCore::add(std::shared_ptr<Connection> connection) {
  ++open;
  return connections_.insert(connections_.end(), std::move(connection));
}

void ServerCore::remove(ConnectionList::iterator where) {
  --open;
  connections_.erase(where);
}

void ServerCore::close_all(bool only_waiting) {
  std::vector<std::shared_ptr<Connection>> closing;
  for (const auto& connection : connections_) {
    if (!only_waiting || connection->waiting_for_request()) closing.push_back(connection);
  }
  for (const auto& connection : closing) connection->close();
}

void ServerCore::begin_drain() {
  draining.store(true);
  net::post(loop_, [this] {
    error_code ignored;
    acceptor_.close(ignored);
    close_all(true);  // answers being written and handlers at work finish first
    maybe_finish();
  });
}

void ServerCore::stop() {
  stopping.store(true);
  net::post(loop_, [this] {
    error_code ignored;
    acceptor_.close(ignored);
    close_all(false);  // handlers see cancelled(); their writes fail
    maybe_finish();
  });
}

void ServerCore::maybe_finish() {
  if (!keep_running_ || !(stopping.load() || draining.load())) return;
  if (workers_busy.load() > 0 || !connections_.empty()) return;
  error_code ignored;
  acceptor_.close(ignored);
  accept_pause_.cancel();
  keep_running_.reset();  // run() returns once the handlers still queued (all cancelled) have run
}

void ServerCore::worker_thread_started() {
  std::lock_guard lock(threads_mutex_);
  ++worker_threads_;
}

void ServerCore::worker_thread_finished() {
  std::lock_guard lock(threads_mutex_);
  --worker_threads_;
  threads_done_.notify_all();  // under the lock: the waiter cannot destroy the server before this returns
}

void ServerCore::wait_for_worker_threads() {
  std::unique_lock lock(threads_mutex_);
  threads_done_.wait(lock, [this] { return worker_threads_ == 0; });
}

// ---- Server ----

Server::Server(Router router, ErrorResponder errors, ServerOptions options)
    : core_(std::make_unique<ServerCore>(std::move(router), std::move(errors), options)) {}

Server::~Server() {
  stop();
  core_->wait_for_worker_threads();
}

int Server::bind(const std::string& host, int port) { return core_->bind(host, port); }
void Server::serve() { core_->serve(); }
void Server::begin_drain() { core_->begin_drain(); }
void Server::stop() { core_->stop(); }
bool Server::draining() const { return core_->draining.load(); }
int Server::active_workers() const { return core_->workers_busy.load(); }

ServerStats Server::stats() const {
  const ServerCore& c = *core_;
  return {c.open.load(),     c.accepted.load(), c.timed_out.load(),   c.evicted.load(),
          c.requests.load(), c.rejected.load(), c.workers_busy.load()};
}

}  // namespace minigen::http
