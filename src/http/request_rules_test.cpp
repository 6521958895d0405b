// What the server refuses, over a real socket: each malformed, oversized or unsupported request gets its status and a
// message that says why, and the connection closes (what followed it on the connection is never read as a request).
#include "http/request_rules.h"

#include <gtest/gtest.h>

#include "http/test_server_util.h"

namespace minigen::http {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;
using testing::get_request;
using testing::RawClient;
using testing::TestServer;

struct BadCase {
  std::string text;
  int status;
  std::string message_part;
};

ServerOptions small_limits() {
  ServerOptions options = TestServer::short_limits();
  options.limits.max_header_bytes = 256;
  options.limits.max_headers = 4;
  options.limits.max_body_bytes = 100;
  return options;
}

TEST(RequestRules, MalformedOversizedAndUnsupportedRequestsGetTheirStatusAndTheConnectionCloses) {
  TestServer server(small_limits());
  const BadCase cases[] = {
      {"GET /\r\n\r\n", 400, "malformed request"},
      {"GET  / HTTP/1.1\r\n\r\n", 400, "target"},
      {"G(T / HTTP/1.1\r\n\r\n", 400, "method"},
      {"GET http://x/ HTTP/1.1\r\n\r\n", 400, "origin-form"},
      {"GET * HTTP/1.1\r\n\r\n", 400, "origin-form"},
      {"GET /a\x01 HTTP/1.1\r\n\r\n", 400, "target"},
      {"GET / HTTP/2.0\r\n\r\n", 505, "HTTP/1.0 and HTTP/1.1"},
      {"GET / HTTP/1.9\r\n\r\n", 505, "HTTP/1.0 and HTTP/1.1"},
      {"GET / FTP/1.1\r\n\r\n", 400, "HTTP/1.0 or HTTP/1.1"},
      {"GET / HTTP/1.1\r\nNo colon\r\n\r\n", 400, "header line"},
      {"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 400, "header line"},
      {"GET / HTTP/1.1\r\nA: b\0c\r\n\r\n"s, 400, "header line"},
      {"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, "Content-Length"},
      {"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, "Content-Length"},
      {"POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", 400, "Content-Length"},
      {"POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", 413, "exceeds 100 bytes"},
      {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400, "Content-Length"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411, "Content-Length"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\nContent-Length: 1\r\n\r\nx", 411, "Content-Length"},
      {"POST / HTTP/1.1\r\nExpect: something\r\nContent-Length: 1\r\n\r\n", 417, "100-continue"},
      {"GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n\r\n", 431, "header lines"},
      {"GET /" + std::string(300, 'a') + " HTTP/1.1\r\n\r\n", 431, "exceed 256 bytes"},
      {"GET /" + std::string(300, 'a'), 431, "exceed 256 bytes"},  // refused before the headers even end
      // RFC 9112 §3.2: a request with more than one Host field is a 400 (two proxies may read it two ways).
      {"GET /health HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n", 400, "more than one Host"},
  };
  for (const BadCase& bad : cases) {
    RawClient client(server.port);
    client.send(bad.text + get_request("/health"));  // never answered: the connection closes after the refusal
    const std::string answer = client.read_all(3s);
    const std::string status_line = "HTTP/1.1 " + std::to_string(bad.status) + " ";
    EXPECT_EQ(answer.rfind(status_line, 0), 0u) << bad.text << " → " << answer;
    EXPECT_NE(answer.find(bad.message_part), std::string::npos) << bad.text << " → " << answer;
    EXPECT_NE(answer.find("Connection: close"), std::string::npos) << bad.text;
    EXPECT_EQ(answer.find("\r\n\r\nok"), std::string::npos) << bad.text << " → " << answer;
    EXPECT_TRUE(client.closed_by_peer()) << bad.text;
  }
  EXPECT_TRUE(server.health_answers());
}

TEST(RequestRules, EqualDuplicateContentLengthsAndHttp10AreAccepted) {
  TestServer server(small_limits());
  RawClient client(server.port);
  client.send("POST /echo HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nhi");
  EXPECT_NE(client.read_until("\r\n\r\nhi", 3s).find("200 OK"), std::string::npos);
  RawClient old(server.port);
  old.send("GET /health HTTP/1.0\r\n\r\n");  // HTTP/1.0: no Host needed, and the connection closes after the answer
  const std::string answer = old.read_all(3s);
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  EXPECT_TRUE(old.closed_by_peer());
}

TEST(RequestRules, TheRouteSeesLowerCaseNamesTrimmedValuesAndTheQuery) {
  Request seen;
  Server server(
      [&seen](const Request& request) -> Routed {
        seen = request;
        return testing::text_response(200, "seen");
      },
      [](int status, const std::string& message) { return testing::text_response(status, message); }, {});
  const int port = server.bind("127.0.0.1", 0);
  std::thread loop([&server] { server.serve(); });
  RawClient client(port);
  client.send(
      "POST /v1/completions?x=1 HTTP/1.1\r\nContent-Type: application/json\r\nX-Spaces:   padded value  \r\n"
      "Content-Length: 7\r\nConnection: close\r\n\r\n{\"a\":1}");
  client.read_all(3s);
  server.stop();
  loop.join();
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.target, "/v1/completions?x=1");
  EXPECT_EQ(seen.path, "/v1/completions");
  EXPECT_EQ(seen.query, "x=1");
  EXPECT_EQ(seen.body, "{\"a\":1}");
  ASSERT_NE(seen.header("content-type"), nullptr);
  EXPECT_EQ(*seen.header("content-type"), "application/json");
  ASSERT_NE(seen.header("x-spaces"), nullptr);
  EXPECT_EQ(*seen.header("x-spaces"), "padded value");
  EXPECT_EQ(seen.header("accept"), nullptr);
  EXPECT_FALSE(seen.keep_alive());
  EXPECT_EQ(seen.remote_address.rfind("127.0.0.1:", 0), 0u) << seen.remote_address;
}

TEST(RequestRules, KeepAliveFollowsTheVersionAndTheConnectionHeader) {
  auto request = [](int minor, std::string connection) {
    Request r;
    r.version_minor = minor;
    if (!connection.empty()) r.headers.emplace_back("connection", std::move(connection));
    return r;
  };
  EXPECT_TRUE(request(1, "").keep_alive());
  EXPECT_FALSE(request(1, "Close").keep_alive());
  EXPECT_FALSE(request(0, "").keep_alive());
  EXPECT_TRUE(request(0, "keep-alive").keep_alive());
  EXPECT_FALSE(request(1, "upgrade, close").keep_alive());
  EXPECT_TRUE(request(0, " Upgrade ,  Keep-Alive ").keep_alive());
}

}  // namespace
}  // namespace minigen::http
