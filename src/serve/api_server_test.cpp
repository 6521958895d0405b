// minigen serve over real HTTP on loopback: the API's answers, its 4xx errors, streaming, and what a vanishing
// client or a full queue does to the server.
#include "serve/api_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "serve/live_server_test_util.h"

namespace minigen {
namespace {

using nlohmann::json;
using testing::LiveServer;
using testing::post;
using testing::post_streaming;

TEST(ApiServer, GreedyChatAnswerIsTheSameAloneAndAmongConcurrentRequests) {
  LiveServer server;
  const json request = {{"messages", {{{"role", "user"}, {"content", "What does 'computer' mean?"}}}},
                        {"temperature", 0},
                        {"max_tokens", 40}};
  const json alone = post(server, "/v1/chat/completions", request, 200);
  const std::string text = alone["choices"][0]["message"]["content"];
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(alone["object"], "chat.completion");
  EXPECT_EQ(alone["usage"]["completion_tokens"].get<int>() + alone["usage"]["prompt_tokens"].get<int>(),
            alone["usage"]["total_tokens"].get<int>());
  // Eight at once, four of them sampled with seeds: the greedy ones must match the lone answer exactly.
  std::vector<std::thread> clients;
  std::vector<std::string> answers(8);
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back([&, i] {
      json body = request;
      if (i % 2 == 1) body["temperature"] = 1.0, body["seed"] = i;
      answers[i] = post(server, "/v1/chat/completions", body, 200)["choices"][0]["message"]["content"];
    });
  }
  for (auto& client : clients) client.join();
  for (int i = 0; i < 8; i += 2) EXPECT_EQ(answers[i], text) << i;
  // Same seed, same answer: sampled request 1 again, alone.
  json again = request;
  again["temperature"] = 1.0;
  again["seed"] = 1;
  EXPECT_EQ(post(server, "/v1/chat/completions", again, 200)["choices"][0]["message"]["content"], answers[1]);
  EXPECT_EQ(server.settled().kv_blocks_used, 0);
}

TEST(ApiServer, BadRequestsGet400WithAnOpenAiErrorBody) {
  LiveServer server;
  auto client = server.client();
  auto malformed = client.Post("/v1/completions", "{not json", "application/json");
  ASSERT_TRUE(malformed);
  EXPECT_EQ(malformed->status, 400);
  EXPECT_EQ(json::parse(malformed->body)["error"]["type"], "invalid_request_error");
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"prompt", 7}}, "prompt"},
      {{{"prompt", "x"}, {"temperature", -1}}, "temperature"},
      {{{"prompt", "x"}, {"top_p", 0}}, "top_p"},
      {{{"prompt", "x"}, {"max_tokens", "ten"}}, "max_tokens"},
      {{{"prompt", "x"}, {"n", 0}}, "n"},
      {{{"prompt", "x"}, {"stop", {1, 2}}}, "stop"},
      {{{"prompt", "x"}, {"logprobs", 21}}, "logprobs"},
      {{{"prompt", "x"}, {"stream", "yes"}}, "stream"},
  };
  for (const auto& [body, param] : cases) {
    const json error = post(server, "/v1/completions", body, 400);
    EXPECT_EQ(error["error"]["param"], param) << body.dump();
  }
  const json chat = post(server, "/v1/chat/completions", {{"messages", {{{"role", "robot"}, {"content", "hi"}}}}}, 400);
  EXPECT_EQ(chat["error"]["param"], "messages");
  // Beyond the context: the model's context is 32,768 tokens.
  const json too_long = post(server, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 40000}}, 400);
  EXPECT_NE(too_long["error"]["message"].get<std::string>().find("context"), std::string::npos);
  // Larger than the whole KV pool (256 blocks = 4,096 tokens) is refused up front.
  const json too_big = post(server, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 5000}}, 400);
  EXPECT_NE(too_big["error"]["message"].get<std::string>().find("KV"), std::string::npos);
  auto missing = client.Get("/v1/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST(ApiServer, StreamEndsWithDoneAndLogprobsCarryTheKeptCandidates) {
  LiveServer server;
  const json body = {{"prompt", "The LORD is my shepherd"},
                     {"max_tokens", 12},
                     {"stream", true},
                     {"seed", 5},
                     {"logprobs", 3},
                     {"n", 2},
                     {"ignore_eos", true}};
  std::string received;
  auto result = post_streaming(server, "/v1/completions", body, [&](const char* data, std::size_t size) {
    received.append(data, size);
    return true;
  });
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 200);
  EXPECT_EQ(result->get_header_value("Content-Type"), "text/event-stream; charset=utf-8");  // requests decodes UTF-8
  EXPECT_EQ(received.substr(received.size() - 14), "data: [DONE]\n\n");
  int chunks = 0, finished = 0;
  std::size_t at = 0;
  while ((at = received.find("data: {", at)) != std::string::npos) {
    const std::size_t end = received.find("\n\n", at);
    const json chunk = json::parse(received.substr(at + 6, end - at - 6));
    const json& choice = chunk["choices"][0];
    if (!choice["finish_reason"].is_null()) {
      ++finished;
    } else {
      const json& entry = choice["logprobs"]["content"][0];
      EXPECT_GT(entry["kept_probability"].get<double>(), 0.0);
      EXPECT_LE(entry["top_logprobs"].size(), 3u);
      EXPECT_GE(entry["kept_candidates"].get<int>(), 1);
    }
    ++chunks;
    at = end;
  }
  EXPECT_EQ(finished, 2);     // n = 2 choices, each ending with its 12th token ("length")
  EXPECT_EQ(chunks, 2 * 12);  // one chunk per token
}

TEST(ApiServer, ClientThatDisconnectsMidStreamFreesItsBlocks) {
  LiveServer server;
  const json body = {{"prompt", "In the beginning"}, {"max_tokens", 2000}, {"stream", true}, {"ignore_eos", true}};
  int chunks = 0;
  auto result = post_streaming(server, "/v1/completions", body,
                               [&](const char*, std::size_t) { return ++chunks < 5; });  // hang up early
  EXPECT_FALSE(result);                                                                  // the client aborted
  const EngineStatus status = server.settled();
  EXPECT_EQ(status.running, 0);
  EXPECT_EQ(status.kv_blocks_used, 0);
  EXPECT_LT(status.counters.generated_tokens, 2000);
}

TEST(ApiServer, StopStringsEndTheAnswerBeforeTheStopText) {
  LiveServer server;
  const json free_run =
      post(server, "/v1/completions",
           {{"prompt", "The LORD"}, {"max_tokens", 30}, {"temperature", 0}, {"ignore_eos", true}}, 200);
  const std::string text = free_run["choices"][0]["text"];
  ASSERT_GE(text.size(), 12u);
  const std::string stop = text.substr(8, 3);
  const json stopped =
      post(server, "/v1/completions",
           {{"prompt", "The LORD"}, {"max_tokens", 30}, {"temperature", 0}, {"ignore_eos", true}, {"stop", stop}}, 200);
  EXPECT_EQ(stopped["choices"][0]["text"], text.substr(0, text.find(stop)));
  EXPECT_EQ(stopped["choices"][0]["finish_reason"], "stop");
}

TEST(ApiServer, MetricsAndModelsDescribeTheServer) {
  LiveServer server;
  auto client = server.client();
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("minigen_kv_blocks_total 256\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("# TYPE minigen_prefix_cache_hit_rate gauge"), std::string::npos);
  auto models = client.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(json::parse(models->body)["data"][0]["id"], "minigen-tiny-sft");
}

}  // namespace
}  // namespace minigen

namespace minigen {
namespace {

// Beyond capacity the server answers 429 with a clear message instead of piling up. Made deterministic: eight
// long streams are started one after another, each seen running before the next is sent (the batch is full), a
// ninth request is seen queued (the queue of one is full), and only then is the tenth sent — it must be refused,
// however fast or slow the build is.
TEST(ApiServer, BeyondCapacityRequestsGet429) {
  LiveServer server(/*max_queue=*/1, /*blocks=*/2200);  // room for 8 × 4,000 tokens: no preemption
  constexpr int kBatch = 8;                             // LiveServer's max_batch
  std::atomic<bool> hang_up{false};
  auto wait_until = [](const std::function<bool()>& condition) {
    for (int i = 0; i < 12000 && !condition(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return condition();
  };
  std::vector<std::thread> streams;
  std::thread queued;
  struct Finally {  // however the test ends, the clients hang up and their threads are joined
    std::function<void()> run;
    ~Finally() { run(); }
  } const join_all{[&] {
    hang_up = true;
    for (auto& stream : streams) stream.join();
    if (queued.joinable()) queued.join();
  }};
  for (int i = 0; i < kBatch; ++i) {
    streams.emplace_back([&, i] {
      const json body = {
          {"prompt", "In the beginning"}, {"max_tokens", 4000}, {"ignore_eos", true}, {"stream", true}, {"seed", i}};
      post_streaming(server, "/v1/completions", body, [&](const char*, std::size_t) { return !hang_up.load(); });
    });
    ASSERT_TRUE(wait_until([&] { return server.stack.engine().status().running == i + 1; })) << "stream " << i;
  }

  std::atomic<int> queued_status{0};
  queued = std::thread([&] {
    queued_status = post(server, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 4}}, 200).is_object() ? 200 : -1;
  });
  ASSERT_TRUE(wait_until([&] { return server.stack.engine().status().jobs_submitted == kBatch + 1; }));

  const json refused = post(server, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 4}}, 429);
  EXPECT_NE(refused["error"]["message"].get<std::string>().find("capacity"), std::string::npos) << refused.dump();
  EXPECT_EQ(server.stack.engine().status().jobs_rejected, 1);

  hang_up = true;  // the streams end, their slots free, the queued request runs
  for (auto& stream : streams) stream.join();
  streams.clear();
  queued.join();
  EXPECT_EQ(queued_status.load(), 200);
  EXPECT_EQ(server.settled().kv_blocks_used, 0);
}

}  // namespace
}  // namespace minigen
