#pragma once
// How a route running on a worker thread answers: one whole response, or a stream (chunked, for Server-Sent
// Events) written piece by piece. Writes block until the bytes are out, for at most the server's write timeout; a
// client that does not read for that long, or has gone away, makes every later write return false.
//
// cancelled() is the route's question between the steps of a long job: has the client hung up (a non-streaming
// client gives no other sign until the answer is written) or is the server shutting down? It reads two flags.
#include <atomic>
#include <string>
#include <string_view>

#include "http/response.h"

namespace minigen::http {

// The connection as a worker sees it (the server implements it; tests may too).
class ClientLink {
 public:
  virtual ~ClientLink() = default;
  // Writes every byte or fails (write timeout, connection closed); blocks until it knows which.
  virtual bool send(std::string bytes) = 0;
  // The client has closed its side (or the connection failed): nobody is waiting for the answer any more.
  virtual bool hung_up() const = 0;
};

class ResponseWriter {
 public:
  ResponseWriter(ClientLink& link, bool keep_alive, bool http10, const std::atomic<bool>& server_stopping);

  void send(const Response& response);
  bool begin_stream(int status, const Headers& headers);
  bool write(std::string_view data);  // one chunk (ignored when empty)
  void end_stream();

  bool cancelled();

  bool started() const { return started_; }
  // The response went out whole and the connection can carry the client's next request.
  bool reusable() const { return complete_ && keep_alive_ && !broken_; }

 private:
  bool write_all(std::string data);

  ClientLink& link_;
  bool keep_alive_;
  bool http10_;
  const std::atomic<bool>& server_stopping_;
  bool started_ = false;
  bool complete_ = false;
  bool broken_ = false;
};

}  // namespace minigen::http
