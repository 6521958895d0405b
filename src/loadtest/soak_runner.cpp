#include "loadtest/soak_runner.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "loadtest/load_tester.h"

namespace minigen::load_test {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// A bad request and the one status it must get.
struct BadRequest {
  const char* what;
  const char* path;
  const char* content_type;
  std::string body;
  int expected_status;
};

std::vector<BadRequest> bad_requests() {
  std::vector<int> beyond_context(32769 + 8, 100);  // more ids than any shipped model's context
  return {
      {"malformed JSON", "/v1/completions", "application/json", "{\"prompt\": \"unfinished", 400},
      {"a temperature that overflows", "/v1/completions", "application/json",
       json{{"prompt", "x"}, {"temperature", 1e-39}}.dump(), 400},
      {"a prompt beyond the context", "/v1/completions", "application/json",
       json{{"prompt", beyond_context}, {"max_tokens", 1}}.dump(), 400},
      {"bytes that are not UTF-8", "/v1/chat/completions", "application/json",
       "{\"messages\": [{\"role\": \"user\", \"content\": \"\xC3\x28\"}]}", 400},
      {"the wrong Content-Type", "/v1/completions", "text/plain", json{{"prompt", "x"}}.dump(), 415},
      {"an unknown route", "/v1/engines", "application/json", "{}", 404},
      {"n out of range", "/v1/chat/completions", "application/json",
       json{{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"n", 0}}.dump(), 400},
  };
}

httplib::Client client_for(const std::string& url, int read_timeout_ms) {
  httplib::Client client(url);
  if (!client.is_valid()) throw Error("not a usable server address: " + url);
  client.set_connection_timeout(10, 0);
  client.set_read_timeout(read_timeout_ms / 1000, (read_timeout_ms % 1000) * 1000);
  client.set_keep_alive(false);
  return client;
}

}  // namespace

double least_squares_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = std::min(x.size(), y.size());
  if (n < 2) return 0;
  double mean_x = 0, mean_y = 0;
  for (std::size_t i = 0; i < n; ++i) mean_x += x[i], mean_y += y[i];
  mean_x /= static_cast<double>(n);
  mean_y /= static_cast<double>(n);
  double covariance = 0, variance = 0;
  for (std::size_t i = 0; i < n; ++i) {
    covariance += (x[i] - mean_x) * (y[i] - mean_y);
    variance += (x[i] - mean_x) * (x[i] - mean_x);
  }
  return variance > 0 ? covariance / variance : 0;
}

SoakReport run_soak(const std::string& url, const SoakOptions& options) {
  if (!(options.minutes > 0) || !(options.sample_seconds > 0) || options.concurrency < 1) {
    throw Error("a soak needs minutes > 0, a sample interval > 0 and at least one client");
  }
  SoakReport report;
  report.options = options;
  RequestMix mix;
  mix.count = 1000;  // cycled through; every request of the mix is self-checking (tokens, finish, [DONE])
  mix.max_tokens = options.max_tokens;
  mix.cancel_fraction = options.cancel_fraction;
  mix.seed = options.seed;
  mix.label = "soak";
  const std::vector<LoadRequest> generations = make_requests(mix);
  const std::vector<BadRequest> bad = bad_requests();

  std::atomic<int64_t> sent{0}, unexpected{0}, generated{0}, cancelled{0}, abandoned{0}, refused{0};
  std::mutex errors_mutex;
  auto note_error = [&](const std::string& error) {
    ++unexpected;
    std::lock_guard lock(errors_mutex);
    if (report.first_errors.size() < 10) report.first_errors.push_back(error);
  };

  auto sample = [&](Clock::time_point start) {
    SoakSample point;
    point.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    point.requests = sent.load();
    point.unexpected = unexpected.load();
    const std::map<std::string, double> metrics = fetch_metrics(url);
    auto value = [&](const char* name) {
      const auto found = metrics.find(name);
      return found == metrics.end() ? 0.0 : found->second;
    };
    point.rss_mb = value("process_resident_memory_bytes") / 1e6;
    point.kv_blocks_used = static_cast<int64_t>(value("minigen_kv_blocks_used"));
    point.connections_open = static_cast<int64_t>(value("minigen_http_connections_open"));
    report.samples.push_back(point);
    if (options.progress != nullptr) {
      *options.progress << "[soak] " << static_cast<int>(point.seconds) << " s: " << point.requests << " requests, "
                        << point.unexpected << " unexpected, server RSS " << point.rss_mb << " MB, KV blocks in use "
                        << point.kv_blocks_used << ", connections " << point.connections_open << std::endl;
    }
  };

  const Clock::time_point start = Clock::now();
  const Clock::time_point end = start + std::chrono::milliseconds(static_cast<int64_t>(options.minutes * 60000));
  sample(start);
  std::vector<std::thread> clients;
  for (int c = 0; c < options.concurrency; ++c) {
    clients.emplace_back([&, c] {
      uint64_t state = options.seed * 1000003u + static_cast<uint64_t>(c);
      auto uniform = [&] {  // splitmix64 → [0, 1)
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
      };
      for (int64_t i = c; Clock::now() < end; i += options.concurrency) {
        ++sent;
        const double kind = uniform();
        if (kind < options.bad_fraction) {
          const BadRequest& request = bad[static_cast<std::size_t>(uniform() * static_cast<double>(bad.size()))];
          auto result = client_for(url, 30000).Post(request.path, request.body, request.content_type);
          ++refused;
          if (!result || result->status != request.expected_status) {
            note_error(std::string(request.what) + ": expected HTTP " + std::to_string(request.expected_status) +
                       ", got " + (result ? std::to_string(result->status) : httplib::to_string(result.error())));
          }
        } else if (kind < options.bad_fraction + options.abandon_fraction) {
          // The client asks for a long answer and leaves after 50 ms: the server must notice and free it.
          const std::string body =
              json{{"prompt", "In the beginning"}, {"max_tokens", 2000}, {"ignore_eos", true}}.dump();
          auto result = client_for(url, 50).Post("/v1/completions", body, "application/json");
          ++abandoned;
          if (result)
            note_error("an abandoned request was answered within 50 ms: HTTP " + std::to_string(result->status));
        } else {
          const LoadRequest& request = generations[static_cast<std::size_t>(i) % generations.size()];
          const RequestOutcome outcome = run_request(url, request);
          ++generated;
          if (outcome.cancelled) ++cancelled;
          if (!outcome.error.empty()) note_error(outcome.error);
        }
      }
    });
  }
  for (Clock::time_point next = start + std::chrono::milliseconds(static_cast<int64_t>(options.sample_seconds * 1000));
       next < end; next += std::chrono::milliseconds(static_cast<int64_t>(options.sample_seconds * 1000))) {
    std::this_thread::sleep_until(next);
    sample(start);
  }
  for (std::thread& client : clients) client.join();
  const DrainResult drain = wait_until_idle(url, 60);
  sample(start);

  report.requests = sent.load();
  report.generations = generated.load();
  report.cancelled = cancelled.load();
  report.abandoned = abandoned.load();
  report.bad_requests = refused.load();
  report.unexpected = unexpected.load();
  report.drained = drain.drained;
  report.leaked_blocks = drain.kv_blocks_used;
  std::vector<double> requests_thousands, rss;
  for (const SoakSample& point : report.samples) {
    if (point.seconds < options.minutes * 60 / 3) continue;
    requests_thousands.push_back(static_cast<double>(point.requests) / 1000.0);
    rss.push_back(point.rss_mb);
  }
  report.rss_slope_mb_per_1000 = least_squares_slope(requests_thousands, rss);
  return report;
}

json soak_json(const SoakReport& report) {
  json samples = json::array();
  for (const SoakSample& point : report.samples) {
    samples.push_back({{"seconds", point.seconds},
                       {"requests", point.requests},
                       {"unexpected", point.unexpected},
                       {"rss_mb", point.rss_mb},
                       {"kv_blocks_used", point.kv_blocks_used},
                       {"connections_open", point.connections_open}});
  }
  return {{"minutes", report.options.minutes},
          {"concurrency", report.options.concurrency},
          {"requests", report.requests},
          {"generations", report.generations},
          {"cancelled_mid_stream", report.cancelled},
          {"abandoned_non_streaming", report.abandoned},
          {"bad_requests", report.bad_requests},
          {"unexpected", report.unexpected},
          {"first_errors", report.first_errors},
          {"drained", report.drained},
          {"leaked_blocks", report.leaked_blocks},
          {"rss_slope_mb_per_1000_requests", report.rss_slope_mb_per_1000},
          {"samples", samples},
          {"passed", report.passed()}};
}

}  // namespace minigen::load_test
