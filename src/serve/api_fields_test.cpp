// Over real HTTP, the request fields and endpoints the other API tests do not reach: min_p, repetition_penalty and a
// stop array change the answer exactly as the engine would; non-streaming logprobs with n > 1; the body-size limit;
// the bodies of /health and of every /metrics line.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "core/profiler.h"
#include "generate/generate.h"
#include "http/raw_client_test_util.h"
#include "serve/live_server_test_util.h"
#include "tokenizer/chat_template.h"

namespace minigen {
namespace {

using nlohmann::json;
using testing::LiveServer;
using testing::post;

const std::string kPrompt = "In the beginning";

std::string engine_text(LiveServer& server, SamplingParams sampling, int max_tokens) {
  return server.loaded.tokenizer->decode(testing::engine_token_ids(server, kPrompt, sampling, max_tokens), true);
}

std::string completion_text(LiveServer& server, json body) { return testing::completion_text(server, kPrompt, body); }

TEST(ApiFields, MinPAndRepetitionPenaltyReachTheSamplers) {
  LiveServer server;
  const SamplingParams greedy{.temperature = 0.0f, .greedy = true};
  const std::string plain = completion_text(server, {{"temperature", 0}, {"max_tokens", 24}});
  EXPECT_EQ(plain, engine_text(server, greedy, 24));

  // min_p = 1 keeps only the most likely token, so sampling at temperature 1 gives the greedy answer.
  EXPECT_EQ(completion_text(server, {{"temperature", 1.0}, {"min_p", 1.0}, {"seed", 9}, {"max_tokens", 24}}), plain);

  // A repetition penalty of 5 changes the greedy answer, into exactly what the generate loop gives with it.
  SamplingParams penalised = greedy;
  penalised.repetition_penalty = 5.0f;
  const std::string with_penalty =
      completion_text(server, {{"temperature", 0}, {"repetition_penalty", 5.0}, {"max_tokens", 24}});
  EXPECT_EQ(with_penalty, engine_text(server, penalised, 24));
  EXPECT_NE(with_penalty, plain);
}

TEST(ApiFields, AStopArrayEndsTheTextBeforeTheEarliestStopString) {
  LiveServer server;
  const std::string plain = completion_text(server, {{"temperature", 0}, {"max_tokens", 40}});
  // Two stop strings taken from the answer itself: the later one must not matter.
  const std::string early = plain.substr(8, 3);
  const std::string late = plain.substr(plain.size() - 4);
  const std::size_t cut = plain.find(early);
  ASSERT_LT(cut, plain.find(late));
  const json stopped =
      post(server, "/v1/completions",
           {{"prompt", kPrompt}, {"ignore_eos", true}, {"temperature", 0}, {"max_tokens", 40}, {"stop", {late, early}}},
           200);
  EXPECT_EQ(stopped["choices"][0]["text"], plain.substr(0, cut));
  EXPECT_EQ(stopped["choices"][0]["finish_reason"], "stop");
}

TEST(ApiFields, NonStreamingLogprobsForEveryTokenOfEveryChoice) {
  LiveServer server;
  const json answer = post(server, "/v1/chat/completions",
                           {{"messages", {{{"role", "user"}, {"content", "What does 'river' mean?"}}}},
                            {"n", 2},
                            {"temperature", 1.0},
                            {"seed", 4},
                            {"max_tokens", 12},
                            {"logprobs", true},
                            {"top_logprobs", 2}},
                           200);
  ASSERT_EQ(answer["choices"].size(), 2u);
  int tokens = 0;
  for (int i = 0; i < 2; ++i) {
    const json& choice = answer["choices"][i];
    EXPECT_EQ(choice["index"], i);
    const json& content = choice["logprobs"]["content"];
    ASSERT_FALSE(content.empty());
    std::string joined;
    for (const json& entry : content) {
      const double logprob = entry["logprob"];
      EXPECT_LE(logprob, 0.0);
      EXPECT_TRUE(std::isfinite(logprob));
      ASSERT_GE(entry["top_logprobs"].size(), 1u);
      EXPECT_LE(entry["top_logprobs"].size(), 2u);
      EXPECT_GE(entry["top_logprobs"][0]["logprob"].get<double>(), logprob);  // most likely first
      joined += entry["token"].get<std::string>();
    }
    EXPECT_EQ(joined, choice["message"]["content"]);  // every token of the text is there, in order
    // usage also counts the eos that ended a choice, which is not part of the text and not listed
    tokens += static_cast<int>(content.size()) + (choice["finish_reason"] == "stop" ? 1 : 0);
  }
  EXPECT_EQ(answer["usage"]["completion_tokens"], tokens);
}

TEST(ApiFields, ABodyOverTheLimitIs413AndHealthNamesTheModel) {
  LiveServer server;
  // Only the headers are sent: the server refuses by the declared length, before reading (or waiting for) the body.
  http::testing::RawClient client(server.port);
  ASSERT_TRUE(
      client.send("POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                  "Content-Length: 8388609\r\n\r\n"));
  const std::string answer = client.read_all();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 413 ")) << answer;
  auto health = server.client().Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(json::parse(health->body), (json{{"status", "ok"}, {"model", "minigen-tiny-sft"}}));
}

// Every line of /metrics after one 8-token completion: each metric has HELP and TYPE lines and one numeric sample,
// and the counters say what happened.
TEST(ApiFields, EveryMetricsLineAfterOneCompletion) {
  LiveServer server;
  post(server, "/v1/completions", {{"prompt", kPrompt}, {"ignore_eos", true}, {"max_tokens", 8}}, 200);
  server.settled();
  auto metrics = server.client().Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  std::map<std::string, double> values;
  std::map<std::string, int> help, type;
  std::istringstream lines(metrics->body);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string first, name;
    words >> first;
    if (first == "#") {
      std::string kind;
      words >> kind >> name;
      ++(kind == "HELP" ? help : type)[name];
      continue;
    }
    double value = NAN;
    ASSERT_TRUE(static_cast<bool>(words >> value)) << line;
    EXPECT_TRUE(std::isfinite(value) && value >= 0) << line;
    EXPECT_EQ(values.count(first), 0u) << "twice: " << first;
    values[first] = value;
  }
  EXPECT_EQ(values.size(), 29u);
  EXPECT_EQ(values["minigen_lora_adapters_loaded"], 0);
  for (const auto& [name, value] : values) {
    EXPECT_EQ(help[name], 1) << name;
    EXPECT_EQ(type[name], 1) << name;
  }
  EXPECT_EQ(values["minigen_requests_total"], 1);
  EXPECT_EQ(values["minigen_generation_tokens_total"], 8);
  EXPECT_EQ(values["minigen_requests_running"], 0);
  EXPECT_EQ(values["minigen_requests_waiting"], 0);
  EXPECT_EQ(values["minigen_requests_rejected_total"], 0);
  EXPECT_EQ(values["minigen_kv_blocks_total"], 256);
  EXPECT_EQ(values["minigen_kv_blocks_used"], 0);
  EXPECT_EQ(values["minigen_kv_blocks_free"], 256);
  EXPECT_EQ(values["minigen_kv_block_bytes"], 32768);  // 2 · 4 layers · 16 positions · 2 kv heads · 32 · 4 B
  EXPECT_EQ(values["minigen_kv_cache_bytes_total"], 256 * 32768);
  EXPECT_EQ(values["minigen_kv_cache_bytes_used"], 0);
  EXPECT_EQ(values["minigen_prefill_tokens_total"], 4);  // bos + "In the beginning"
  EXPECT_EQ(values["minigen_http_requests_total"], 2);   // the completion and this GET
  EXPECT_GT(values["process_resident_memory_bytes"], 1e6);
}

// The per-zone samples of one /metrics body: zone → value, for the calls and the seconds counters.
struct ZoneSamples {
  std::map<std::string, double> calls, seconds;
};

ZoneSamples zone_samples(const std::string& metrics) {
  ZoneSamples samples;
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    for (auto [prefix, values] : {std::pair{"minigen_profile_calls_total{zone=\"", &samples.calls},
                                  std::pair{"minigen_profile_seconds_total{zone=\"", &samples.seconds}}) {
      if (!line.starts_with(prefix)) continue;
      const std::size_t end = line.find("\"} ");
      EXPECT_NE(end, std::string::npos) << line;
      if (end == std::string::npos) continue;
      (*values)[line.substr(std::string(prefix).size(), end - std::string(prefix).size())] =
          std::stod(line.substr(end + 3));
    }
  }
  return samples;
}

// `minigen serve --profile`: /metrics adds one labelled sample per zone of two counters, and after one 8-token
// completion they count what ran — a forward zone per scheduler step, a sampling and a detokenise zone per token,
// the HTTP writes of the answer.
TEST(ApiFields, AProfiledServerExportsEveryZoneInMetrics) {
  set_profiling(true);
  LiveServer server;
  post(server, "/v1/completions", {{"prompt", kPrompt}, {"ignore_eos", true}, {"max_tokens", 8}}, 200);
  server.settled();
  // The worker records its write once send() returns, which can be just after the client has read the answer:
  // ask again (for up to a minute) until that write is counted.
  std::string body;
  ZoneSamples samples;
  for (int attempt = 0; attempt < 6000 && samples.calls["http_write"] < 1; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto metrics = server.client().Get("/metrics");
    ASSERT_TRUE(metrics);
    body = metrics->body;
    samples = zone_samples(body);
  }
  set_profiling(false);
  EXPECT_NE(body.find("# TYPE minigen_profile_seconds_total counter\n"), std::string::npos);
  EXPECT_NE(body.find("# TYPE minigen_profile_calls_total counter\n"), std::string::npos);
  std::map<std::string, double>& calls = samples.calls;
  EXPECT_EQ(calls.size(), static_cast<std::size_t>(kZoneCount));
  EXPECT_EQ(samples.seconds.size(), static_cast<std::size_t>(kZoneCount));
  const EngineStatus status = server.stack.engine().status();
  EXPECT_EQ(calls["forward"], static_cast<double>(status.counters.steps));
  EXPECT_EQ(calls["attention"], 4 * calls["forward"]);  // minigen-tiny-sft has 4 layers
  EXPECT_EQ(calls["sampling"], 8);
  EXPECT_EQ(calls["detokenise"], 8);
  EXPECT_GE(calls["http_write"], 1);
  EXPECT_EQ(calls["moe_routing"], 0);
  EXPECT_GT(samples.seconds["matmul"], 0);
  EXPECT_LE(samples.seconds["matmul"], samples.seconds["forward"]);
}

// A server whose pool holds int8 K and V: a block is 8,192 bytes of elements + 1,024 of scales, so 910 of them fit
// in the bytes of 256 f32 blocks (⌊256 · 32,768 / 9,216⌋), and /metrics reports their true bytes.
TEST(ApiFields, Int8KvPoolReportsItsTrueBytes) {
  LiveServer server(64, 910, {}, KvDType::kInt8);
  EXPECT_EQ(server.stack.blocks().total_blocks(), 910);
  const json completion =
      post(server, "/v1/completions", {{"prompt", kPrompt}, {"ignore_eos", true}, {"max_tokens", 8}}, 200);
  EXPECT_EQ(completion["usage"]["completion_tokens"], 8);
  server.settled();
  auto metrics = server.client().Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("\nminigen_kv_block_bytes 9216\n"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("\nminigen_kv_cache_bytes_total 8386560\n"), std::string::npos) << metrics->body;
}

}  // namespace
}  // namespace minigen
