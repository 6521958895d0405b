#include "http/request_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace minigen::http {
namespace {

using Status = ParseResult::Status;
using namespace std::string_literals;

TEST(RequestParser, ParsesARequestWithABodyAndReportsTheBytesItUsed) {
  const std::string text =
      "POST /v1/completions?x=1 HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
      "Content-Length: 7\r\nX-Spaces:   padded value  \r\n\r\n{\"a\":1}GET / HTTP/1.1\r\n";
  const ParseResult parsed = parse_request(text, {});
  ASSERT_EQ(parsed.status, Status::kComplete);
  EXPECT_EQ(parsed.request.method, "POST");
  EXPECT_EQ(parsed.request.path, "/v1/completions");
  EXPECT_EQ(parsed.request.query, "x=1");
  EXPECT_EQ(parsed.request.body, "{\"a\":1}");
  EXPECT_EQ(*parsed.request.header("content-type"), "application/json");
  EXPECT_EQ(*parsed.request.header("x-spaces"), "padded value");
  EXPECT_EQ(parsed.request.header("accept"), nullptr);
  EXPECT_EQ(parsed.consumed, text.find("GET /"));  // the pipelined request after it stays in the buffer
  EXPECT_TRUE(parsed.request.keep_alive());
}

TEST(RequestParser, EveryPrefixOfARequestNeedsMore) {
  const std::string text = "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc";
  for (std::size_t length = 0; length < text.size(); ++length) {
    const ParseResult parsed = parse_request(std::string_view(text).substr(0, length), {});
    EXPECT_EQ(parsed.status, Status::kNeedMore) << length;
    EXPECT_EQ(parsed.headers_complete, length >= text.size() - 3) << length;
  }
  EXPECT_EQ(parse_request(text, {}).status, Status::kComplete);
}

TEST(RequestParser, KeepAliveFollowsTheVersionAndTheConnectionHeader) {
  EXPECT_FALSE(parse_request("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n", {}).request.keep_alive());
  EXPECT_FALSE(parse_request("GET / HTTP/1.0\r\n\r\n", {}).request.keep_alive());
  EXPECT_TRUE(parse_request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", {}).request.keep_alive());
  EXPECT_FALSE(parse_request("GET / HTTP/1.1\r\nConnection: upgrade, close\r\n\r\n", {}).request.keep_alive());
}

TEST(RequestParser, ExpectContinueIsReportedUntilTheBodyArrives) {
  const std::string head = "POST /a HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n";
  const ParseResult waiting = parse_request(head, {});
  EXPECT_EQ(waiting.status, Status::kNeedMore);
  EXPECT_TRUE(waiting.expects_continue);
  EXPECT_EQ(parse_request(head + "ok", {}).status, Status::kComplete);
}

struct BadCase {
  std::string text;
  int status;
  std::string message_part;
};

TEST(RequestParser, MalformedAndOversizedRequestsGetTheRightStatus) {
  RequestLimits limits;
  limits.max_header_bytes = 256;
  limits.max_headers = 4;
  limits.max_body_bytes = 100;
  const BadCase cases[] = {
      {"GET /\r\n\r\n", 400, "request line"},
      {"GET  / HTTP/1.1\r\n\r\n", 400, "request line"},
      {"G(T / HTTP/1.1\r\n\r\n", 400, "method"},
      {"GET http://x/ HTTP/1.1\r\n\r\n", 400, "target"},
      {"GET /a\x01 HTTP/1.1\r\n\r\n", 400, "target"},
      {"GET / HTTP/2.0\r\n\r\n", 505, "HTTP/1.0"},
      {"GET / HTTP/1.9\r\n\r\n", 505, "HTTP/1.0"},
      {"GET / FTP/1.1\r\n\r\n", 400, "HTTP/1.0"},
      {"GET / HTTP/1.1\r\nNo colon\r\n\r\n", 400, "header line"},
      {"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400, "folding"},
      {"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 400, "header line"},
      {"GET / HTTP/1.1\r\nA: b\0c\r\n\r\n"s, 400, "control character"},
      {"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, "conflicting"},
      {"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "Content-Length"},
      {"POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", 400, "Content-Length"},
      {"POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", 413, "exceeds 100 bytes"},
      {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413, "exceeds"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 411, "Content-Length"},
      {"POST / HTTP/1.1\r\nExpect: something\r\nContent-Length: 1\r\n\r\n", 417, "100-continue"},
      {"GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n\r\n", 431, "header lines"},
      {"GET /" + std::string(300, 'a') + " HTTP/1.1\r\n\r\n", 431, "exceed 256 bytes"},
      {"GET /" + std::string(300, 'a'), 431, "exceed 256 bytes"},  // refused before the headers even end
  };
  for (const BadCase& bad : cases) {
    const ParseResult parsed = parse_request(bad.text, limits);
    EXPECT_EQ(parsed.status, Status::kError) << bad.text;
    EXPECT_EQ(parsed.error_status, bad.status) << bad.text;
    EXPECT_NE(parsed.error_message.find(bad.message_part), std::string::npos)
        << bad.text << " → " << parsed.error_message;
  }
}

TEST(RequestParser, EqualDuplicateContentLengthsAndLeadingBlankLinesAreAccepted) {
  const ParseResult parsed =
      parse_request("\r\nPOST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nhi", {});
  ASSERT_EQ(parsed.status, Status::kComplete);
  EXPECT_EQ(parsed.request.body, "hi");
}

}  // namespace
}  // namespace minigen::http
