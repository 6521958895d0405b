// SGLang's /generate on minigen serve, over real HTTP, called the way MiniMind's SGLangRolloutEngine calls it
// (trainer/rollout_engine.py): prompts with their left padding stripped, each repeated G times, stop_token_ids
// [eos], return_logprob — and the logprobs checked against the model's own raw logits.
#include "openai/sglang_generate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/prompt_logits_test_util.h"
#include "serve/live_server_test_util.h"
#include "tokenizer/chat_template.h"

namespace minigen {
namespace {

using nlohmann::json;
using testing::LiveServer;
using testing::post;

// What SGLangRolloutEngine.rollout() sends: every prompt num_generations times, in order.
json rollout_body(const std::vector<std::vector<int>>& prompts, int generations, double temperature, int max_new_tokens,
                  int seed) {
  json input_ids = json::array();
  for (const auto& prompt : prompts) {
    for (int g = 0; g < generations; ++g) input_ids.push_back(prompt);
  }
  return {{"input_ids", input_ids},
          {"sampling_params",
           {{"temperature", temperature},
            {"max_new_tokens", max_new_tokens},
            {"stop_token_ids", {2}},
            {"sampling_seed", seed}}},
          {"return_logprob", true}};
}

std::vector<std::vector<int>> chat_prompts(const Tokenizer& tokenizer) {
  std::vector<std::vector<int>> prompts;
  for (const char* question : {"What does 'river' mean?", "What is a computer?"}) {
    const std::vector<ChatMessage> messages = {{"user", question}};
    prompts.push_back(encode_chatml(tokenizer, messages, true, false));
  }
  return prompts;
}

TEST(SglangGenerate, MiniMindRolloutHasOneRawLogprobPerTokenAndRepeatsUnderItsSeed) {
  LiveServer server;
  const auto prompts = chat_prompts(*server.loaded.tokenizer);
  const int generations = 4;
  const json body = rollout_body(prompts, generations, 0.8, 24, 11);
  const json results = post(server, "/generate", body, 200);
  ASSERT_TRUE(results.is_array());
  ASSERT_EQ(results.size(), prompts.size() * generations);
  for (std::size_t k = 0; k < prompts.size(); ++k) {
    std::set<std::vector<int>> distinct;
    for (int g = 0; g < generations; ++g) {
      const json& result = results[k * generations + g];
      const json& meta = result["meta_info"];
      const std::vector<int> ids = meta["output_ids"].get<std::vector<int>>();
      EXPECT_EQ(result["output_ids"], meta["output_ids"]);
      ASSERT_FALSE(ids.empty());
      distinct.insert(ids);
      EXPECT_EQ(meta["prompt_tokens"], prompts[k].size());
      EXPECT_EQ(meta["completion_tokens"], ids.size());
      // One logprob per token, the ending eos included: MiniMind pads with 0.0 when there are fewer.
      const json& logprobs = meta["output_token_logprobs"];
      ASSERT_EQ(logprobs.size(), ids.size());
      const std::vector<double> expected = testing::completion_logprobs(*server.loaded.model, prompts[k], ids);
      for (std::size_t t = 0; t < ids.size(); ++t) {
        EXPECT_EQ(logprobs[t][1], ids[t]);
        EXPECT_TRUE(logprobs[t][2].is_null());
        EXPECT_NEAR(logprobs[t][0].get<double>(), expected[t], 1e-4) << "prompt " << k << " copy " << g << " t " << t;
      }
      const json& finish = meta["finish_reason"];
      if (ids.back() == 2) {
        EXPECT_EQ(finish, json({{"type", "stop"}, {"matched", 2}}));
      } else {
        EXPECT_EQ(ids.size(), 24u);
        EXPECT_EQ(finish, json({{"type", "length"}, {"length", 24}}));
      }
      EXPECT_EQ(meta["sampling_seed"], 11);
    }
    EXPECT_GT(distinct.size(), 1u) << "the G copies of prompt " << k << " all drew the same tokens";
  }
  // The same rollout under the same seed: the same tokens and the same numbers.
  const json again = post(server, "/generate", body, 200);
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(again[i]["output_ids"], results[i]["output_ids"]) << i;
    EXPECT_EQ(again[i]["meta_info"]["output_token_logprobs"], results[i]["meta_info"]["output_token_logprobs"]);
  }
  // The second time the prompts' full blocks come from the prefix cache.
  EXPECT_GE(again[0]["meta_info"]["cached_tokens"].get<int>(), 16);
  EXPECT_EQ(server.settled().kv_blocks_used, 0);
}

TEST(SglangGenerate, GreedyIsMiniMindsGreedyAndOneTextPromptAnswersOneObject) {
  LiveServer server;
  const std::string text = "In the beginning";
  SamplingParams greedy;
  greedy.greedy = true;
  const std::vector<int> expected = testing::engine_token_ids(server, text, greedy, 12);
  const std::vector<int> prompt = encode_base_prompt(*server.loaded.tokenizer, text);
  const json result = post(
      server, "/generate",
      {{"input_ids", prompt}, {"sampling_params", {{"temperature", 0}, {"max_new_tokens", 12}, {"ignore_eos", true}}}},
      200);
  ASSERT_TRUE(result.is_object());
  EXPECT_EQ(result["output_ids"].get<std::vector<int>>(), expected);
  EXPECT_EQ(result["text"], server.loaded.tokenizer->decode(expected, true));
  EXPECT_FALSE(result["meta_info"].contains("output_token_logprobs"));
  // "text" is encoded without a bos, as SGLang's tokenizer call does; a stop string ends the text before it.
  const json stopped = post(server, "/generate",
                            {{"text", "The river"},
                             {"sampling_params", {{"temperature", 0}, {"max_new_tokens", 40}, {"stop", " "}}},
                             {"rid", "r1"}},
                            200);
  EXPECT_EQ(stopped["meta_info"]["id"], "r1");
  EXPECT_EQ(stopped["meta_info"]["prompt_tokens"], server.loaded.tokenizer->encode("The river").size());
  if (stopped["meta_info"]["finish_reason"]["type"] == "stop") {
    EXPECT_EQ(stopped["meta_info"]["finish_reason"]["matched"], " ");
    EXPECT_EQ(stopped["text"].get<std::string>().find(' '), std::string::npos);
  }
}

TEST(SglangGenerate, TopLogprobsAndTheSamplingDistributionOnRequest) {
  LiveServer server;
  const std::vector<int> prompt = encode_base_prompt(*server.loaded.tokenizer, "The river");
  const json raw = post(server, "/generate",
                        {{"input_ids", prompt},
                         {"sampling_params", {{"temperature", 0}, {"max_new_tokens", 4}, {"ignore_eos", true}}},
                         {"return_logprob", true},
                         {"top_logprobs_num", 3},
                         {"return_text_in_logprobs", true}},
                        200);
  const json& meta = raw["meta_info"];
  ASSERT_EQ(meta["output_top_logprobs"].size(), 4u);
  for (std::size_t t = 0; t < 4; ++t) {
    const json& top = meta["output_top_logprobs"][t];
    ASSERT_EQ(top.size(), 3u);
    // Greedy: the chosen token is the most likely raw one, with the same number.
    EXPECT_EQ(top[0][1], meta["output_ids"][t]);
    EXPECT_EQ(top[0][0], meta["output_token_logprobs"][t][0]);
    EXPECT_GE(top[0][0].get<double>(), top[1][0].get<double>());
    EXPECT_TRUE(meta["output_token_logprobs"][t][2].is_string());
  }
  // The sampling distribution at top_k 1: one candidate left, probability 1.
  const json sampled = post(server, "/generate",
                            {{"input_ids", prompt},
                             {"sampling_params", {{"temperature", 0.8}, {"top_k", 1}, {"max_new_tokens", 3}}},
                             {"return_logprob", true},
                             {"logprob_distribution", "sampling"}},
                            200);
  for (const json& item : sampled["meta_info"]["output_token_logprobs"]) EXPECT_DOUBLE_EQ(item[0].get<double>(), 0.0);
}

TEST(SglangGenerate, HostileRequestsGetOne400NamingTheField) {
  LiveServer server;
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"input_ids", {1, 2}}, {"sampling_params", {{"temprature", 1}}}}, "temprature"},
      {{{"input_ids", {1, 2}}, {"frobnicate", true}}, "frobnicate"},
      {{{"input_ids", {1, 6400}}}, "input_ids"},
      {{{"input_ids", {1, -1}}}, "input_ids"},
      {{{"text", "a"}, {"input_ids", {1}}}, "input_ids"},
      {{{"input_ids", {1, 2}}, {"sampling_params", {{"n", 100000}}}}, "n"},
      {{{"input_ids", {{1, 2}, {3, 4}}}, {"sampling_params", {{"n", 600}}}}, "n"},
      {{{"input_ids", {1, 2}}, {"sampling_params", {{"top_k", 0}}}}, "top_k"},
      {{{"input_ids", {1, 2}}, {"sampling_params", {{"temperature", -0.5}}}}, "temperature"},
      {{{"input_ids", {1, 2}}, {"sampling_params", {{"max_new_tokens", 0}}}}, "max_new_tokens"},
      {{{"input_ids", {1, 2}}, {"sampling_params", {{"stop_token_ids", {99999}}}}}, "stop_token_ids"},
      {{{"input_ids", {1, 2}}, {"sampling_params", {{"sampling_seed", -3}}}}, "sampling_seed"},
      {{{"input_ids", {1, 2}}, {"stream", true}}, "stream"},
      {{{"input_ids", {1, 2}}, {"logprob_distribution", "cooked"}}, "logprob_distribution"},
      {{{"input_ids", {1, 2}}, {"sampling_params", {{"json_schema", "{not json"}}}}, "json_schema"},
  };
  for (const auto& [body, param] : cases) {
    const json error = post(server, "/generate", body, 400);
    EXPECT_EQ(error["error"]["param"], param) << body.dump();
  }
  // 100,000 prompts in one request, and a NaN temperature (not JSON): one 400 each, at once.
  std::string many = "{\"input_ids\": [";
  for (int i = 0; i < 100000; ++i) many += i == 0 ? "[1]" : ",[1]";
  many += "]}";
  auto client = server.client();
  auto huge = client.Post("/generate", many, "application/json");
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->status, 400);
  EXPECT_EQ(json::parse(huge->body)["error"]["param"], "input_ids");
  auto nan =
      client.Post("/generate", R"({"input_ids": [1, 2], "sampling_params": {"temperature": NaN}})", "application/json");
  ASSERT_TRUE(nan);
  EXPECT_EQ(nan->status, 400);
  // Beyond the context: the scheduler's own check, a 400 too.
  const json long_request =
      post(server, "/generate", {{"input_ids", {1, 2}}, {"sampling_params", {{"max_new_tokens", 1 << 20}}}}, 400);
  EXPECT_NE(long_request["error"]["message"].get<std::string>().find("context"), std::string::npos)
      << long_request.dump();
  EXPECT_EQ(server.settled().kv_blocks_used, 0);
}

TEST(SglangGenerate, TheSmallRoutesAnswerAsSglangsClientsExpect) {
  LiveServer server;
  auto client = server.client();
  auto health = client.Get("/health_generate");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto info = client.Get("/get_model_info");
  ASSERT_TRUE(info);
  const json model = json::parse(info->body);
  EXPECT_EQ(model["model_path"], "minigen-tiny-sft");
  EXPECT_EQ(model["is_generation"], true);
  EXPECT_TRUE(model.contains("weight_version"));
  auto server_info = client.Get("/get_server_info");
  ASSERT_TRUE(server_info);
  EXPECT_EQ(json::parse(server_info->body)["kv_block_tokens"], 16);
  // A rollout fills the prefix cache; /flush_cache (no body, as MiniMind posts it) empties it.
  post(server, "/generate",
       {{"input_ids", std::vector<int>(40, 7)}, {"sampling_params", {{"max_new_tokens", 2}, {"temperature", 0}}}}, 200);
  server.settled();
  EXPECT_GT(server.stack.blocks().cached_blocks(), 0);
  auto flushed = client.Post("/flush_cache", "", "text/plain");
  ASSERT_TRUE(flushed);
  EXPECT_EQ(flushed->status, 200);
  EXPECT_EQ(server.stack.blocks().cached_blocks(), 0);
  auto wrong_method = client.Get("/generate");
  ASSERT_TRUE(wrong_method);
  EXPECT_EQ(wrong_method->status, 405);
}

TEST(SglangGenerate, NativeRoutesNeedTheApiKeyWhenOneIsSet) {
  ApiServerOptions api;
  api.api_key = "secret";
  LiveServer server(64, 256, api);
  auto client = server.client();
  auto refused = client.Post("/generate", R"({"input_ids": [1, 2]})", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  auto flush = client.Post("/flush_cache", "", "text/plain");
  ASSERT_TRUE(flush);
  EXPECT_EQ(flush->status, 401);
  httplib::Headers headers = {{"Authorization", "Bearer secret"}};
  auto allowed = client.Post("/generate", headers, R"({"input_ids": [1, 2], "sampling_params": {"max_new_tokens": 2}})",
                             "application/json");
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
  auto health = client.Get("/health_generate");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

}  // namespace
}  // namespace minigen
