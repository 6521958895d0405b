// SIGTERM and SIGINT on a real `minigen serve` process: a drain lets the answer in progress finish, refuses new
// connections, drops clients that have not sent a request, and exits 0; past --drain-timeout the rest is failed
// cleanly; a second signal exits at once.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "http/raw_client_test_util.h"
#include "serve/serve_process_test_util.h"

namespace minigen {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::ServeProcess;

// Streams a completion on a thread of its own; `received` is the whole SSE body once the thread is joined.
struct StreamingRequest {
  StreamingRequest(int port, int max_tokens) {
    thread = std::thread([this, port, max_tokens] {
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(120, 0);
      httplib::Request request;
      request.method = "POST";
      request.path = "/v1/completions";
      request.body = json{
          {"prompt", "In the beginning"},
          {"max_tokens", max_tokens},
          {"ignore_eos", true},
          {"stream", true},
          {"seed", 1}}.dump();
      request.set_header("Content-Type", "application/json");
      request.content_receiver = [this](const char* data, std::size_t size, uint64_t, uint64_t) {
        received.append(data, size);
        started = true;
        return true;
      };
      client.send(request);
    });
    for (int i = 0; i < 1000 && !started; ++i) std::this_thread::sleep_for(5ms);
  }
  ~StreamingRequest() {
    if (thread.joinable()) thread.join();
  }
  std::string finish() {
    thread.join();
    return received;
  }
  std::thread thread;
  std::atomic<bool> started{false};
  std::string received;
};

TEST(ServeSignals, SigtermDrainsTheAnswerInProgressAndExitsZero) {
  ServeProcess server({"--drain-timeout", "600"});  // the answer finishes however slow the build (sanitizers)
  ASSERT_GT(server.port(), 0) << server.log();
  http::testing::RawClient stalled(server.port());
  stalled.send("POST /v1/completions HTTP/1.1\r\nHost: loc");  // a slow client with no request yet
  StreamingRequest stream(server.port(), 1000);
  ASSERT_TRUE(stream.started);
  server.signal(SIGTERM);
  stalled.read_all(5s);
  EXPECT_TRUE(stalled.closed_by_peer());  // dropped at once, it cannot hold the process up
  std::this_thread::sleep_for(100ms);
  EXPECT_THROW(http::testing::RawClient late(server.port()), std::runtime_error);  // no longer accepting
  const std::string received = stream.finish();
  EXPECT_NE(received.find("\"finish_reason\":\"length\""), std::string::npos);  // all 1,000 tokens
  EXPECT_EQ(received.substr(received.size() - 14), "data: [DONE]\n\n");
  EXPECT_EQ(server.wait_for_exit(60s), 0) << server.log();
  EXPECT_NE(server.log().find("draining"), std::string::npos);
}

TEST(ServeSignals, PastTheDrainDeadlineTheRestFailsWithAClearErrorAndTheProcessExits) {
  ServeProcess server({"--drain-timeout", "0.3"});
  ASSERT_GT(server.port(), 0) << server.log();
  StreamingRequest stream(server.port(), 30000);  // far longer than the deadline
  ASSERT_TRUE(stream.started);
  server.signal(SIGINT);
  const std::string received = stream.finish();
  EXPECT_NE(received.find("the server is shutting down"), std::string::npos);
  EXPECT_EQ(received.substr(received.size() - 14), "data: [DONE]\n\n");
  EXPECT_EQ(server.wait_for_exit(30s), 0) << server.log();
  EXPECT_NE(server.log().find("drain deadline reached"), std::string::npos);
}

TEST(ServeSignals, ASecondSignalExitsAtOnce) {
  ServeProcess server({"--drain-timeout", "600"});
  ASSERT_GT(server.port(), 0) << server.log();
  StreamingRequest stream(server.port(), 30000);
  ASSERT_TRUE(stream.started);
  server.signal(SIGTERM);
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(server.wait_for_exit(0ms), -1);  // still draining
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait_for_exit(30s), 128 + SIGTERM) << server.log();
  EXPECT_NE(server.log().find("second signal"), std::string::npos);
}

}  // namespace
}  // namespace minigen
