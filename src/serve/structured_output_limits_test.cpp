// Issue 25 over real sockets: a schema can no longer freeze generation for everyone. Repeated alternatives collapse,
// a schema past the compile budget is a 400 naming its part, a schema whose mask is over the step budget ends its
// own request while the request beside it finishes with its own tokens, and a logit_bias that leaves nothing to
// sample is the client's 400, not the server's 500.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "serve/live_server_test_util.h"

namespace minigen {
namespace {

using nlohmann::json;
using testing::LiveServer;
using testing::post;

json schema_request(const json& schema, int max_tokens = 8) {
  return {{"messages", {{{"role", "user"}, {"content", "Give me JSON."}}}},
          {"max_tokens", max_tokens},
          {"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", schema}}}}}};
}

// Inside the compile budget (1,000 alternatives), but all 1,000 strings stay alive inside the string, so every mask
// there would walk the vocabulary 1,000 times.
json thousand_strings() {
  json strings = json::array();
  for (int i = 0; i < 1000; ++i) strings.push_back({{"type", "string"}, {"maxLength", 100 + i}});
  return {{"anyOf", strings}};
}

// Runs `heavy` in a loop on another thread (at least once) while a plain completion is posted three times beside
// it; expects the plain text to be what it is alone. Returns how many times `heavy` ran.
int run_beside_a_plain_request(LiveServer& server, const std::function<void()>& heavy) {
  const json plain = {{"prompt", "In the beginning"}, {"max_tokens", 60}, {"ignore_eos", true}, {"seed", 5}};
  const std::string alone = post(server, "/v1/completions", plain, 200)["choices"][0]["text"];
  std::atomic<bool> done{false};
  std::atomic<int> runs{0};
  std::thread looping([&] {
    while (!done || runs == 0) {
      heavy();
      ++runs;
    }
  });
  std::string beside;
  for (int i = 0; i < 3; ++i) beside = post(server, "/v1/completions", plain, 200)["choices"][0]["text"];
  done = true;
  looping.join();
  EXPECT_EQ(beside, alone);
  return runs;
}

// It used to take 151 s (19 s a token) and hold every other request; the 20,000 repeats are one string now.
TEST(StructuredOutputLimits, TwentyThousandRepeatedTypesAreOneStringAndAreAnswered) {
  LiveServer server;
  const json answer =
      post(server, "/v1/chat/completions", schema_request({{"type", std::vector<std::string>(20000, "string")}}), 200);
  const std::string content = answer["choices"][0]["message"]["content"];
  EXPECT_EQ(content.substr(0, 1), "\"");
  EXPECT_EQ(answer["usage"]["completion_tokens"].get<int>() <= 8, true);
}

TEST(StructuredOutputLimits, TwentyThousandDistinctAlternativesAre400NamingThePartOfTheSchema) {
  LiveServer server;
  json consts = json::array();
  json values = json::array();
  for (int i = 0; i < 20000; ++i) {
    const std::string number = std::to_string(i);
    consts.push_back({{"const", "k" + number}});
    values.push_back("value-" + number);
  }
  const json by_any_of = post(server, "/v1/chat/completions",
                              schema_request({{"type", "object"}, {"properties", {{"a", {{"anyOf", consts}}}}}}), 400);
  EXPECT_EQ(by_any_of["error"]["message"],
            "response_format.json_schema.schema: at /properties/a/anyOf: more than 1024 distinct alternatives, the "
            "most one choice may have");
  EXPECT_EQ(by_any_of["error"]["param"], "response_format");
  const json by_enum = post(server, "/v1/chat/completions", schema_request({{"enum", values}}), 400);
  EXPECT_NE(by_enum["error"]["message"].get<std::string>().find("at /enum: more than 1024"), std::string::npos);
  // The same budget for a forced tool call's parameters (1,025 values: 20,000 would not fit the prompt's context).
  const json few_too_many(values.begin(), values.begin() + 1025);
  const json tool = post(
      server, "/v1/chat/completions",
      {{"messages", {{{"role", "user"}, {"content", "x"}}}},
       {"tools",
        {{{"type", "function"},
          {"function",
           {{"name", "f"}, {"parameters", {{"type", "object"}, {"properties", {{"k", {{"enum", few_too_many}}}}}}}}}}}},
       {"tool_choice", "required"}},
      400);
  EXPECT_NE(tool["error"]["message"].get<std::string>().find("at /properties/k/enum"), std::string::npos)
      << tool.dump();
  EXPECT_EQ(server.settled().kv_blocks_used, 0);
}

// The heavy schema's request ends with a 400 (whole) or an error event (streamed) at the state whose mask is over
// budget, and a plain request running beside it all the while gets exactly the tokens it gets alone.
TEST(StructuredOutputLimits, AMaskOverBudgetEndsItsOwnRequestAndTheRequestBesideItFinishesWithItsTokens) {
  LiveServer server;
  const int heavy_requests = run_beside_a_plain_request(server, [&] {
    const json failed = post(server, "/v1/chat/completions", schema_request(thousand_strings(), 16), 400);
    EXPECT_NE(failed["error"]["message"].get<std::string>().find("(1000 parses alive at once)"), std::string::npos)
        << failed.dump();
    EXPECT_EQ(failed["error"]["type"], "invalid_request_error");
  });
  EXPECT_GE(heavy_requests, 1);

  json streamed = schema_request(thousand_strings(), 16);
  streamed["stream"] = true;
  std::string received;
  testing::post_streaming(server, "/v1/chat/completions", streamed, [&](const char* data, std::size_t size) {
    received.append(data, size);
    return true;
  });
  EXPECT_NE(received.find("\"type\":\"invalid_request_error\""), std::string::npos) << received;
  EXPECT_NE(received.find("matcher steps"), std::string::npos) << received;
  EXPECT_EQ(server.settled().kv_blocks_used, 0);
}

// Inside both budgets, a 1,000-value enum's first masks take 336,000 matcher steps, the allowance of 28 scheduler
// steps: they are computed in slices between its neighbours' tokens. The answer is still one of the values, and
// the plain request beside them gets its tokens.
TEST(StructuredOutputLimits, AThousandValueEnumIsAnsweredInSlicesWithOneOfItsValuesAndItsNeighbourKeepsItsTokens) {
  LiveServer server;
  json values = json::array();
  for (int i = 0; i < 1000; ++i) values.push_back("value-" + std::to_string(i));
  const int answered = run_beside_a_plain_request(server, [&] {
    const json answer = post(server, "/v1/chat/completions", schema_request({{"enum", values}}, 40), 200);
    const std::string content = answer["choices"][0]["message"]["content"];
    EXPECT_NE(std::find(values.begin(), values.end(), json::parse(content)), values.end()) << content;
    EXPECT_EQ(answer["choices"][0]["finish_reason"], "stop");
  });
  EXPECT_GE(answered, 1);
  EXPECT_EQ(server.settled().kv_blocks_used, 0);
}

TEST(StructuredOutputLimits, ALogitBiasThatLeavesNothingToSampleIsTheClients400) {
  LiveServer server;
  const int vocab = server.loaded.model->config.vocab_size;
  json all = json::object();
  for (int id = 0; id < vocab; ++id) all[std::to_string(id)] = -100;
  const json banned = post(server, "/v1/completions", {{"prompt", "x"}, {"logit_bias", all}}, 400);
  EXPECT_EQ(banned["error"]["message"], "'logit_bias' bans every token: all " + std::to_string(vocab) +
                                            " ids have -100, so nothing is left to sample");
  EXPECT_EQ(banned["error"]["param"], "logit_bias");
  all.erase("300");  // one token left: fine, and it is the only one drawn
  const json one_left = post(server, "/v1/completions",
                             {{"prompt", "x"}, {"logit_bias", all}, {"max_tokens", 3}, {"ignore_eos", true}}, 200);
  EXPECT_EQ(one_left["choices"][0]["text"], server.loaded.tokenizer->decode(std::vector<int>{300, 300, 300}, false));
  EXPECT_EQ(one_left["usage"]["completion_tokens"], 3);

  // Only at sampling time: the grammar allows the tokens that begin "true" or "false", and the bias bans them all.
  const auto vocabulary =
      TokenVocabulary::from_tokenizer(*server.loaded.tokenizer, vocab, server.loaded.model->config.eos_token_id);
  json openings = json::object();
  for (int id = 0; id < vocab; ++id) {
    const std::string& bytes = vocabulary->token_bytes(id);
    if (!bytes.empty() && (std::string("true").starts_with(bytes) || std::string("false").starts_with(bytes))) {
      openings[std::to_string(id)] = -100;
    }
  }
  json request = schema_request({{"type", "boolean"}});
  request["logit_bias"] = openings;
  const json at_step = post(server, "/v1/chat/completions", request, 400);
  EXPECT_EQ(at_step["error"]["message"],
            "logit_bias bans every token the grammar allows at this step: nothing is left to sample");
  EXPECT_EQ(server.settled().kv_blocks_used, 0);
}

}  // namespace
}  // namespace minigen
