#pragma once
// An in-process HTTP server for the tests of src/http: short limits and a few routes that exercise each path —
// answered by the loop (/health, /echo), streamed by a worker (/slow), a worker that waits for its client to go
// (/wait), and a worker that answers at once with the request's body (/work).
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "http/raw_client_test_util.h"
#include "http/server.h"

namespace minigen::http::testing {

using namespace std::chrono_literals;

inline Response text_response(int status, std::string body) {
  Response response;
  response.status = status;
  response.set("Content-Type", "text/plain");
  response.body = std::move(body);
  return response;
}

// The server, on a free loopback port, its event loop on a thread of its own.
struct TestServer {
  explicit TestServer(ServerOptions options = short_limits())
      : server([this](const Request& request) { return route(request); },
               [](int status, const std::string& message) { return text_response(status, message); }, options) {
    port = server.bind("127.0.0.1", 0);
    thread = std::thread([this] { server.serve(); });
  }
  ~TestServer() {
    server.stop();
    thread.join();
  }
  static ServerOptions short_limits() {
    ServerOptions options;
    options.request_timeout = 600ms;
    options.idle_timeout = 400ms;
    options.write_timeout = 2s;
    options.max_connections = 64;
    options.max_workers = 8;
    return options;
  }
  Routed route(const Request& request) {
    if (request.path == "/health") return text_response(200, "ok");
    if (request.path == "/echo") return text_response(200, request.body);
    if (request.path == "/work") {
      return Handler([](const Request& request, ResponseWriter& writer) {
        writer.send(text_response(200, "worked:" + request.body));
      });
    }
    if (request.path == "/slow") {
      return Handler([](const Request&, ResponseWriter& writer) {
        writer.begin_stream(200, {{"Content-Type", "text/plain"}});
        for (int i = 0; i < 10; ++i) {
          std::this_thread::sleep_for(50ms);
          writer.write("tick " + std::to_string(i) + "\n");
        }
        writer.end_stream();
      });
    }
    if (request.path == "/wait") {
      return Handler([this](const Request&, ResponseWriter& writer) {
        while (!writer.cancelled()) std::this_thread::sleep_for(10ms);
        ++cancelled_waits;
        writer.send(text_response(503, "cancelled"));
      });
    }
    return text_response(404, "no such route");
  }
  bool health_answers() const {
    RawClient client(port);
    client.send(get_request("/health"));
    return client.read_until("\r\n\r\nok", 5s).find("200 OK") != std::string::npos;
  }

  Server server;
  int port = 0;
  std::thread thread;
  std::atomic<int> cancelled_waits{0};
};

}  // namespace minigen::http::testing
