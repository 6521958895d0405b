#include "http/server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "http/request_parser.h"

namespace minigen::http {

struct Server::Connection {
  enum class State { kReading, kWriting };
  int socket = -1;
  std::string remote;
  std::string in;   // received bytes not yet parsed
  std::string out;  // response bytes not yet sent (answers written by the loop)
  std::size_t out_offset = 0;
  State state = State::kReading;
  bool close_after_write = false;
  bool continue_sent = false;
  bool served_before = false;       // waiting for a second request: idle_timeout applies until its first byte
  Clock::time_point waiting_since;  // when it began waiting for its current request
  Clock::time_point deadline;
};

namespace {

void set_nonblocking(int socket, bool nonblocking) {
  const int flags = ::fcntl(socket, F_GETFL, 0);
  ::fcntl(socket, F_SETFL, nonblocking ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK));
}

std::string peer_name(const sockaddr_storage& address, socklen_t length) {
  char host[NI_MAXHOST] = "?";
  char port[NI_MAXSERV] = "?";
  ::getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof host, port, sizeof port,
                NI_NUMERICHOST | NI_NUMERICSERV);
  return std::string(host) + ":" + port;
}

// Best effort, for answers to clients that are being dropped anyway (408, 503 at the door): one non-blocking send.
void send_once(int socket, std::string_view data) {
  [[maybe_unused]] auto ignored = ::send(socket, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

std::string serialize(const Response& response, bool keep_alive) {
  return response_head(response.status, response.headers, response.body.size(), false, keep_alive) + response.body;
}

}  // namespace

Server::Server(Router router, ErrorResponder errors, ServerOptions options)
    : router_(std::move(router)), errors_(std::move(errors)), options_(options) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw Error(std::string("cannot create an eventfd: ") + std::strerror(errno));
}

Server::~Server() {
  stop();
  std::unique_lock lock(returned_mutex_);
  workers_done_.wait(lock, [this] { return workers_busy_.load() == 0; });
  for (auto& connection : returned_) ::close(connection->socket);
  for (auto& connection : connections_) {
    if (connection) ::close(connection->socket);
  }
  if (listen_socket_ >= 0) ::close(listen_socket_);
  ::close(wake_fd_);
}

int Server::bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port_text = std::to_string(port);
  if (const int status = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port_text.c_str(), &hints, &found)) {
    throw Error("cannot listen on " + host + ":" + port_text + ": " + ::gai_strerror(status));
  }
  std::string failure = "no address";
  for (addrinfo* address = found; address != nullptr && listen_socket_ < 0; address = address->ai_next) {
    const int socket = ::socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (socket < 0) continue;
    int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(socket, address->ai_addr, address->ai_addrlen) == 0 && ::listen(socket, SOMAXCONN) == 0) {
      listen_socket_ = socket;
    } else {
      failure = std::strerror(errno);
      ::close(socket);
    }
  }
  ::freeaddrinfo(found);
  if (listen_socket_ < 0) throw Error("cannot listen on " + host + ":" + port_text + ": " + failure);
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(listen_socket_, reinterpret_cast<sockaddr*>(&bound), &length);
  return ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

void Server::wake() {
  const uint64_t one = 1;
  [[maybe_unused]] auto ignored = ::write(wake_fd_, &one, sizeof one);
}

void Server::begin_drain() {
  draining_.store(true);
  wake();
}

void Server::stop() {
  stopping_.store(true);
  wake();
}

ServerStats Server::stats() const {
  return {open_.load(),     accepted_.load(), timed_out_.load(),   evicted_.load(),
          requests_.load(), rejected_.load(), workers_busy_.load()};
}

void Server::close_connection(std::size_t index) {
  ::close(connections_[index]->socket);
  connections_[index].reset();
  --open_;
}

// At max_connections, the loop's connection that has waited longest for a request makes room: a stalled client,
// not a fresh one (and not a response being written or a handler at work).
void Server::make_room() {
  std::size_t oldest = connections_.size();
  for (std::size_t i = 0; i < connections_.size(); ++i) {
    const Connection* c = connections_[i].get();
    if (c == nullptr || c->state != Connection::State::kReading) continue;
    if (oldest == connections_.size() || c->waiting_since < connections_[oldest]->waiting_since) oldest = i;
  }
  if (oldest == connections_.size()) return;
  ++evicted_;  // counted before the close is visible to the client
  close_connection(oldest);
  connections_.erase(connections_.begin() + static_cast<std::ptrdiff_t>(oldest));  // no holes outside the poll pass
}

void Server::accept_connections() {
  while (true) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    const int socket =
        ::accept4(listen_socket_, reinterpret_cast<sockaddr*>(&address), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (socket < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        accept_paused_until_ = Clock::now() + std::chrono::milliseconds(100);  // out of descriptors: back off
      }
      return;
    }
    ++accepted_;
    if (open_.load() >= options_.max_connections) make_room();
    if (open_.load() >= options_.max_connections) {
      ++rejected_;
      send_once(socket, serialize(errors_(503, "too many open connections; retry later"), false));
      ::close(socket);
      continue;
    }
    int yes = 1;
    ::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);  // stream tokens as they are written
    auto connection = std::make_unique<Connection>();
    connection->socket = socket;
    connection->remote = peer_name(address, length);
    connection->waiting_since = Clock::now();
    connection->deadline = connection->waiting_since + options_.request_timeout;
    connections_.push_back(std::move(connection));
    ++open_;
  }
}

void Server::read_from(Connection& connection) {
  // Never hold more than one request's worth: beyond this the parser has either completed or refused it.
  const std::size_t most = options_.limits.max_header_bytes + options_.limits.max_body_bytes + 1;
  char buffer[16384];
  while (connection.in.size() < most) {
    const ssize_t received = ::recv(connection.socket, buffer, sizeof buffer, 0);
    if (received > 0) {
      if (connection.in.empty() && connection.served_before) {
        connection.waiting_since = Clock::now();  // the next request has begun: the whole of it gets the deadline
        connection.deadline = connection.waiting_since + options_.request_timeout;
      }
      connection.in.append(buffer, static_cast<std::size_t>(received));
      continue;
    }
    if (received < 0 && errno == EINTR) continue;
    if (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    connection.socket = -connection.socket - 1;  // end of file or an error: mark for closing
    return;
  }
}

void Server::queue_response(Connection& connection, const Response& response, bool keep_alive) {
  connection.out = serialize(response, keep_alive);
  connection.out_offset = 0;
  connection.close_after_write = !keep_alive;
  connection.state = Connection::State::kWriting;
  connection.deadline = Clock::now() + options_.write_timeout;
  flush(connection);
}

void Server::flush(Connection& connection) {
  while (connection.out_offset < connection.out.size()) {
    const ssize_t sent = ::send(connection.socket, connection.out.data() + connection.out_offset,
                                connection.out.size() - connection.out_offset, MSG_NOSIGNAL);
    if (sent > 0) {
      connection.out_offset += static_cast<std::size_t>(sent);
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // POLLOUT will bring us back
    connection.socket = -connection.socket - 1;
    return;
  }
  if (connection.close_after_write) {
    ::shutdown(connection.socket, SHUT_WR);
    connection.socket = -connection.socket - 1;
    return;
  }
  connection.out.clear();
  connection.state = Connection::State::kReading;
  connection.served_before = true;
  connection.waiting_since = Clock::now();
  connection.deadline =
      connection.waiting_since + (connection.in.empty() ? options_.idle_timeout : options_.request_timeout);
}

// Parses and answers every complete request in the buffer (pipelining), until one needs a worker or more bytes.
void Server::process(Connection& connection) {
  while (connection.socket >= 0 && connection.state == Connection::State::kReading) {
    ParseResult parsed = parse_request(connection.in, options_.limits);
    if (parsed.status == ParseResult::Status::kNeedMore) {
      if (parsed.expects_continue && !connection.continue_sent) {
        send_once(connection.socket, "HTTP/1.1 100 Continue\r\n\r\n");
        connection.continue_sent = true;
      }
      return;
    }
    if (parsed.status == ParseResult::Status::kError) {
      ++rejected_;
      queue_response(connection, errors_(parsed.error_status, parsed.error_message), false);
      return;
    }
    connection.in.erase(0, parsed.consumed);
    connection.continue_sent = false;
    ++requests_;
    Request& request = parsed.request;
    request.remote_address = connection.remote;
    const bool keep_alive = request.keep_alive() && !draining_.load();
    Routed routed;
    try {
      routed = router_(request);
    } catch (const std::exception& error) {
      routed = errors_(500, error.what());
    }
    if (auto* response = std::get_if<Response>(&routed)) {
      queue_response(connection, *response, keep_alive);
      continue;
    }
    if (workers_busy_.load() >= options_.max_workers) {
      ++rejected_;
      queue_response(connection, errors_(503, "every worker is busy; retry later"), keep_alive);
      continue;
    }
    // Hand the connection to a worker: find it in the table and move it out.
    for (auto& slot : connections_) {
      if (slot.get() == &connection) {
        start_worker(std::move(slot), std::move(request), std::move(std::get<Handler>(routed)));
        return;
      }
    }
    return;
  }
}

void Server::start_worker(std::unique_ptr<Connection> connection, Request request, Handler handler) {
  set_nonblocking(connection->socket, false);
  timeval timeout{};
  timeout.tv_sec = options_.write_timeout.count() / 1000;
  timeout.tv_usec = static_cast<suseconds_t>(options_.write_timeout.count() % 1000 * 1000);
  ::setsockopt(connection->socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  ++workers_busy_;
  const bool keep_alive = request.keep_alive() && !draining_.load();
  auto work = [this, connection = std::shared_ptr<Connection>(std::move(connection)), request = std::move(request),
               handler = std::move(handler), keep_alive]() mutable {
    ResponseWriter writer(connection->socket, keep_alive, request.version_minor == 0, stopping_);
    try {
      handler(request, writer);
    } catch (const std::exception& error) {
      if (!writer.started()) writer.send(errors_(500, error.what()));
    }
    if (!writer.started()) writer.send(errors_(500, "the route sent no response"));
    const bool reuse = writer.reusable() && !draining_.load() && !stopping_.load();
    std::lock_guard lock(returned_mutex_);
    if (reuse) {
      set_nonblocking(connection->socket, true);
      auto returned = std::make_unique<Connection>(std::move(*connection));
      returned_.push_back(std::move(returned));
    } else {
      ::close(connection->socket);
      --open_;
    }
    --workers_busy_;
    wake();
    // Last touch of the server, under the lock, so that ~Server cannot finish before it.
    workers_done_.notify_all();
  };
  try {
    std::thread(std::move(work)).detach();
  } catch (const std::system_error&) {
    // No thread to be had: the work (and the connection it owns) is gone with the lambda; undo the count.
    std::lock_guard lock(returned_mutex_);
    --workers_busy_;
    --open_;
    workers_done_.notify_all();
  }
}

void Server::take_back_returned() {
  std::vector<std::unique_ptr<Connection>> returned;
  {
    std::lock_guard lock(returned_mutex_);
    returned.swap(returned_);
  }
  for (auto& connection : returned) {
    connection->state = Connection::State::kReading;
    connection->served_before = true;
    connection->waiting_since = Clock::now();
    connection->deadline =
        connection->waiting_since + (connection->in.empty() ? options_.idle_timeout : options_.request_timeout);
    connections_.push_back(std::move(connection));
    process(*connections_.back());
  }
}

void Server::serve() {
  std::vector<pollfd> polled;
  while (!stopping_.load()) {
    if (draining_.load()) {
      if (listen_socket_ >= 0) {
        ::close(listen_socket_);
        listen_socket_ = -1;
      }
      // No request in progress on the loop's connections: close them all (answers being written finish first).
      for (std::size_t i = 0; i < connections_.size(); ++i) {
        if (connections_[i] && connections_[i]->state == Connection::State::kReading) close_connection(i);
      }
      std::erase(connections_, nullptr);
      std::lock_guard lock(returned_mutex_);
      for (auto& connection : returned_) {
        ::close(connection->socket);
        --open_;
      }
      returned_.clear();
      if (connections_.empty() && workers_busy_.load() == 0) break;
    }

    const auto now = Clock::now();
    auto next_deadline = now + std::chrono::seconds(1);
    polled.clear();
    polled.push_back({wake_fd_, POLLIN, 0});
    const bool accepting = listen_socket_ >= 0 && now >= accept_paused_until_;
    if (accepting) polled.push_back({listen_socket_, POLLIN, 0});
    const std::size_t first_connection = polled.size();
    for (const auto& connection : connections_) {
      const bool reading = connection->state == Connection::State::kReading;
      polled.push_back({connection->socket, static_cast<short>(reading ? (POLLIN | POLLRDHUP) : POLLOUT), 0});
      next_deadline = std::min(next_deadline, connection->deadline);
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - now).count() + 1;
    const int ready = ::poll(polled.data(), polled.size(), static_cast<int>(std::clamp<int64_t>(wait, 0, 1000)));
    if (ready < 0 && errno != EINTR) throw Error(std::string("poll failed: ") + std::strerror(errno));
    if (stopping_.load()) break;

    if (polled[0].revents & POLLIN) {
      uint64_t count;
      [[maybe_unused]] auto ignored = ::read(wake_fd_, &count, sizeof count);
    }
    const std::size_t polled_connections = polled.size() - first_connection;
    for (std::size_t i = 0; i < polled_connections; ++i) {
      Connection* connection = connections_[i].get();
      const short events = polled[first_connection + i].revents;
      if (connection == nullptr || events == 0) continue;
      if (connection->state == Connection::State::kReading) {
        read_from(*connection);
        process(*connection);
      } else {
        flush(*connection);
        process(*connection);
      }
    }
    // Deadlines: a request that has not arrived in time, an idle keep-alive, a reader that stopped reading.
    const auto after = Clock::now();
    for (std::size_t i = 0; i < connections_.size(); ++i) {
      Connection* connection = connections_[i].get();
      if (connection == nullptr) continue;
      if (connection->socket < 0) {  // marked for closing by a read or write
        connection->socket = -connection->socket - 1;
        close_connection(i);
        continue;
      }
      if (after < connection->deadline) continue;
      if (connection->state == Connection::State::kReading && !connection->in.empty()) {
        send_once(connection->socket, serialize(errors_(408, "the request did not arrive in time"), false));
      }
      ++timed_out_;  // before the close, which a client (or a test) may see at once and then read the stats
      close_connection(i);
    }
    std::erase(connections_, nullptr);
    take_back_returned();
    if (accepting && (polled[1].revents & POLLIN)) accept_connections();
  }

  for (std::size_t i = 0; i < connections_.size(); ++i) close_connection(i);
  connections_.clear();
  if (listen_socket_ >= 0) {
    ::close(listen_socket_);
    listen_socket_ = -1;
  }
  std::unique_lock lock(returned_mutex_);
  workers_done_.wait(lock, [this] { return workers_busy_.load() == 0; });
  for (auto& connection : returned_) {
    ::close(connection->socket);
    --open_;
  }
  returned_.clear();
}

}  // namespace minigen::http
