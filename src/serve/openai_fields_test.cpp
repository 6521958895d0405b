// Over real HTTP, the OpenAI fields beyond MiniMind's own: frequency_penalty, presence_penalty and logit_bias act as
// the sampler chain defines them; content given as text parts; stream_options.include_usage; system_fingerprint.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generate/generate.h"
#include "serve/live_server_test_util.h"
#include "tokenizer/chat_template.h"

namespace minigen {
namespace {

using nlohmann::json;
using testing::LiveServer;
using testing::post;
using testing::stream_chunks;

const std::string kCompletionPrompt = "In the beginning";

std::vector<int> engine_ids(LiveServer& server, SamplingParams sampling, int max_tokens) {
  return testing::engine_token_ids(server, kCompletionPrompt, sampling, max_tokens);
}

std::string text_of(LiveServer& server, const std::vector<int>& ids) {
  return server.loaded.tokenizer->decode(ids, true);
}

std::string completion_answer(LiveServer& server, json body) {
  return testing::completion_text(server, kCompletionPrompt, body);
}

TEST(OpenAiFields, PenaltiesAndLogitBiasChangeTheAnswerAsTheSamplerChainDoes) {
  LiveServer server;
  const SamplingParams greedy{.temperature = 0.0f, .greedy = true};
  const std::vector<int> plain = engine_ids(server, greedy, 24);
  ASSERT_EQ(completion_answer(server, {{"temperature", 0}, {"max_tokens", 24}}), text_of(server, plain));

  SamplingParams penalised = greedy;
  penalised.frequency_penalty = 1.5f;
  penalised.presence_penalty = 0.5f;
  const std::vector<int> with_penalties = engine_ids(server, penalised, 24);
  EXPECT_NE(with_penalties, plain);
  EXPECT_EQ(
      completion_answer(
          server, {{"temperature", 0}, {"frequency_penalty", 1.5}, {"presence_penalty", 0.5}, {"max_tokens", 24}}),
      text_of(server, with_penalties));

  // −100 bans the greedy answer's first token: it appears nowhere in the new answer. +100 on one token makes every
  // step choose it.
  const int first = plain.front();
  SamplingParams banned = greedy;
  banned.logit_bias = {{first, -100.0f}};
  const std::vector<int> without_first = engine_ids(server, banned, 24);
  EXPECT_EQ(std::count(without_first.begin(), without_first.end(), first), 0);
  EXPECT_EQ(completion_answer(
                server, {{"temperature", 0}, {"logit_bias", {{std::to_string(first), -100}}}, {"max_tokens", 24}}),
            text_of(server, without_first));
  const int forced = plain.back();
  const json always = post(server, "/v1/completions",
                           {{"prompt", kCompletionPrompt},
                            {"ignore_eos", true},
                            {"temperature", 0.7},
                            {"seed", 3},
                            {"logit_bias", {{std::to_string(forced), 100}}},
                            {"max_tokens", 6},
                            {"logprobs", 1}},
                           200);
  for (const json& entry : always["choices"][0]["logprobs"]["content"]) EXPECT_EQ(entry["token_id"], forced);
  EXPECT_EQ(always["choices"][0]["logprobs"]["content"].size(), 6u);
}

TEST(OpenAiFields, BadPenaltiesAndBiasesAre400sNamingTheField) {
  LiveServer server;
  const auto expect_400 = [&](const json& extra, const std::string& param, const std::string& words) {
    json body = {{"prompt", kCompletionPrompt}, {"max_tokens", 4}};
    body.update(extra);
    const json error = post(server, "/v1/completions", body, 400)["error"];
    EXPECT_EQ(error["param"], param) << extra.dump();
    EXPECT_NE(error["message"].get<std::string>().find(words), std::string::npos) << error.dump();
  };
  expect_400({{"frequency_penalty", 2.5}}, "frequency_penalty", "[-2.0, 2.0], got 2.5");
  expect_400({{"presence_penalty", "high"}}, "presence_penalty", "number");
  expect_400({{"logit_bias", {{"6400", 1}}}}, "logit_bias", "[0, 6400)");
  expect_400({{"logit_bias", {{"x7", 1}}}}, "logit_bias", "'x7'");
  expect_400({{"logit_bias", {{"7", 101}}}}, "logit_bias", "[-100, 100]");
  expect_400({{"logit_bias", json::array({1, 2})}}, "logit_bias", "object");
  expect_400({{"stream_options", {{"include_usage", true}}}}, "stream_options", "stream");
  expect_400({{"stream", true}, {"stream_options", {{"include_usage", true}, {"extra", 1}}}}, "stream_options",
             "'extra'");
}

TEST(OpenAiFields, TextPartsAreJoinedAndOtherPartTypesAre400) {
  LiveServer server;
  const json as_string = post(server, "/v1/chat/completions",
                              {{"messages", {{{"role", "user"}, {"content", "What does 'river' mean?"}}}},
                               {"temperature", 0},
                               {"max_tokens", 12}},
                              200);
  const json parts = {{{"type", "text"}, {"text", "What does "}}, {{"type", "text"}, {"text", "'river' mean?"}}};
  const json as_parts =
      post(server, "/v1/chat/completions",
           {{"messages", {{{"role", "user"}, {"content", parts}}}}, {"temperature", 0}, {"max_tokens", 12}}, 200);
  EXPECT_EQ(as_parts["choices"][0]["message"]["content"], as_string["choices"][0]["message"]["content"]);
  EXPECT_EQ(as_parts["usage"], as_string["usage"]);

  const json image = {{{"type", "image_url"}, {"image_url", {{"url", "http://x/y.png"}}}}};
  const json error =
      post(server, "/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", image}}}}}, 400);
  EXPECT_NE(error["error"]["message"].get<std::string>().find("'image_url'"), std::string::npos) << error.dump();
}

TEST(OpenAiFields, IncludeUsageSendsOneLastChunkAndEveryResponseHasAFingerprint) {
  LiveServer server;
  const std::vector<json> chunks = stream_chunks(server, "/v1/chat/completions",
                                                 {{"messages", {{{"role", "user"}, {"content", "Hello"}}}},
                                                  {"max_tokens", 5},
                                                  {"ignore_eos", true},
                                                  {"n", 2},
                                                  {"stream", true},
                                                  {"stream_options", {{"include_usage", true}}}});
  ASSERT_EQ(chunks.size(), 2u * 5 + 1);
  const json& last = chunks.back();
  EXPECT_TRUE(last["choices"].empty());
  const json whole =
      post(server, "/v1/chat/completions",
           {{"messages", {{{"role", "user"}, {"content", "Hello"}}}}, {"max_tokens", 5}, {"ignore_eos", true}}, 200);
  EXPECT_EQ(last["usage"]["prompt_tokens"], whole["usage"]["prompt_tokens"]);
  EXPECT_EQ(last["usage"]["completion_tokens"], 10);  // 2 choices × 5 tokens
  EXPECT_EQ(last["usage"]["total_tokens"], whole["usage"]["prompt_tokens"].get<int>() + 10);
  for (const json& chunk : chunks) {
    EXPECT_EQ(chunk["system_fingerprint"], "minigen-f32-kv-f32");
    EXPECT_EQ(chunk["id"], chunks.front()["id"]);
    if (&chunk != &last) {
      EXPECT_FALSE(chunk.contains("usage"));
    }
  }
  EXPECT_EQ(whole["system_fingerprint"], "minigen-f32-kv-f32");
  // Without stream_options there is no usage chunk: one chunk per token.
  EXPECT_EQ(stream_chunks(server, "/v1/completions",
                          {{"prompt", kCompletionPrompt}, {"max_tokens", 3}, {"ignore_eos", true}, {"stream", true}})
                .size(),
            3u);
}

// "seed": -1 asks for a random seed (llama.cpp's LLAMA_DEFAULT_SEED): each request draws its own, the response
// names it, and sending that seed again gives the same answer. Other negative seeds are a 400 naming "seed" (they
// used to wrap silently to 2^64 − 1 …).
TEST(OpenAiFields, SeedMinusOneIsRandomAndReportedOtherNegativeSeedsAre400) {
  LiveServer server;
  const json sampled = {{"prompt", kCompletionPrompt}, {"max_tokens", 12}, {"temperature", 1.0}, {"ignore_eos", true}};
  json random = sampled;
  random["seed"] = -1;
  const json first = post(server, "/v1/completions", random, 200);
  const json second = post(server, "/v1/completions", random, 200);
  ASSERT_TRUE(first["seed"].is_number_unsigned()) << first.dump();
  EXPECT_NE(first["seed"], second["seed"]);
  json repeated = sampled;
  repeated["seed"] = first["seed"];
  const json again = post(server, "/v1/completions", repeated, 200);
  EXPECT_EQ(again["seed"], first["seed"]);
  EXPECT_EQ(again["choices"][0]["text"], first["choices"][0]["text"]);

  json largest = sampled;
  largest["seed"] = 18446744073709551615ULL;
  EXPECT_EQ(post(server, "/v1/completions", largest, 200)["seed"], 18446744073709551615ULL);
  json none = sampled;
  EXPECT_EQ(post(server, "/v1/completions", none, 200)["seed"], 0);
  largest["stream"] = true;
  for (const json& chunk : stream_chunks(server, "/v1/completions", largest)) {
    EXPECT_EQ(chunk["seed"], 18446744073709551615ULL);
  }

  for (const json& bad : {json(-2), json(INT64_MIN), json(1.5), json("7"), json(true)}) {
    json body = sampled;
    body["seed"] = bad;
    const json error = post(server, "/v1/completions", body, 400)["error"];
    EXPECT_EQ(error["param"], "seed") << bad.dump();
    EXPECT_EQ(error["message"], "'seed' must be an integer in [0, 18446744073709551615], or -1 for a random seed");
  }
}

}  // namespace
}  // namespace minigen
