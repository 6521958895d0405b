// The HTTP server against clients that misbehave: slow, silent, too many, pipelining, vanishing mid-answer.
#include "http/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "http/raw_client_test_util.h"
#include "http/test_server_util.h"

namespace minigen::http {
namespace {

using namespace std::chrono_literals;
using testing::get_request;
using testing::RawClient;
using testing::TestServer;

TEST(HttpServer, AnswersPipelinedRequestsInOrderOnOneConnection) {
  TestServer server;
  RawClient client(server.port);
  client.send("POST /echo HTTP/1.1\r\nContent-Length: 5\r\n\r\nfirst" + get_request("/health") +
              "POST /echo HTTP/1.1\r\nContent-Length: 6\r\nConnection: close\r\n\r\nsecond");
  const std::string answer = client.read_all(5s);
  const std::size_t first = answer.find("\r\n\r\nfirst");
  const std::size_t health = answer.find("\r\n\r\nok");
  const std::size_t second = answer.find("\r\n\r\nsecond");
  ASSERT_NE(first, std::string::npos) << answer;
  ASSERT_NE(health, std::string::npos) << answer;
  ASSERT_NE(second, std::string::npos) << answer;
  EXPECT_LT(first, health);
  EXPECT_LT(health, second);
  EXPECT_TRUE(client.closed_by_peer());  // the last one asked for Connection: close
}

// Issue 25's crash: two requests for workers written in one send() on one keep-alive connection. Handing the second
// to a worker once the first had returned left an empty slot that the event loop then dereferenced (SIGSEGV).
TEST(HttpServer, TwoPipelinedRequestsForWorkersAreBothAnsweredInOrder) {
  TestServer server;
  RawClient client(server.port);
  const std::string post_a = "POST /work HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\n\r\na";
  const std::string post_b = "POST /work HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\n\r\nb";
  client.send(post_a + post_b);
  const std::string answers = client.read_until("worked:b", 5s);
  const std::size_t a = answers.find("\r\n\r\nworked:a");
  const std::size_t b = answers.find("\r\n\r\nworked:b");
  ASSERT_NE(a, std::string::npos) << answers;
  ASSERT_NE(b, std::string::npos) << answers;
  EXPECT_LT(a, b);
  // The connection carries on, and so does the server.
  client.send(get_request("/health"));
  EXPECT_NE(client.read_until("\r\n\r\nok", 5s).find("\r\n\r\nok"), std::string::npos);
  EXPECT_TRUE(server.health_answers());
  EXPECT_EQ(server.server.stats().requests, 4);
}

// Thirty requests in one write, answers from the loop, from workers and from a streaming worker mixed: every one
// answered once, in the order sent.
TEST(HttpServer, PipelinedRequestsOfEveryKindAreAnsweredOnceEachInOrder) {
  TestServer server;
  RawClient client(server.port);
  std::string requests;
  for (int i = 0; i < 30; ++i) {
    const std::string body = std::string("#").append(std::to_string(i)).append(";");
    if (i % 8 == 2) {
      requests += "GET /slow HTTP/1.1\r\nHost: localhost\r\n";
    } else {
      requests += i % 3 == 0 ? "POST /echo" : "POST /work";
      requests += " HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    }
    if (i == 29) requests += "Connection: close\r\n";
    requests += "\r\n";
    if (i % 8 != 2) requests += body;
  }
  client.send(requests);
  const std::string answers = client.read_all(20s);
  EXPECT_TRUE(client.closed_by_peer());
  std::size_t at = 0;
  for (int i = 0; i < 30; ++i) {
    const std::string expected =
        i % 8 == 2 ? std::string("tick 9\n") : std::string("#").append(std::to_string(i)).append(";");
    const std::size_t found = answers.find(expected, at);
    ASSERT_NE(found, std::string::npos) << "answer " << i << " missing or out of order:\n" << answers;
    at = found + expected.size();
  }
  std::size_t count = 0;
  for (std::size_t p = answers.find("HTTP/1.1 200 OK"); p != std::string::npos;
       p = answers.find("HTTP/1.1 200 OK", p + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 30u);
}

// A client may send its next requests while a worker is still streaming the answer to the first: they wait, and
// are answered after it, in order.
TEST(HttpServer, RequestsSentDuringAStreamAreAnsweredAfterIt) {
  TestServer server;
  RawClient client(server.port);
  client.send(get_request("/slow"));
  client.read_until("tick 1", 5s);
  client.send("POST /work HTTP/1.1\r\nContent-Length: 2\r\n\r\nw1" + get_request("/health"));
  const std::string answers = client.read_until("\r\n\r\nok", 5s);
  const std::size_t stream_end = answers.find("tick 9\n\r\n0\r\n\r\n");
  const std::size_t worked = answers.find("worked:w1");
  const std::size_t health = answers.find("\r\n\r\nok");
  ASSERT_NE(stream_end, std::string::npos) << answers;
  ASSERT_NE(worked, std::string::npos) << answers;
  ASSERT_NE(health, std::string::npos) << answers;
  EXPECT_LT(stream_end, worked);
  EXPECT_LT(worked, health);
}

TEST(HttpServer, ARequestThatDoesNotArriveInTimeGets408AndTheConnectionCloses) {
  TestServer server;
  RawClient slow(server.port);
  slow.send("GET /health HTTP/1.1\r\nHost: loc");  // and then nothing
  const std::string answer = slow.read_all(5s);
  EXPECT_NE(answer.find("408 Request Timeout"), std::string::npos) << answer;
  EXPECT_TRUE(slow.closed_by_peer());
  EXPECT_GE(server.server.stats().connections_timed_out, 1);
}

// Slowloris: clients that send a byte now and then never finish a request; the deadline is for the whole request,
// so they are cut off, and while they dribble /health keeps answering (the loop never waits on one client).
TEST(HttpServer, ClientsDribblingOneByteAtATimeNeitherStayNorBlockHealth) {
  TestServer server;
  std::vector<std::unique_ptr<RawClient>> dribblers;
  for (int i = 0; i < 40; ++i) dribblers.push_back(std::make_unique<RawClient>(server.port));
  const std::string request = get_request("/health");
  bool all_cut_off = false;
  for (std::size_t byte = 0; byte < request.size() - 1 && !all_cut_off; ++byte) {
    all_cut_off = true;
    for (auto& client : dribblers) all_cut_off = !client->send(request.substr(byte, 1)) && all_cut_off;
    EXPECT_TRUE(server.health_answers()) << "byte " << byte;
    std::this_thread::sleep_for(50ms);
  }
  for (auto& client : dribblers) {
    client->read_all(3s);
    EXPECT_TRUE(client->closed_by_peer());
  }
  EXPECT_GE(server.server.stats().connections_timed_out, 40);
}

TEST(HttpServer, AtTheConnectionLimitTheClientWaitingLongestMakesRoom) {
  ServerOptions options = TestServer::short_limits();
  options.max_connections = 4;
  options.request_timeout = 30s;  // only the limit may close them here
  TestServer server(options);
  std::vector<std::unique_ptr<RawClient>> silent;
  for (int i = 0; i < 4; ++i) {
    silent.push_back(std::make_unique<RawClient>(server.port));
    std::this_thread::sleep_for(20ms);  // a clear order of arrival
  }
  EXPECT_TRUE(server.health_answers());  // the fifth connection is served...
  silent[0]->read_all(2s);
  EXPECT_TRUE(silent[0]->closed_by_peer());  // ...because the oldest silent one was closed
  EXPECT_GE(server.server.stats().connections_evicted, 1);
}

TEST(HttpServer, IdleKeepAliveConnectionsClose) {
  TestServer server;
  RawClient client(server.port);
  client.send(get_request("/health"));
  const std::string answer = client.read_all(3s);  // the answer, then the close after the idle timeout
  EXPECT_NE(answer.find("Connection: keep-alive"), std::string::npos);
  EXPECT_TRUE(client.closed_by_peer());
}

TEST(HttpServer, ExpectContinueGetsAnInterimAnswerBeforeTheBody) {
  TestServer server;
  RawClient client(server.port);
  client.send("POST /echo HTTP/1.1\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_NE(client.read_until("100 Continue\r\n\r\n", 3s).find("HTTP/1.1 100 Continue"), std::string::npos);
  client.send("body");
  EXPECT_NE(client.read_until("\r\n\r\nbody", 3s).find("200 OK"), std::string::npos);
}

TEST(HttpServer, MalformedRequestsAreAnsweredAndClosed) {
  TestServer server;
  RawClient client(server.port);
  client.send("BREW /pot HTCPCP/1.0\r\n\r\n");
  const std::string answer = client.read_all(3s);
  EXPECT_NE(answer.find("HTTP/1.1 400 Bad Request"), std::string::npos) << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos);
  EXPECT_TRUE(client.closed_by_peer());
}

TEST(HttpServer, StreamsAChunkedBodyFromAWorker) {
  TestServer server;
  RawClient client(server.port);
  client.send(get_request("/slow"));
  const std::string answer = client.read_until("0\r\n\r\n", 5s);
  EXPECT_NE(answer.find("Transfer-Encoding: chunked"), std::string::npos);
  EXPECT_NE(answer.find("7\r\ntick 0\n\r\n"), std::string::npos) << answer;
  EXPECT_NE(answer.find("7\r\ntick 9\n\r\n0\r\n\r\n"), std::string::npos) << answer;
}

TEST(HttpServer, AWorkerSeesItsClientHangUp) {
  TestServer server;
  {
    RawClient client(server.port);
    client.send(get_request("/wait"));
    std::this_thread::sleep_for(100ms);
  }  // hung up without reading an answer
  for (int i = 0; i < 300 && server.cancelled_waits.load() == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server.cancelled_waits.load(), 1);
  for (int i = 0; i < 300 && server.server.active_workers() > 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server.server.active_workers(), 0);
}

// A client that pipelines more than a request's worth behind a long job, then hangs up: nothing more is read until
// the job is done, but the hang-up is still seen and the job cancelled (found by fuzz_http_server).
TEST(HttpServer, AWorkerSeesItsClientHangUpEvenWhenThePipelinedBytesFillTheBuffer) {
  ServerOptions options = TestServer::short_limits();
  options.limits.max_header_bytes = 256;
  options.limits.max_body_bytes = 100;
  TestServer server(options);
  {
    RawClient client(server.port);
    client.send(get_request("/wait") + std::string(2000, 'x'));
    std::this_thread::sleep_for(100ms);
  }
  for (int i = 0; i < 300 && server.cancelled_waits.load() == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server.cancelled_waits.load(), 1);
  for (int i = 0; i < 300 && server.server.stats().connections_open > 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server.server.stats().connections_open, 0);
}

TEST(HttpServer, BeyondMaxWorkersTheAnswerIs503) {
  ServerOptions options = TestServer::short_limits();
  options.max_workers = 2;
  TestServer server(options);
  RawClient first(server.port), second(server.port), third(server.port);
  first.send(get_request("/wait"));
  second.send(get_request("/wait"));
  for (int i = 0; i < 300 && server.server.active_workers() < 2; ++i) std::this_thread::sleep_for(10ms);
  third.send(get_request("/wait"));
  EXPECT_NE(third.read_until("every worker is busy", 3s).find("503 Service Unavailable"), std::string::npos);
  EXPECT_TRUE(server.health_answers());  // the loop still answers what it can answer itself
}

// Draining: the listening socket closes, idle connections close, a request in progress finishes and is answered
// in full, and serve() returns.
TEST(HttpServer, DrainLetsTheRequestInProgressFinishThenServeReturns) {
  ServerOptions options = TestServer::short_limits();
  options.idle_timeout = 30s;
  auto server = std::make_unique<TestServer>(options);
  RawClient idle(server->port);
  idle.send(get_request("/health"));
  idle.read_until("\r\n\r\nok", 3s);
  RawClient busy(server->port);
  busy.send(get_request("/slow"));
  busy.read_until("tick 0", 3s);
  server->server.begin_drain();
  EXPECT_NE(busy.read_until("0\r\n\r\n", 5s).find("tick 9\n\r\n0\r\n\r\n"), std::string::npos);
  busy.read_all(3s);
  EXPECT_TRUE(busy.closed_by_peer());  // no keep-alive once draining
  idle.read_all(3s);
  EXPECT_TRUE(idle.closed_by_peer());
  server->thread.join();  // serve() returned by itself
  server->thread = std::thread([] {});
  EXPECT_THROW(RawClient late(server->port), std::runtime_error);  // nobody listens any more
}

}  // namespace
}  // namespace minigen::http
