#include "http/response_writer.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

namespace minigen::http {

ResponseWriter::ResponseWriter(int socket, bool keep_alive, bool http10, const std::atomic<bool>& server_stopping)
    : socket_(socket), keep_alive_(keep_alive), http10_(http10), server_stopping_(server_stopping) {}

bool ResponseWriter::write_all(std::string_view data) {
  while (!broken_ && !data.empty()) {
    // The socket carries SO_SNDTIMEO: a send that cannot make progress for the write timeout fails with EAGAIN.
    const ssize_t sent = ::send(socket_, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) {
      broken_ = true;
      break;
    }
    data.remove_prefix(static_cast<std::size_t>(sent));
  }
  return !broken_;
}

void ResponseWriter::send(const Response& response) {
  if (started_) return;
  started_ = true;
  std::string out = response_head(response.status, response.headers, response.body.size(), false, keep_alive_);
  out += response.body;
  complete_ = write_all(out);
}

bool ResponseWriter::begin_stream(int status, const Headers& headers) {
  if (started_) return false;
  started_ = true;
  if (http10_) keep_alive_ = false;  // an HTTP/1.0 client reads the body until the connection closes
  return write_all(response_head(status, headers, std::nullopt, !http10_, keep_alive_));
}

bool ResponseWriter::write(std::string_view data) {
  if (data.empty()) return !broken_;  // an empty chunk would end the body
  return http10_ ? write_all(data) : write_all(chunk(data));
}

void ResponseWriter::end_stream() {
  if (!started_ || complete_) return;
  complete_ = http10_ ? !broken_ : write_all(kLastChunk);
}

bool ResponseWriter::cancelled() {
  if (broken_ || server_stopping_.load(std::memory_order_relaxed)) return true;
  pollfd probe{socket_, POLLIN | POLLRDHUP, 0};
  if (::poll(&probe, 1, 0) <= 0) return false;
  if (probe.revents & (POLLHUP | POLLERR | POLLRDHUP)) return broken_ = true;
  if (probe.revents & POLLIN) {
    // Readable: either the client's next (pipelined) request, which stays in the socket, or end of file.
    char byte;
    const ssize_t peeked = ::recv(socket_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EINTR)) return broken_ = true;
  }
  return false;
}

}  // namespace minigen::http
