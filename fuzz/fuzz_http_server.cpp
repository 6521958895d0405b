// The HTTP server as a state machine (src/http: Beast's parser plus minigen's connection handling, worker hand-off,
// streaming writes from workers and the loop's deadlines), driven over real loopback sockets by a script the input
// spells out: up to three connections, each sent well-formed requests of every kind (answered by the loop, by a
// worker, streamed by a worker, a worker that waits for its client to go, 100-continue, HTTP/1.0, Connection:
// close) and raw bytes, cut into arbitrary writes, pipelined, with reads in between, half-closes and early closes.
//
// Invariants beyond "no crash" (ASan + UBSan):
//   - on a connection the client used well to the end, every request is answered exactly once, in the order sent,
//     and the connection closes after the one that asked for it;
//   - on any connection, what was answered is, in order and without repeats, a prefix of the well-formed requests
//     sent before the first raw bytes, half-close or close — and a refusal is the last thing on it;
//   - once the client has closed every connection, no handler is left running and no connection stays open.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fuzz_check.h"
#include "http/server.h"

using namespace minigen;
using namespace std::chrono_literals;
using minigen::fuzz::check;

namespace {

http::Response text(int status, std::string body) {
  http::Response response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

// /loop/ID (the loop answers ID), /work/ID (a worker answers ID), /stream/ID/N (a worker streams N chunks "ID."),
// /hang/ID (a worker that waits until its client has gone).
http::Routed route(const http::Request& request) {
  const std::string& path = request.path;
  auto after = [&](std::string_view prefix) { return path.substr(prefix.size()); };
  if (path.starts_with("/loop/")) return text(200, after("/loop/"));
  if (path.starts_with("/work/")) {
    return http::Handler(
        [id = after("/work/")](const http::Request&, http::ResponseWriter& writer) { writer.send(text(200, id)); });
  }
  if (path.starts_with("/stream/")) {
    const std::string rest = after("/stream/");
    const std::string id = rest.substr(0, rest.find('/'));
    const int chunks = rest.back() - '0';
    return http::Handler([id, chunks](const http::Request&, http::ResponseWriter& writer) {
      writer.begin_stream(200, {});
      for (int i = 0; i < chunks && !writer.cancelled(); ++i) writer.write(id + ".");
      writer.end_stream();
    });
  }
  if (path.starts_with("/hang/")) {
    return http::Handler([](const http::Request&, http::ResponseWriter& writer) {
      const auto give_up = std::chrono::steady_clock::now() + 10s;
      while (!writer.cancelled()) {
        check(std::chrono::steady_clock::now() < give_up, "a handler sees its client hang up");
        std::this_thread::sleep_for(1ms);
      }
      writer.send(text(200, "too late"));
    });
  }
  return text(404, "none");
}

struct Fixture {
  Fixture()
      : server(
            route, [](int status, const std::string&) { return text(status, "refused"); }, options()) {
    port = server.bind("127.0.0.1", 0);
    loop = std::thread([this] { server.serve(); });
  }
  static http::ServerOptions options() {
    http::ServerOptions options;
    options.request_timeout = 2s;
    options.idle_timeout = 2s;
    options.write_timeout = 2s;
    options.max_connections = 16;
    options.max_workers = 16;
    options.limits.max_header_bytes = 512;
    options.limits.max_headers = 8;
    options.limits.max_body_bytes = 256;
    return options;
  }
  http::Server server;
  int port = 0;
  std::thread loop;
};

Fixture& fixture() {
  static Fixture* fixture = new Fixture();  // lives for the process: one server for every input
  return *fixture;
}

struct Answer {
  int status = 0;
  std::string body;  // de-chunked
  bool keep_alive = true;
};

// Splits whole responses off the front of what a connection received; an incomplete one stays.
std::vector<Answer> parse_answers(std::string_view bytes, std::size_t* incomplete_bytes) {
  std::vector<Answer> answers;
  while (!bytes.empty()) {
    const std::size_t head_end = bytes.find("\r\n\r\n");
    if (head_end == std::string_view::npos) break;
    const std::string_view head = bytes.substr(0, head_end + 2);
    check(head.starts_with("HTTP/1.1 ") && head.size() > 12, "a response starts with a status line");
    Answer answer;
    std::from_chars(head.data() + 9, head.data() + 12, answer.status);
    if (answer.status == 100) {  // the interim answer to Expect: 100-continue
      bytes.remove_prefix(head_end + 4);
      continue;
    }
    answer.keep_alive = head.find("Connection: keep-alive\r\n") != std::string_view::npos;
    std::string_view rest = bytes.substr(head_end + 4);
    const std::size_t length_at = head.find("Content-Length: ");
    if (length_at != std::string_view::npos) {
      std::size_t length = 0;
      std::from_chars(head.data() + length_at + 16, head.data() + head.size(), length);
      if (rest.size() < length) break;
      answer.body = std::string(rest.substr(0, length));
      rest.remove_prefix(length);
    } else {
      check(head.find("Transfer-Encoding: chunked\r\n") != std::string_view::npos, "a body is framed");
      bool complete = false;
      while (true) {
        const std::size_t line_end = rest.find("\r\n");
        if (line_end == std::string_view::npos) break;
        std::size_t size = 0;
        std::from_chars(rest.data(), rest.data() + line_end, size, 16);
        if (rest.size() < line_end + 2 + size + 2) break;
        answer.body += rest.substr(line_end + 2, size);
        rest.remove_prefix(line_end + 2 + size + 2);
        if (size == 0) {
          complete = true;
          break;
        }
      }
      if (!complete) break;
    }
    answers.push_back(std::move(answer));
    bytes = rest;
  }
  *incomplete_bytes = bytes.size();
  return answers;
}

// One client connection and what the script did with it.
struct Client {
  int socket = -1;
  std::string pending;              // bytes written into the script, not sent yet
  std::string received;             // everything the server sent
  std::vector<std::string> expect;  // ids of the well-formed requests, in order, before the first taint
  bool tainted = false;             // raw bytes, a half-close, a close or a hanging handler: no completeness check
  bool final_sent = false;          // a request that ends the connection (HTTP/1.0, Connection: close) was written
  bool closed = false;              // by the client
  bool peer_closed = false;

  explicit Client(int port) {
    socket = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    // Each connection from its own loopback address (127.1.0.0 upwards): a million closed connections leave their
    // TIME_WAIT entries spread over many addresses instead of using up one address's ephemeral ports.
    static uint32_t connections = 0;
    sockaddr_in source{};
    source.sin_family = AF_INET;
    source.sin_addr.s_addr = htonl(0x7F010000u + connections++ % 0xFE0000u);
    check(::bind(socket, reinterpret_cast<sockaddr*>(&source), sizeof source) == 0, "a loopback source address");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int connected = -1;
    do {
      connected = ::connect(socket, reinterpret_cast<sockaddr*>(&address), sizeof address);
    } while (connected != 0 && errno == EINTR);
    if (connected != 0) std::fprintf(stderr, "connect: %s\n", std::strerror(errno));
    check(connected == 0, "the server accepts");
  }
  ~Client() { close(); }
  void close() {
    if (socket >= 0) ::close(socket);
    socket = -1;
    closed = true;
  }
  void send(std::size_t bytes) {
    bytes = std::min(bytes, pending.size());
    if (closed || bytes == 0) return;
    std::string_view data(pending.data(), bytes);
    while (!data.empty()) {
      const ssize_t sent = ::send(socket, data.data(), data.size(), MSG_NOSIGNAL);
      if (sent < 0 && errno == EINTR) continue;
      if (sent <= 0) break;  // the server closed (after a refusal): what is left is never sent
      data.remove_prefix(static_cast<std::size_t>(sent));
    }
    pending.erase(0, bytes);
  }
  // Reads what arrives within `wait`; stops early once the server has closed.
  void read(std::chrono::milliseconds wait) {
    if (socket < 0) return;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (!peer_closed) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd ready{socket, POLLIN, 0};
      const int polled = ::poll(&ready, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
      if (polled < 0 && errno == EINTR) continue;  // libFuzzer's timeout alarm rings every second
      if (polled <= 0) return;
      char buffer[4096];
      const ssize_t got = ::recv(socket, buffer, sizeof buffer, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        peer_closed = true;
        return;
      }
      received.append(buffer, static_cast<std::size_t>(got));
    }
  }
};

struct Script {
  const uint8_t* data;
  size_t size;
  uint8_t next() {
    if (size == 0) return 0;
    --size;
    return *data++;
  }
};

// A well-formed request of the kind the script picks, with its id.
std::string request_text(uint8_t kind, uint8_t detail, const std::string& id, bool* ends_connection, bool* hangs) {
  const std::string host = "Host: localhost\r\n";
  switch (kind % 7) {
    case 0:
      return "GET /loop/" + id + " HTTP/1.1\r\n" + host + "\r\n";
    case 1: {
      const std::string body(detail % 64, 'b');
      return "POST /work/" + id + " HTTP/1.1\r\n" + host + "Content-Length: " + std::to_string(body.size()) +
             "\r\n\r\n" + body;
    }
    case 2:
      return "GET /stream/" + id + "/" + std::to_string(detail % 5 + 1) + " HTTP/1.1\r\n" + host + "\r\n";
    case 3:
      return "POST /loop/" + id + " HTTP/1.1\r\n" + host + "Expect: 100-continue\r\nContent-Length: 3\r\n\r\nabc";
    case 4:
      *ends_connection = true;
      return "GET /work/" + id + " HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n";
    case 5:
      *ends_connection = true;
      return "GET /loop/" + id + " HTTP/1.0\r\n\r\n";
    default:
      *hangs = true;
      return "GET /hang/" + id + " HTTP/1.1\r\n" + host + "\r\n";
  }
}

// The id an answer carries: "7" from /loop/7, /work/7 or the stream "7.7.7.".
std::string answer_id(const Answer& answer) { return answer.body.substr(0, answer.body.find('.')); }

void check_answers(const Client& client) {
  std::size_t incomplete = 0;
  const std::vector<Answer> answers = parse_answers(client.received, &incomplete);
  std::size_t matched = 0;
  for (std::size_t i = 0; i < answers.size(); ++i) {
    const Answer& answer = answers[i];
    if (answer.body == "refused") {  // the server's own error answer (malformed, too large, ...)
      check(i + 1 == answers.size(), "a refusal is the last answer on its connection");
      check(!answer.keep_alive, "a refusal closes the connection");
      continue;
    }
    if (answer.body == "end") continue;
    // After raw bytes anything may follow (they can spell a request of their own); before them, nothing unasked.
    if (matched == client.expect.size() && client.tainted) break;
    check(answer.status == 200, "a well-formed request is answered 200");
    check(matched < client.expect.size(), "no answer without a request");
    check(answer_id(answer) == client.expect[matched], "answers come once each, in the order of the requests");
    ++matched;
  }
  if (!client.tainted) {
    if (incomplete != 0 || matched != client.expect.size() || !client.peer_closed) {  // say what arrived
      std::fprintf(stderr, "expected %zu answers, matched %zu, %zu bytes incomplete, peer closed %d; received:\n%s\n",
                   client.expect.size(), matched, incomplete, client.peer_closed, client.received.c_str());
    }
    check(incomplete == 0, "a well-used connection ends on a whole answer");
    check(matched == client.expect.size(), "every request on a well-used connection is answered");
    check(client.peer_closed, "the server closes after the request that asked it to");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fixture& server = fixture();
  static int64_t accepted_before = 0;
  Script script{data, size};
  std::vector<std::unique_ptr<Client>> clients;
  clients.push_back(std::make_unique<Client>(server.port));
  std::size_t current = 0;
  int next_id = 0;
  for (int step = 0; step < 48 && script.size > 0; ++step) {
    Client& client = *clients[current];
    const uint8_t op = script.next();
    // After a request that ends the connection the client sends nothing more: bytes the server will never read
    // make its close a reset, which may destroy the last answer before the client reads it.
    const bool silent = client.final_sent;
    switch (op % 9) {
      case 0:
      case 1: {  // a well-formed request (twice as likely as any other step)
        const uint8_t kind = script.next();
        const uint8_t detail = script.next();
        bool ends = false;
        bool hangs = false;
        const std::string id = std::to_string(next_id++);
        const std::string text = request_text(kind, detail, id, &ends, &hangs);
        if (silent) break;
        client.pending += text;
        if (!client.tainted && !client.final_sent) client.expect.push_back(id);
        if (hangs) client.tainted = true;  // only a close ends it
        client.final_sent = client.final_sent || ends;
        break;
      }
      case 2: {  // raw bytes: anything, garbage or half a request
        const std::size_t length = script.next() % 48;
        for (std::size_t i = 0; i < length && script.size > 0; ++i) {
          const char byte = static_cast<char>(script.next());
          if (!silent) client.pending.push_back(byte);
        }
        client.tainted = client.tainted || !silent;
        break;
      }
      case 3:
        client.send(script.next() % 64 + 1);  // a cut anywhere, even inside a request line
        break;
      case 4:
        client.send(client.pending.size());
        break;
      case 5:
        client.read(std::chrono::milliseconds(script.next() % 2));  // what has arrived, or within 1 ms
        break;
      case 6:  // half-close: nothing more from the client
        client.send(client.pending.size());
        if (client.socket >= 0) ::shutdown(client.socket, SHUT_WR);
        client.tainted = true;
        break;
      case 7:  // hang up, possibly mid-request or mid-answer
        client.close();
        client.tainted = true;
        break;
      default:
        if (clients.size() < 3 && (script.next() & 1)) clients.push_back(std::make_unique<Client>(server.port));
        current = (current + 1) % clients.size();
        break;
    }
  }
  for (auto& client : clients) {
    if (client->closed) continue;
    if (client->tainted) {
      client->send(client->pending.size());
      client->read(1ms);
      continue;
    }
    if (!client->final_sent) client->pending += "GET /loop/end HTTP/1.1\r\nConnection: close\r\n\r\n";
    client->send(client->pending.size());
    client->read(10s);
  }
  for (auto& client : clients) {
    check_answers(*client);
    client->close();
  }
  // Every connection gone from the client side: the server must let go of all of them, and of their handlers —
  // once it has accepted them all (a connection still in the kernel's queue would otherwise outlive the check).
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  accepted_before += static_cast<int64_t>(clients.size());
  while (server.server.stats().connections_accepted < accepted_before || server.server.stats().connections_open > 0 ||
         server.server.active_workers() > 0) {
    check(std::chrono::steady_clock::now() < deadline, "no connection or handler outlives its client");
    std::this_thread::sleep_for(100us);
  }
  return 0;
}
