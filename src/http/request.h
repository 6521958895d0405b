#pragma once
// An HTTP/1.1 request as the server hands it to a route: method, path, headers (names lower-cased), body.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minigen::http {

struct Request {
  std::string method;
  std::string target;                                        // as sent: path and query
  std::string path;                                          // target up to '?'
  std::string query;                                         // after '?', without it
  int version_minor = 1;                                     // HTTP/1.0 or HTTP/1.1
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, values trimmed
  std::string body;
  std::string remote_address;  // the peer, "127.0.0.1:51234"

  // The first header of that (lower-case) name, or nullptr.
  const std::string* header(std::string_view lower_case_name) const;
  // Whether the client asked to keep the connection open after this response (HTTP/1.1's default).
  bool keep_alive() const;
};

// What a request may take before it is refused. A request that has not finished within these is an error, so a
// client can never make the server buffer more than max_header_bytes + max_body_bytes for it.
struct RequestLimits {
  std::size_t max_header_bytes = 16 * 1024;  // request line + headers (431 beyond)
  std::size_t max_headers = 100;             // header lines (431 beyond)
  std::size_t max_body_bytes = 8u << 20;     // Content-Length (413 beyond)
};

}  // namespace minigen::http
