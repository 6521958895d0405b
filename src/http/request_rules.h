#pragma once
// What minigen asks of a request beyond what Beast's parser already enforces, and how a parse failure is answered.
//
// Beast checks the syntax (RFC 9112: request line, token header names, field values, Content-Length, chunked
// framing) and the byte limits. minigen adds the serving rules (origin-form targets only; HTTP/1.0 and 1.1 only;
// no Transfer-Encoding on requests — every client this server expects sends JSON with a length — at most
// max_headers header lines; one Host; Expect only as 100-continue) and turns the parsed message into the plain
// Request its routes read.
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>
#include <optional>
#include <string>

#include "http/request.h"

namespace minigen::http {

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;

struct Refusal {
  int status = 400;
  std::string message;
};

// A complete header that breaks a rule above, or nothing.
std::optional<Refusal> check_header(const BeastRequest& header, const RequestLimits& limits);

// The answer to a read that failed: nothing when the client simply went away (end of stream, reset, a request cut
// off by the client's own close) or the read was cancelled; otherwise the status and a message that says why.
// `unparsed` is what the parser had not consumed (a failed header's request line is at its front).
std::optional<Refusal> refusal_for(boost::system::error_code error, bool header_done, std::string_view unparsed,
                                   const RequestLimits& limits);

// "Expect: 100-continue" is on the header (the client waits for an interim answer before it sends the body).
bool expects_continue(const BeastRequest& header);

Request to_request(BeastRequest&& message, std::string remote_address);

}  // namespace minigen::http
