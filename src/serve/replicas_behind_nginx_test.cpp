// deploy/nginx/nginx.conf in front of three `minigen serve` processes, under load: a replica that is drained
// (SIGTERM, a rolling restart) loses no answer; a replica that is killed outright breaks only the streams it was
// serving — cleanly, nothing hangs — and the others take every request after it. Skipped without nginx (Debian's
// nginx package; the installer adds it).
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "checkpoint/model_loader.h"
#include "loadtest/load_tester.h"
#include "serve/serve_process_test_util.h"

namespace minigen {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kNginx = "/usr/sbin/nginx";
constexpr int kRequests = 60;  // per phase
constexpr int kClients = 10;

int free_port() {
  const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(probe);
  return ntohs(address.sin_port);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void replace(std::string& text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << "deploy/nginx/nginx.conf no longer holds '" << from << "'";
  text.replace(at, from.size(), to);
}

// nginx with the shipped configuration, its ports replaced by the replicas' and a free one of its own.
struct Nginx {
  Nginx(const std::vector<int>& replica_ports, const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir / "tmp");
    std::string config = read_file(minigen_home() / "deploy" / "nginx" / "nginx.conf");
    for (std::size_t i = 0; i < replica_ports.size(); ++i) {
      replace(config, "127.0.0.1:808" + std::to_string(i + 1) + " ",
              "127.0.0.1:" + std::to_string(replica_ports[i]) + " ");
    }
    port = free_port();
    replace(config, "listen 127.0.0.1:8080;", "listen 127.0.0.1:" + std::to_string(port) + ";");
    std::ofstream(dir / "nginx.conf") << config;
    process = std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{kNginx, "-p", dir.string(), "-c", (dir / "nginx.conf").string()});
    httplib::Client probe("127.0.0.1", port);
    for (int i = 0; i < 500 && !probe.Get("/health"); ++i) std::this_thread::sleep_for(10ms);
  }
  int port = 0;
  std::unique_ptr<testing::ChildProcess> process;
};

struct Outcome {
  Clock::time_point sent;
  load_test::RequestOutcome result;
};

// `requests` streaming completions through `url`, `clients` at a time; returns when all have finished.
// `before_send(i)` runs on the client's thread just before request i is sent (the test's events are placed by
// request, not by clock: a fast machine finishes 60 requests in less time than any fixed delay).
std::vector<Outcome> run_load(const std::string& url, int requests, int clients, uint64_t seed,
                              const std::function<void(std::size_t)>& before_send) {
  load_test::RequestMix mix;
  mix.count = requests;
  mix.max_tokens = 32;
  mix.seed = seed;
  mix.always_ignore_eos = true;
  const std::vector<load_test::LoadRequest> mixed = load_test::make_requests(mix);
  std::vector<Outcome> outcomes(mixed.size());
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      for (std::size_t i = next++; i < mixed.size(); i = next++) {
        before_send(i);
        outcomes[i].sent = Clock::now();
        outcomes[i].result = load_test::run_request(url, mixed[i]);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return outcomes;
}

TEST(ReplicasBehindNginx, DrainingOneLosesNothingAndKillingOneBreaksOnlyItsOwnStreams) {
  if (!std::filesystem::exists(kNginx)) GTEST_SKIP() << "nginx is not installed (Debian package nginx)";
  std::vector<std::unique_ptr<testing::ServeProcess>> replicas;
  std::vector<int> ports;
  for (int i = 0; i < 3; ++i) {
    replicas.push_back(
        std::make_unique<testing::ServeProcess>(std::vector<std::string>{"--threads", "1", "--drain-timeout", "60"}));
    ASSERT_GT(replicas.back()->port(), 0) << replicas.back()->log();
    ports.push_back(replicas.back()->port());
  }
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("minigen-nginx-" + std::to_string(::getpid()));
  Nginx nginx(ports, dir);
  const std::string url = "http://127.0.0.1:" + std::to_string(nginx.port);

  // A rolling restart: replica 0 is drained while requests stream through nginx (a third of them sent).
  const std::vector<Outcome> rolling = run_load(url, kRequests, kClients, 1, [&](std::size_t i) {
    if (i == kRequests / 3) replicas[0]->signal(SIGTERM);
  });
  for (const Outcome& outcome : rolling) {
    EXPECT_EQ(outcome.result.error, "");
    EXPECT_TRUE(outcome.result.done);
  }
  EXPECT_EQ(replicas[0]->wait_for_exit(60s), 0) << replicas[0]->log();

  // A crash: replica 1 is killed while requests stream through nginx to replicas 1 and 2 (a third of them sent);
  // the last third is held until the crash has been visible for 250 ms, so that some requests surely come after it.
  std::mutex kill_mutex;
  std::condition_variable kill_seen;
  std::optional<Clock::time_point> killed_at;
  const std::vector<Outcome> crash = run_load(url, kRequests, kClients, 2, [&](std::size_t i) {
    std::unique_lock lock(kill_mutex);
    if (i == kRequests / 3) {
      replicas[1]->signal(SIGKILL);
      killed_at = Clock::now();
      kill_seen.notify_all();
    } else if (i >= 2 * kRequests / 3) {
      kill_seen.wait(lock, [&] { return killed_at.has_value(); });
      const Clock::time_point visible = *killed_at + 250ms;
      lock.unlock();
      std::this_thread::sleep_until(visible);
    }
  });  // it returns: no request hung
  const Clock::time_point killed = *killed_at;
  int completed = 0, failed = 0, after_kill = 0;
  for (const Outcome& outcome : crash) {
    // Either the whole answer or a clean failure (a broken stream, an error status) — never a silent half.
    EXPECT_NE(outcome.result.done, !outcome.result.error.empty());
    outcome.result.done ? ++completed : ++failed;
    if (outcome.sent > killed + 200ms) {  // sent once the crash was visible: the surviving replica took it
      ++after_kill;
      EXPECT_EQ(outcome.result.error, "");
    }
  }
  std::printf(
      "[replicas] drained one of 3 under load: %zu of %zu answers complete; killed one of 2: %d complete, "
      "%d failed cleanly, %d sent after the kill all answered by the survivor\n",
      std::count_if(rolling.begin(), rolling.end(), [](const Outcome& o) { return o.result.done; }), rolling.size(),
      completed, failed, after_kill);
  EXPECT_LE(failed, kClients);  // at most what was streaming from the killed replica
  EXPECT_GT(after_kill, 0);
  EXPECT_EQ(completed + failed, kRequests);
  const std::map<std::string, double> metrics =
      load_test::fetch_metrics("http://127.0.0.1:" + std::to_string(ports[2]));
  EXPECT_GT(metrics.at("minigen_requests_total"), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace minigen
