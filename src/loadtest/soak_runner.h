#pragma once
// `minigen bench-serve --soak MINUTES`: steady load for a long time, to find what a short load test cannot — slow
// leaks of memory or KV blocks, a crash that needs ten thousand requests, errors that creep in.
//
// `concurrency` clients send requests back to back until the time is up: streaming generations from the load
// test's mix (some closed by the client mid-stream), non-streaming ones the client abandons, and bad requests
// (malformed JSON, a temperature that overflows, a prompt beyond the context, bytes that are not UTF-8, the wrong
// Content-Type, an unknown route) that must get their 4xx and nothing else. Every `sample_seconds` the server's
// /metrics are read: its resident memory, KV blocks in use, requests so far. At the end the server must drain to
// zero KV blocks; the report gives the RSS slope per 1,000 requests after warm-up (least squares).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace minigen::load_test {

struct SoakOptions {
  double minutes = 10;
  double sample_seconds = 60;
  int concurrency = 16;
  int max_tokens = 64;
  double cancel_fraction = 0.1;    // of the streaming generations
  double bad_fraction = 0.15;      // of all requests
  double abandon_fraction = 0.05;  // non-streaming requests the client gives up on after a moment
  uint64_t seed = 1;
  std::ostream* progress = nullptr;
};

struct SoakSample {
  double seconds = 0;      // since the start
  int64_t requests = 0;    // sent by the soak so far
  int64_t unexpected = 0;  // so far: wrong status, broken stream, transport error
  double rss_mb = 0;       // the server's resident memory (process_resident_memory_bytes)
  int64_t kv_blocks_used = 0;
  int64_t connections_open = 0;
};

struct SoakReport {
  SoakOptions options;
  std::vector<SoakSample> samples;  // the first one before any load
  int64_t requests = 0;
  int64_t generations = 0;
  int64_t cancelled = 0;
  int64_t abandoned = 0;
  int64_t bad_requests = 0;
  int64_t unexpected = 0;
  std::vector<std::string> first_errors;
  bool drained = false;
  int64_t leaked_blocks = 0;
  // MB per 1,000 requests over the samples after the first third of the run (warm-up: caches, arenas, pools).
  double rss_slope_mb_per_1000 = 0;
  bool passed() const { return unexpected == 0 && drained && leaked_blocks == 0; }
};

SoakReport run_soak(const std::string& url, const SoakOptions& options);

// Least-squares slope of y over x; 0 with fewer than two distinct x.
double least_squares_slope(const std::vector<double>& x, const std::vector<double>& y);

nlohmann::json soak_json(const SoakReport& report);

}  // namespace minigen::load_test
