// The HTTP/1.1 request parser (src/http/request_parser.*) on any bytes, with small limits so that they are reached.
// Beyond "no crash": an error carries one of the statuses the parser documents; a complete request used no more than
// the buffer, its body is exactly the Content-Length bytes that end what it used, its path is origin-form and its
// header names are lower-case; the bytes it used parse alone to the same request, and one byte fewer needs more.
#include <set>
#include <string>

#include "fuzz_check.h"
#include "http/request_parser.h"

using namespace minigen;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view buffer = fuzz::as_text(data, size);
  http::RequestLimits limits;
  limits.max_header_bytes = 1024;
  limits.max_headers = 16;
  limits.max_body_bytes = 4096;
  const http::ParseResult parsed = http::parse_request(buffer, limits);
  using Status = http::ParseResult::Status;
  if (parsed.status == Status::kError) {
    static const std::set<int> kStatuses = {400, 411, 413, 417, 431, 505};
    fuzz::check(kStatuses.count(parsed.error_status) == 1, "an error status the parser documents");
    fuzz::check(!parsed.error_message.empty(), "an error says what is wrong");
    return 0;
  }
  if (parsed.status == Status::kNeedMore) return 0;
  const http::Request& request = parsed.request;
  fuzz::check(parsed.consumed <= buffer.size(), "a request uses only bytes it was given");
  fuzz::check(request.body.size() <= limits.max_body_bytes, "the body is within its limit");
  fuzz::check(buffer.substr(parsed.consumed - request.body.size(), request.body.size()) == request.body,
              "the body is the bytes that end the request");
  const std::string* length = request.header("content-length");
  fuzz::check(length != nullptr || request.body.empty(), "a body needs a Content-Length");
  fuzz::check(request.path == "*" || (!request.path.empty() && request.path[0] == '/'), "an origin-form path");
  for (const auto& [name, value] : request.headers) {
    for (char c : name) fuzz::check(!(c >= 'A' && c <= 'Z'), "header names are lower-case");
  }
  const http::ParseResult again = http::parse_request(buffer.substr(0, parsed.consumed), limits);
  fuzz::check(again.status == Status::kComplete && again.consumed == parsed.consumed &&
                  again.request.target == request.target && again.request.body == request.body,
              "the used bytes alone parse to the same request");
  const http::ParseResult shorter = http::parse_request(buffer.substr(0, parsed.consumed - 1), limits);
  fuzz::check(shorter.status == Status::kNeedMore, "one byte fewer needs more");
  return 0;
}
