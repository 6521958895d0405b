#include "http/request_rules.h"

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <cctype>

#include "core/ascii.h"

namespace minigen::http {
namespace {

namespace beast = boost::beast;
using beast::http::field;

std::size_t count_fields(const BeastRequest& header, field name) {
  const auto [first, last] = header.equal_range(name);
  return static_cast<std::size_t>(std::distance(first, last));
}

// The request line ends in "HTTP/" + digit "." digit: well-formed, but perhaps not a version Beast reads.
bool is_other_http_version(std::string_view unparsed) {
  while (unparsed.starts_with("\r\n")) unparsed.remove_prefix(2);
  std::string_view line = unparsed.substr(0, unparsed.find("\r\n"));
  const std::size_t space = line.rfind(' ');
  if (space == std::string_view::npos) return false;
  line.remove_prefix(space + 1);
  return line.size() == 8 && line.starts_with("HTTP/") && std::isdigit(static_cast<unsigned char>(line[5])) &&
         line[6] == '.' && std::isdigit(static_cast<unsigned char>(line[7]));
}

}  // namespace

std::optional<Refusal> check_header(const BeastRequest& header, const RequestLimits& limits) {
  if (header.version() != 10 && header.version() != 11) {
    return Refusal{505, "this server speaks HTTP/1.0 and HTTP/1.1 only"};
  }
  const std::string_view target(header.target().data(), header.target().size());
  if (target.empty() || target.front() != '/') {
    return Refusal{400, "malformed request target: send a path such as /v1/completions (origin-form)"};
  }
  const auto lines = static_cast<std::size_t>(std::distance(header.begin(), header.end()));
  if (lines > limits.max_headers) {
    return Refusal{431, "more than " + std::to_string(limits.max_headers) + " header lines"};
  }
  if (count_fields(header, field::transfer_encoding) > 0) {
    return Refusal{411, "send the request body with a Content-Length (Transfer-Encoding is not accepted)"};
  }
  if (count_fields(header, field::host) > 1) {
    return Refusal{400, "the request has more than one Host header (RFC 9112 allows one)"};
  }
  if (count_fields(header, field::expect) > 1 ||
      (count_fields(header, field::expect) == 1 && !expects_continue(header))) {
    return Refusal{417, "the only expectation this server meets is 'Expect: 100-continue'"};
  }
  return std::nullopt;
}

std::optional<Refusal> refusal_for(boost::system::error_code error, bool header_done, std::string_view unparsed,
                                   const RequestLimits& limits) {
  namespace http = beast::http;
  if (error.category() != http::make_error_code(http::error::end_of_stream).category()) {
    return std::nullopt;  // the socket's own errors: reset, aborted, closed
  }
  switch (static_cast<http::error>(error.value())) {
    case http::error::end_of_stream:
    case http::error::partial_message:
      return std::nullopt;  // the client closed: before a request, or in the middle of one
    case http::error::header_limit:
      return Refusal{431, "the request line and headers exceed " + std::to_string(limits.max_header_bytes) + " bytes"};
    case http::error::body_limit:
      return Refusal{413, "the request body exceeds " + std::to_string(limits.max_body_bytes) + " bytes"};
    case http::error::buffer_overflow:
      return header_done ? Refusal{413, "the request body exceeds " + std::to_string(limits.max_body_bytes) + " bytes"}
                         : Refusal{431, "the request line and headers exceed " +
                                            std::to_string(limits.max_header_bytes) + " bytes"};
    case http::error::bad_method:
      return Refusal{400, "malformed method in the request line"};
    case http::error::bad_target:
      return Refusal{400, "malformed request target"};
    case http::error::bad_version:
      // Beast reads only "HTTP/1.x"; "HTTP/2.0" is a version this server does not speak, "FTP/1.1" is not HTTP.
      if (is_other_http_version(unparsed)) return Refusal{505, "this server speaks HTTP/1.0 and HTTP/1.1 only"};
      return Refusal{400, "malformed request line: the protocol must be HTTP/1.0 or HTTP/1.1"};
    case http::error::bad_content_length:
      return Refusal{400, "malformed or conflicting Content-Length"};
    case http::error::bad_transfer_encoding:
      return Refusal{411, "send the request body with a Content-Length (Transfer-Encoding is not accepted)"};
    case http::error::bad_obs_fold:
      return Refusal{400, "malformed header line: obsolete line folding is not accepted"};
    case http::error::bad_field:
    case http::error::bad_value:
      return Refusal{400, "malformed header line (a name must be a token; a value may not hold control characters)"};
    default:
      return Refusal{400, "malformed request (" + error.message() + ")"};
  }
}

bool expects_continue(const BeastRequest& header) {
  const auto found = header.find(field::expect);
  return found != header.end() && beast::iequals(found->value(), "100-continue");
}

Request to_request(BeastRequest&& message, std::string remote_address) {
  Request request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  const std::size_t question = request.target.find('?');
  request.path = request.target.substr(0, question);
  if (question != std::string::npos) request.query = request.target.substr(question + 1);
  request.version_minor = message.version() % 10;
  for (const auto& entry : message) {
    request.headers.emplace_back(ascii_lower(std::string_view(entry.name_string().data(), entry.name_string().size())),
                                 std::string(entry.value()));
  }
  request.body = std::move(message.body());
  request.remote_address = std::move(remote_address);
  return request;
}

}  // namespace minigen::http
