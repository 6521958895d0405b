#pragma once
// A raw TCP client for tests that must misbehave on purpose (send half a request, stall, hang up, pipeline) — the
// things a well-behaved HTTP library will not do.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>

namespace minigen::http::testing {

class RawClient {
 public:
  explicit RawClient(int port) {
    socket_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(socket_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      ::close(socket_);
      throw std::runtime_error("cannot connect to port " + std::to_string(port));
    }
  }
  ~RawClient() { close(); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool send(std::string_view data) {
    while (!data.empty()) {
      const ssize_t sent = ::send(socket_, data.data(), data.size(), MSG_NOSIGNAL);
      if (sent <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(sent));
    }
    return true;
  }

  // Reads until `needle` has arrived, the peer closes, or the timeout passes; returns everything read so far.
  std::string read_until(std::string_view needle, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (received_.find(needle) == std::string::npos && !closed_) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd ready{socket_, POLLIN, 0};
      if (::poll(&ready, 1, static_cast<int>(left.count())) <= 0) break;
      char buffer[4096];
      const ssize_t got = ::recv(socket_, buffer, sizeof buffer, 0);
      if (got <= 0) {
        closed_ = true;
        break;
      }
      received_.append(buffer, static_cast<std::size_t>(got));
    }
    return received_;
  }
  // Reads until the server closes the connection (or the timeout passes).
  std::string read_all(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    return read_until(std::string_view("\0never\0", 7), timeout);
  }
  bool closed_by_peer() const { return closed_; }
  void close() {
    if (socket_ >= 0) ::close(socket_);
    socket_ = -1;
  }

 private:
  int socket_ = -1;
  std::string received_;
  bool closed_ = false;
};

// A plain GET as one string.
inline std::string get_request(std::string_view path, std::string_view extra_headers = "") {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: localhost\r\n" + std::string(extra_headers) + "\r\n";
}

}  // namespace minigen::http::testing
