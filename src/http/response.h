#pragma once
// An HTTP response built in memory (everything but streams), and the text of a response head.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minigen::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Response {
  int status = 200;
  Headers headers;  // Content-Length, Connection and Date are added when the response is written
  std::string body;

  Response& set(std::string name, std::string value);
};

std::string_view status_reason(int status);

// "HTTP/1.1 200 OK\r\n" + headers + the framing ones + "\r\n". With a content length the body follows in full;
// without one the body is chunked (HTTP/1.1) or ends when the connection closes (an HTTP/1.0 client).
std::string response_head(int status, const Headers& headers, std::optional<std::size_t> content_length, bool chunked,
                          bool keep_alive);

// One chunk of a chunked body ("1a\r\n...\r\n"); the last chunk is "0\r\n\r\n".
std::string chunk(std::string_view data);
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

}  // namespace minigen::http
