#include "loadtest/soak_runner.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "checkpoint/model_loader.h"
#include "loadtest/load_tester.h"

namespace minigen::load_test {
namespace {

TEST(SoakRunner, LeastSquaresSlope) {
  EXPECT_DOUBLE_EQ(least_squares_slope({1, 2, 3, 4}, {3, 5, 7, 9}), 2.0);
  EXPECT_DOUBLE_EQ(least_squares_slope({0, 1, 2}, {1, 1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(least_squares_slope({0, 0, 1, 1}, {0, 2, 4, 6}), 4.0);  // means of the pairs: 1 → 5
  EXPECT_DOUBLE_EQ(least_squares_slope({5}, {1}), 0.0);
  EXPECT_DOUBLE_EQ(least_squares_slope({2, 2}, {1, 9}), 0.0);
}

// A short soak on the shipped model: every bad request gets exactly its 4xx, every generation checks out, the
// abandoned and cancelled ones give their blocks back, and the server reports its memory.
TEST(SoakRunner, ShortSoakOnTheShippedModelHasNoSurprises) {
  const LoadedModel loaded = load_model(minigen_home() / "models" / "minigen-tiny-sft");
  LocalServerOptions server_options;
  server_options.threads = 2;
  server_options.kv_budget_bytes = 64u << 20;
  LocalServer server(*loaded.model, *loaded.tokenizer, "minigen-tiny-sft", server_options);
  SoakOptions options;
  options.minutes = 0.1;
  options.sample_seconds = 2;
  options.concurrency = 6;
  options.max_tokens = 16;
  options.bad_fraction = 0.3;
  options.abandon_fraction = 0.1;
  const SoakReport report = run_soak(server.url(), options);
  for (const std::string& error : report.first_errors) ADD_FAILURE() << error;
  EXPECT_EQ(report.unexpected, 0);
  EXPECT_GT(report.bad_requests, 0);
  EXPECT_GT(report.abandoned, 0);
  EXPECT_GT(report.generations, 0);
  EXPECT_EQ(report.requests, report.bad_requests + report.abandoned + report.generations);
  EXPECT_TRUE(report.drained);
  EXPECT_EQ(report.leaked_blocks, 0);
  ASSERT_GE(report.samples.size(), 4u);                                            // before, every 2 s of 6 s, after
  for (const SoakSample& sample : report.samples) EXPECT_GT(sample.rss_mb, 10.0);  // the model alone is 19 MB
  EXPECT_EQ(report.samples.back().kv_blocks_used, 0);
  EXPECT_TRUE(report.passed());
}

}  // namespace
}  // namespace minigen::load_test
