#include "http/request_parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace minigen::http {
namespace {

using Status = ParseResult::Status;

ParseResult failure(int status, std::string message) {
  ParseResult result;
  result.status = Status::kError;
  result.error_status = status;
  result.error_message = std::move(message);
  return result;
}

// RFC 9110 §5.6.2: token characters (method and header names).
bool is_token_char(unsigned char c) {
  if (std::isalnum(c)) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool is_token(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return is_token_char(c); });
}

// Field values may hold visible characters, spaces, tabs and obs-text (bytes ≥ 0x80), nothing else.
bool is_field_value(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c == '\t' || (c >= 0x20 && c != 0x7F);
  });
}

// Targets are origin-form ("/path?query") with visible ASCII only; "*" is allowed for OPTIONS.
bool is_target(std::string_view text) {
  if (text.empty() || (text[0] != '/' && text != "*")) return false;
  return std::all_of(text.begin(), text.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c > 0x20 && c < 0x7F;
  });
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// "GET /path HTTP/1.1": exactly one space between the three parts.
bool parse_request_line(std::string_view line, Request& request, ParseResult& error) {
  const std::size_t first = line.find(' ');
  const std::size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (second == std::string_view::npos || line.find(' ', second + 1) != std::string_view::npos) {
    error = failure(400, "malformed request line");
    return false;
  }
  const std::string_view method = line.substr(0, first);
  const std::string_view target = line.substr(first + 1, second - first - 1);
  const std::string_view version = line.substr(second + 1);
  if (!is_token(method)) {
    error = failure(400, "malformed request method");
    return false;
  }
  if (!is_target(target)) {
    error = failure(400, "malformed request target (expected a path beginning with '/')");
    return false;
  }
  if (version.size() != 8 || version.substr(0, 7) != "HTTP/1.") {
    error = failure(version.substr(0, 5) == "HTTP/" ? 505 : 400, "only HTTP/1.0 and HTTP/1.1 are supported");
    return false;
  }
  if (version[7] != '0' && version[7] != '1') {
    error = failure(505, "only HTTP/1.0 and HTTP/1.1 are supported");
    return false;
  }
  request.method = method;
  request.target = target;
  const std::size_t question = target.find('?');
  request.path = target.substr(0, question);
  request.query = question == std::string_view::npos ? "" : target.substr(question + 1);
  request.version_minor = version[7] - '0';
  return true;
}

}  // namespace

const std::string* Request::header(std::string_view lower_case_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_case_name) return &value;
  }
  return nullptr;
}

bool Request::keep_alive() const {
  const std::string* connection = header("connection");
  // Connection is a comma-separated list of options; "close" / "keep-alive" appear as whole items.
  auto has_option = [&](std::string_view option) {
    if (connection == nullptr) return false;
    std::string_view rest = *connection;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      if (equals_ignoring_case(trim(rest.substr(0, comma)), option)) return true;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    return false;
  };
  if (has_option("close")) return false;
  return version_minor >= 1 || has_option("keep-alive");
}

ParseResult parse_request(std::string_view buffer, const RequestLimits& limits) {
  // A client may send blank lines before a request (RFC 9112 §2.2); skip a few, no more.
  std::size_t start = 0;
  while (start < buffer.size() && start < 8 && (buffer[start] == '\r' || buffer[start] == '\n')) ++start;

  const std::size_t header_end = buffer.find("\r\n\r\n", start);
  if (header_end == std::string_view::npos) {
    if (buffer.size() - start > limits.max_header_bytes) {
      return failure(431, "the request line and headers exceed " + std::to_string(limits.max_header_bytes) + " bytes");
    }
    return {};
  }
  if (header_end + 4 - start > limits.max_header_bytes) {
    return failure(431, "the request line and headers exceed " + std::to_string(limits.max_header_bytes) + " bytes");
  }

  ParseResult result;
  Request& request = result.request;
  std::string_view head = buffer.substr(start, header_end - start);
  std::size_t line_end = head.find("\r\n");
  if (!parse_request_line(head.substr(0, line_end), request, result)) return result;

  std::string_view content_length;
  bool has_content_length = false;
  while (line_end != std::string_view::npos) {
    head.remove_prefix(line_end + 2);
    line_end = head.find("\r\n");
    const std::string_view line = head.substr(0, line_end);
    if (line.empty() || line[0] == ' ' || line[0] == '\t') {
      return failure(400, "malformed header line (obsolete line folding is not accepted)");
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) {
      return failure(400, "malformed header line");
    }
    const std::string_view value = trim(line.substr(colon + 1));
    if (!is_field_value(value)) return failure(400, "a header value holds a control character");
    if (request.headers.size() >= limits.max_headers) {
      return failure(431, "more than " + std::to_string(limits.max_headers) + " header lines");
    }
    request.headers.emplace_back(lower(line.substr(0, colon)), std::string(value));
    const std::string& name = request.headers.back().first;
    if (name == "content-length") {
      if (has_content_length && value != content_length) return failure(400, "conflicting Content-Length headers");
      has_content_length = true;
      content_length = value;
    } else if (name == "transfer-encoding") {
      return failure(411, "send the body with a Content-Length (chunked request bodies are not accepted)");
    }
  }

  std::size_t body_length = 0;
  if (has_content_length) {
    const char* first = content_length.data();
    const char* last = first + content_length.size();
    const auto [end, error] = std::from_chars(first, last, body_length);
    if (content_length.empty() || error == std::errc::result_out_of_range) {
      if (error == std::errc::result_out_of_range) {
        return failure(413, "the body exceeds " + std::to_string(limits.max_body_bytes) + " bytes");
      }
      return failure(400, "malformed Content-Length");
    }
    if (error != std::errc() || end != last) return failure(400, "malformed Content-Length");
  }
  if (body_length > limits.max_body_bytes) {
    return failure(413, "the body (" + std::to_string(body_length) + " bytes) exceeds " +
                            std::to_string(limits.max_body_bytes) + " bytes");
  }
  if (const std::string* expect = request.header("expect")) {
    if (!equals_ignoring_case(*expect, "100-continue"))
      return failure(417, "only 'Expect: 100-continue' is understood");
  }

  result.headers_complete = true;
  const std::size_t body_start = header_end + 4;
  if (buffer.size() - body_start < body_length) {
    result.expects_continue = request.header("expect") != nullptr;
    result.status = Status::kNeedMore;
    return result;
  }
  request.body = buffer.substr(body_start, body_length);
  result.consumed = body_start + body_length;
  result.status = Status::kComplete;
  return result;
}

}  // namespace minigen::http
