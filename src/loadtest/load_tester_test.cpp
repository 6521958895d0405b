// The load test's own arithmetic and parsers, then the load test itself against an in-process server on the
// shipped model: no errors, every stream that was not cancelled ends with [DONE], no KV block leaks, the prefix
// cache is used. No timing assertions: the machine running the tests may be busy.
#include "loadtest/load_tester.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/model_loader.h"
#include "core/error.h"
#include "serve/metrics.h"

namespace minigen::load_test {
namespace {

TEST(LoadTestPercentile, InterpolatesBetweenNearestRanks) {
  const std::vector<double> values = {40, 15, 50, 35, 20};  // sorted: 15 20 35 40 50
  EXPECT_DOUBLE_EQ(percentile(values, 0), 15);
  EXPECT_DOUBLE_EQ(percentile(values, 100), 50);
  EXPECT_DOUBLE_EQ(percentile(values, 50), 35);
  EXPECT_DOUBLE_EQ(percentile(values, 25), 20);    // rank 1 exactly
  EXPECT_DOUBLE_EQ(percentile(values, 40), 29);    // rank 1.6: 20 + 0.6 · 15
  EXPECT_DOUBLE_EQ(percentile(values, 99), 49.6);  // rank 3.96: 40 + 0.96 · 10
}

TEST(LoadTestPercentile, EdgeCases) {
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7);
  EXPECT_DOUBLE_EQ(percentile({1, 2}, 50), 1.5);
  EXPECT_TRUE(std::isnan(percentile({}, 50)));
  EXPECT_THROW(percentile({1, 2}, 101), Error);
  EXPECT_THROW(percentile({1, 2}, -1), Error);
}

TEST(LoadTestPrometheus, ReadsNamesLabelsAndValues) {
  const std::string text =
      "# HELP minigen_kv_blocks_used KV blocks referenced by a sequence.\n"
      "# TYPE minigen_kv_blocks_used gauge\n"
      "minigen_kv_blocks_used 0\n"
      "\n"
      "minigen_requests_running 3\r\n"
      "minigen_prefix_cache_hit_rate 0.4375\n"
      "minigen_generation_tokens_total 1.23457e+06\n"
      "http_requests_total{method=\"post\",code=\"200 ok\"} 1027 1395066363000\n"
      "  minigen_nan NaN\n"
      "minigen_steps_total 12";  // no final newline
  const std::map<std::string, double> metrics = parse_prometheus_text(text);
  EXPECT_EQ(metrics.size(), 7u);
  EXPECT_EQ(metrics.at("minigen_kv_blocks_used"), 0);
  EXPECT_EQ(metrics.at("minigen_requests_running"), 3);
  EXPECT_EQ(metrics.at("minigen_prefix_cache_hit_rate"), 0.4375);
  EXPECT_EQ(metrics.at("minigen_generation_tokens_total"), 1234570);
  EXPECT_EQ(metrics.at("http_requests_total{method=\"post\",code=\"200 ok\"}"), 1027);
  EXPECT_TRUE(std::isnan(metrics.at("minigen_nan")));
  EXPECT_EQ(metrics.at("minigen_steps_total"), 12);
}

TEST(LoadTestPrometheus, RejectsALineWithoutANumber) {
  EXPECT_THROW(parse_prometheus_text("minigen_steps_total\n"), Error);
  EXPECT_THROW(parse_prometheus_text("minigen_steps_total twelve\n"), Error);
  EXPECT_THROW(parse_prometheus_text("minigen_steps_total 12abc\n"), Error);
}

TEST(LoadTestPrometheus, ReadsTheServersOwnMetrics) {
  EngineStatus status;
  status.running = 2;
  status.waiting = 5;
  status.kv_blocks_total = 100;
  status.kv_blocks_used = 7;
  status.prefix_lookups = 40;
  status.prefix_hits = 10;
  status.counters.prefix_cached_tokens = 160;
  const std::map<std::string, double> metrics =
      parse_prometheus_text(metrics_text(status, http::ServerStats{.connections_open = 3}));
  EXPECT_EQ(metrics.at("minigen_requests_running"), 2);
  EXPECT_EQ(metrics.at("minigen_requests_waiting"), 5);
  EXPECT_EQ(metrics.at("minigen_kv_blocks_used"), 7);
  EXPECT_EQ(metrics.at("minigen_kv_blocks_free"), 93);
  EXPECT_EQ(metrics.at("minigen_prefix_cache_hits_total"), 10);
  EXPECT_EQ(metrics.at("minigen_prefix_cache_hit_rate"), 0.25);
  EXPECT_EQ(metrics.at("minigen_prompt_tokens_cached_total"), 160);
  EXPECT_EQ(metrics.at("minigen_http_connections_open"), 3);
}

const std::string kStream =
    "data: {\"n\":1}\n\n"
    ": keep-alive\n\n"
    "data: {\"n\":2,\"text\":\"a: b\"}\r\n\r\n"
    "event: ignored\n"
    "data: first\n"
    "data: second\n\n"
    ": keep-alive\n\n"
    "data: [DONE]\n\n";
const std::vector<std::string> kStreamEvents = {"{\"n\":1}", "{\"n\":2,\"text\":\"a: b\"}", "first\nsecond", "[DONE]"};

TEST(LoadTestSse, WholeStream) {
  SseParser parser;
  std::vector<std::string> events;
  parser.feed(kStream, events);
  EXPECT_EQ(events, kStreamEvents);
  EXPECT_TRUE(parser.at_event_boundary());
}

TEST(LoadTestSse, CutAtEveryPairOfByteBoundaries) {
  for (std::size_t first = 0; first <= kStream.size(); ++first) {
    for (std::size_t second = first; second <= kStream.size(); ++second) {
      SseParser parser;
      std::vector<std::string> events;
      parser.feed(std::string_view(kStream).substr(0, first), events);
      parser.feed(std::string_view(kStream).substr(first, second - first), events);
      parser.feed(std::string_view(kStream).substr(second), events);
      ASSERT_EQ(events, kStreamEvents) << "cut at " << first << " and " << second;
    }
  }
}

TEST(LoadTestSse, ByteByByteAndUnfinishedEvents) {
  SseParser parser;
  std::vector<std::string> events;
  for (char byte : kStream) parser.feed(std::string_view(&byte, 1), events);
  EXPECT_EQ(events, kStreamEvents);

  SseParser unfinished;
  events.clear();
  unfinished.feed("data: {\"n\":1}\n", events);  // the blank line that ends the event has not come
  EXPECT_TRUE(events.empty());
  EXPECT_FALSE(unfinished.at_event_boundary());
  unfinished.feed("\ndata: [DO", events);
  EXPECT_EQ(events, std::vector<std::string>{"{\"n\":1}"});
  EXPECT_FALSE(unfinished.at_event_boundary());
}

TEST(LoadTestRequests, MixIsDeterministicAndAsSpecified) {
  const std::vector<LoadRequest> requests = make_requests({200, 64, 0.1, 7, false, ""});
  ASSERT_EQ(requests.size(), 200u);
  int shared = 0, chat = 0, cancelled = 0, stopping = 0;
  std::map<std::string, int> lengths;
  for (const LoadRequest& request : requests) {
    shared += request.shared_prefix;
    chat += request.chat;
    cancelled += request.cancel_after_tokens > 0;
    ++lengths[request.length_class];
    EXPECT_GE(request.max_tokens, 16);
    EXPECT_LE(request.max_tokens, 64);
    EXPECT_LE(request.cancel_after_tokens, 16);
    EXPECT_TRUE(request.cancel_after_tokens == 0 || request.ignore_eos);  // a planned cancellation always happens
    stopping += !request.ignore_eos;
  }
  EXPECT_EQ(shared, 100);
  EXPECT_EQ(cancelled, 20);
  EXPECT_GT(chat, 50);
  EXPECT_LT(chat, 150);
  EXPECT_EQ(lengths.size(), 3u);
  EXPECT_GT(stopping, 20);
  EXPECT_LT(stopping, 80);

  const std::vector<LoadRequest> again = make_requests({200, 64, 0.1, 7, false, ""});
  for (std::size_t i = 0; i < requests.size(); ++i) EXPECT_EQ(requests[i].body, again[i].body);
  EXPECT_NE(make_requests({1, 64, 0.1, 8, false, ""})[0].body, requests[0].body);
  EXPECT_LE(make_requests({10, 4, 0.0, 1, false, ""})[0].max_tokens, 4);
}

TEST(LoadTestRequests, LabelsSeparatePromptsButKeepTheMix) {
  const std::vector<LoadRequest> first = make_requests({30, 64, 0.0, 3, true, "(first) "});
  const std::vector<LoadRequest> second = make_requests({30, 64, 0.0, 3, true, "(second) "});
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_NE(first[i].body, second[i].body);
    EXPECT_NE(first[i].body.find("(first) "), std::string::npos);
    EXPECT_EQ(first[i].chat, second[i].chat);
    EXPECT_EQ(first[i].length_class, second[i].length_class);
    EXPECT_EQ(first[i].max_tokens, second[i].max_tokens);
    EXPECT_EQ(first[i].seed, second[i].seed);
    EXPECT_TRUE(first[i].ignore_eos);
  }
}

TEST(LoadTestEndToEnd, QuickLoadOnTheShippedModel) {
  const std::filesystem::path model_path = minigen_home() / "models" / "minigen-tiny-sft";
  if (!std::filesystem::exists(model_path)) GTEST_SKIP() << "no shipped model at " << model_path;
  const LoadedModel loaded = load_model(model_path);
  LocalServerOptions server_options;
  server_options.threads = 2;
  server_options.kv_budget_bytes = 64u << 20;
  server_options.max_batch = 16;
  LocalServer server(*loaded.model, *loaded.tokenizer, "minigen-tiny-sft", server_options);

  LoadTestOptions options;
  options.requests = 40;
  options.concurrency = 8;
  options.max_tokens = 24;
  options.compare_requests = 8;
  const LoadTestReport report = run_load_test(server.url(), options);

  EXPECT_EQ(report.errors(), 0);
  for (const PhaseResult* phase : {&report.load, &report.concurrent, &report.sequential}) {
    for (const RequestOutcome& outcome : phase->outcomes) EXPECT_EQ(outcome.error, "");
  }
  EXPECT_TRUE(report.after_load.drained);
  EXPECT_TRUE(report.at_end.drained);
  EXPECT_EQ(report.leaked_blocks(), 0);
  int not_cancelled = 0;
  for (const RequestOutcome& outcome : report.load.outcomes) {
    if (outcome.cancelled) continue;
    ++not_cancelled;
    EXPECT_TRUE(outcome.done);
    EXPECT_GE(outcome.tokens, 1);
  }
  EXPECT_GT(not_cancelled, 0);
  EXPECT_GT(report.load.cancelled(), 0);
  EXPECT_GT(report.prefix_cache.block_hits, 0);
  EXPECT_GT(report.prefix_cache.prompt_tokens_cached, 0);
  // Every comparison request ignores eos, so it streams exactly max_tokens tokens, alone or in a batch.
  for (const PhaseResult* phase : {&report.sequential, &report.concurrent}) {
    ASSERT_EQ(phase->outcomes.size(), 8u);
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(phase->outcomes[i].tokens, report.sequential_requests[i].max_tokens);
  }
  EXPECT_TRUE(report.passed());
}

}  // namespace
}  // namespace minigen::load_test
