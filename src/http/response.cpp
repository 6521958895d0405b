#include "http/response.h"

#include <cstdio>
#include <ctime>

namespace minigen::http {

Response& Response::set(std::string name, std::string value) {
  headers.emplace_back(std::move(name), std::move(value));
  return *this;
}

std::string_view status_reason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

std::string response_head(int status, const Headers& headers, std::optional<std::size_t> content_length, bool chunked,
                          bool keep_alive) {
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + std::string(status_reason(status)) + "\r\n";
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &utc);
  head += "Date: ";
  head += date;
  head += "\r\n";
  for (const auto& [name, value] : headers) head += name + ": " + value + "\r\n";
  if (content_length) {
    head += "Content-Length: " + std::to_string(*content_length) + "\r\n";
  } else if (chunked) {
    head += "Transfer-Encoding: chunked\r\n";
  }
  head += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  head += "\r\n";
  return head;
}

std::string chunk(std::string_view data) {
  char size[24];
  const int length = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out(size, static_cast<std::size_t>(length));
  out += data;
  out += "\r\n";
  return out;
}

}  // namespace minigen::http
