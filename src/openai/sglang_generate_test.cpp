// SGLang's /generate on minigen serve, over real HTTP, called the way MiniMind's SGLangRolloutEngine calls it
// (trainer/rollout_engine.py): prompts with their left padding stripped, each repeated G times, stop_token_ids
// [eos], return_logprob — and the logprobs checked against the model's own raw logits.
#include "openai/sglang_generate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
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

// SGLang's streaming: each event one sequence's result so far (cumulative text, ids and logprobs, "index" = its place
// in the rollout), finish_reason null until its last event, then data: [DONE]; the last events are the whole answer.
TEST(SglangGenerate, AStreamedRolloutEndsWithTheSameResultsAsTheWholeOne) {
  LiveServer server;
  const auto prompts = chat_prompts(*server.loaded.tokenizer);
  json body = rollout_body(prompts, 2, 0.8, 12, 21);
  const json whole = post(server, "/generate", body, 200);
  body["stream"] = true;
  std::string received;
  auto result = testing::post_streaming(server, "/generate", body, [&](const char* data, std::size_t size) {
    received.append(data, size);
    return true;
  });
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 200);
  std::vector<json> last(whole.size());
  std::vector<int> events(whole.size(), 0);
  bool done = false;
  for (std::size_t end; (end = received.find("\n\n")) != std::string::npos; received.erase(0, end + 2)) {
    const std::string event = received.substr(0, end);
    if (event == "data: [DONE]") {
      done = true;
      continue;
    }
    if (event.rfind("data: ", 0) != 0) continue;  // keep-alive comments
    ASSERT_FALSE(done) << "an event after [DONE]";
    const json update = json::parse(event.substr(6));
    const std::size_t index = update["index"];
    ASSERT_LT(index, whole.size());
    if (!last[index].is_null()) {  // cumulative: what was sent stays, and nothing comes after the end
      EXPECT_TRUE(last[index]["meta_info"]["finish_reason"].is_null());
      const std::string before = last[index]["text"];
      EXPECT_EQ(update["text"].get<std::string>().substr(0, before.size()), before);
      EXPECT_GE(update["output_ids"].size(), last[index]["output_ids"].size());
    }
    last[index] = update;
    ++events[index];
  }
  EXPECT_TRUE(done);
  for (std::size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(events[i], static_cast<int>(whole[i]["output_ids"].size()));  // one event per token
    EXPECT_EQ(last[i]["text"], whole[i]["text"]);
    EXPECT_EQ(last[i]["output_ids"], whole[i]["output_ids"]);
    EXPECT_EQ(last[i]["meta_info"]["output_token_logprobs"], whole[i]["meta_info"]["output_token_logprobs"]);
    EXPECT_EQ(last[i]["meta_info"]["finish_reason"], whole[i]["meta_info"]["finish_reason"]);
  }
  EXPECT_EQ(server.settled().kv_blocks_used, 0);
}

// Pearson's χ² of observed counts against expected probabilities; bins with an expected count under 5 are pooled.
struct ChiSquare {
  double statistic = 0;
  int degrees_of_freedom = 0;
};

ChiSquare chi_square(const std::vector<int>& observed, const std::vector<double>& expected_probability, int draws) {
  ChiSquare result;
  double pooled_expected = 0;
  double pooled_observed = 0;
  int bins = 0;
  for (std::size_t token = 0; token < observed.size(); ++token) {
    const double expected = expected_probability[token] * draws;
    if (expected < 5) {
      pooled_expected += expected;
      pooled_observed += observed[token];
      continue;
    }
    result.statistic += (observed[token] - expected) * (observed[token] - expected) / expected;
    ++bins;
  }
  if (pooled_expected > 0) {
    result.statistic += (pooled_observed - pooled_expected) * (pooled_observed - pooled_expected) / pooled_expected;
    ++bins;
  }
  result.degrees_of_freedom = bins - 1;
  return result;
}

// The χ² value a fit exceeds with probability 0.001 (Wilson–Hilferty's approximation, z = 3.09).
double chi_square_critical(int degrees_of_freedom) {
  const double k = degrees_of_freedom;
  const double term = 1 - 2 / (9 * k) + 3.09 * std::sqrt(2 / (9 * k));
  return k * term * term * term;
}

// The first tokens of 1,000 copies of a prompt at temperature 0.8 with SGLang's default sampler (top_p 1, top_k off)
// follow softmax(logits / 0.8) of the model's own logits — and not softmax(logits), which the same counts reject.
TEST(SglangGenerate, FirstTokensAtTemperature08FollowTheTemperedDistribution) {
  LiveServer server;
  const std::vector<int> prompt = encode_base_prompt(*server.loaded.tokenizer, "The");
  constexpr int kDraws = 1000;
  const json results = post(server, "/generate", rollout_body({prompt}, kDraws, 0.8, 1, 8), 200);
  ASSERT_EQ(results.size(), static_cast<std::size_t>(kDraws));
  const int vocab = server.loaded.model->config.vocab_size;
  std::vector<int> counts(static_cast<std::size_t>(vocab), 0);
  for (const json& result : results) ++counts.at(result["output_ids"][0].get<std::size_t>());

  const std::vector<float> logits = testing::prompt_logits(*server.loaded.model, prompt);
  const float* last = logits.data() + (prompt.size() - 1) * static_cast<std::size_t>(vocab);
  auto softmax = [&](double temperature) {
    std::vector<double> p(static_cast<std::size_t>(vocab));
    const double largest = *std::max_element(last, last + vocab);
    double sum = 0;
    for (int i = 0; i < vocab; ++i) sum += p[i] = std::exp((last[i] - largest) / temperature);
    for (double& x : p) x /= sum;
    return p;
  };
  const ChiSquare tempered = chi_square(counts, softmax(0.8), kDraws);
  ASSERT_GE(tempered.degrees_of_freedom, 10) << "too peaked a distribution to test";
  EXPECT_LT(tempered.statistic, chi_square_critical(tempered.degrees_of_freedom))
      << "df " << tempered.degrees_of_freedom;
  const ChiSquare untempered = chi_square(counts, softmax(1.0), kDraws);
  EXPECT_GT(untempered.statistic, chi_square_critical(untempered.degrees_of_freedom))
      << "df " << untempered.degrees_of_freedom;
  std::printf("χ² at T 0.8: %.1f (df %d, critical %.1f); against T 1: %.1f (df %d, critical %.1f)\n",
              tempered.statistic, tempered.degrees_of_freedom, chi_square_critical(tempered.degrees_of_freedom),
              untempered.statistic, untempered.degrees_of_freedom, chi_square_critical(untempered.degrees_of_freedom));
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
      {{{"input_ids", {1, 2}}, {"stream", "yes"}}, "stream"},
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

// A hostile request is refused without waiting for the work in flight, and the rollout it met runs on untouched.
TEST(SglangGenerate, AHostileRequestIsRefusedWhileARolloutRuns) {
  LiveServer server;
  const std::vector<int> prompt = encode_base_prompt(*server.loaded.tokenizer, "The");
  std::atomic<bool> rollout_done{false};
  json rollout;
  std::thread roller([&] {
    json body = rollout_body({prompt}, 4, 0.8, 400, 3);
    body["sampling_params"]["ignore_eos"] = true;
    rollout = post(server, "/generate", body, 200);
    rollout_done = true;
  });
  while (server.stack.engine().status().running == 0 && !rollout_done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::string many = "{\"input_ids\": [";
  for (int i = 0; i < 100000; ++i) many += i == 0 ? "[1]" : ",[1]";
  many += "]}";
  auto refused = server.client().Post("/generate", many, "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400);
  EXPECT_FALSE(rollout_done) << "the 400 waited for the rollout";
  auto nan = server.client().Post("/generate", R"({"input_ids": [1], "sampling_params": {"temperature": NaN}})",
                                  "application/json");
  ASSERT_TRUE(nan);
  EXPECT_EQ(nan->status, 400);
  EXPECT_FALSE(rollout_done) << "the 400 waited for the rollout";
  roller.join();
  ASSERT_EQ(rollout.size(), 4u);
  for (const json& result : rollout) EXPECT_EQ(result["output_ids"].size(), 400u);
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
