#pragma once
// Parses one HTTP/1.1 request from the front of a byte buffer. Stateless: the caller appends bytes as they arrive
// and calls it again; it answers "need more", "complete (this many bytes)", or an error with the status to send.
//
// Strict by design (RFC 9112): a request line of three parts, origin-form targets, token header names, no obsolete
// line folding, no NUL/CR/LF inside values, one Content-Length (equal duplicates allowed), no Transfer-Encoding on
// requests (411: every client this server expects sends JSON with a length). A parse never reads past the buffer
// and never allocates more than the limits allow.
#include <cstddef>
#include <string>
#include <string_view>

#include "http/request.h"

namespace minigen::http {

struct ParseResult {
  enum class Status { kNeedMore, kComplete, kError };
  Status status = Status::kNeedMore;
  Request request;                // complete request; on kNeedMore with headers_complete, everything but the body
  std::size_t consumed = 0;       // bytes of the buffer this request used (kComplete)
  bool headers_complete = false;  // the blank line after the headers has arrived
  bool expects_continue = false;  // "Expect: 100-continue" and the body has not arrived yet
  int error_status = 0;           // 400, 411, 413, 417, 431, 501, 505 (kError)
  std::string error_message;
};

ParseResult parse_request(std::string_view buffer, const RequestLimits& limits);

}  // namespace minigen::http
