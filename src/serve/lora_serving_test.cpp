// serve with LoRA adapters, over real HTTP: requests for two adapters and for the base model, sharing one batch,
// each answer exactly what generate answers alone with that adapter (what `minigen generate --lora FILE` prints);
// the prefix cache never hands one adapter's blocks to another; the admin routes load and unload adapters only
// behind the API key, and an adapter unloaded mid-request finishes that request unchanged.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/lora_loader.h"
#include "serve/live_server_test_util.h"

namespace minigen {
namespace {

using nlohmann::json;
using testing::LiveServer;
using testing::post;

const std::filesystem::path kLoraDir = std::filesystem::path(MINIGEN_TEST_DATA_DIR) / "lora";
// Two adapters for the shipped tiny model's shape, in the two formats people have: MiniMind's save_lora and PEFT.
const std::filesystem::path kMiniMindAdapter = kLoraDir / "tiny_r4.pth";
const std::filesystem::path kPeftAdapter = kLoraDir / "tiny_peft_all_r4";
// Longer than two KV blocks, so the prefix cache has full blocks it could share.
const std::string kAdapterPrompt =
    "In the beginning God created the heaven and the earth. And the earth was without form, and void; and darkness "
    "was upon the face of the deep.";
constexpr int kMaxTokens = 24;

// What generate gives alone, greedy, for kAdapterPrompt with the model running `adapter` (null: none) — the path of
// `minigen generate --lora FILE`, which sets the model's own adapter.
std::string generate_alone(LiveServer& server, std::shared_ptr<const LoraAdapter> adapter) {
  Model model = *server.loaded.model;
  model.adapter = std::move(adapter);
  ThreadPool pool(1);
  Transformer transformer(model, pool);
  GenerateOptions options;
  options.max_new_tokens = kMaxTokens;
  options.ignore_eos = true;
  options.sampling.temperature = 0;
  const std::vector<std::vector<int>> prompts = {encode_base_prompt(*server.loaded.tokenizer, kAdapterPrompt)};
  return server.loaded.tokenizer->decode(generate(transformer, prompts, options).sequences[0].token_ids, true);
}

json completion(const std::string& model, bool use_cache = true) {
  json body = {{"prompt", kAdapterPrompt},
               {"max_tokens", kMaxTokens},
               {"temperature", 0},
               {"ignore_eos", true},
               {"use_cache", use_cache}};
  if (!model.empty()) body["model"] = model;
  return body;
}

std::shared_ptr<const LoraAdapter> read_adapter(LiveServer& server, const std::filesystem::path& path) {
  return load_lora_adapter(path, server.loaded.model->config);
}

TEST(LoraServing, EachRowOfAMixedBatchAnswersWhatGenerateAnswersAloneWithItsAdapter) {
  LiveServer server;
  server.stack.adapters().load("a", kMiniMindAdapter);
  server.stack.adapters().load("b", kPeftAdapter);
  const std::map<std::string, std::string> expected = {
      {"minigen-tiny-sft", generate_alone(server, nullptr)},
      {"a", generate_alone(server, read_adapter(server, kMiniMindAdapter))},
      {"b", generate_alone(server, read_adapter(server, kPeftAdapter))}};
  // The adapters change the answer, so a server that ran the base weights for them would fail below.
  EXPECT_NE(expected.at("a"), expected.at("minigen-tiny-sft"));
  EXPECT_NE(expected.at("b"), expected.at("minigen-tiny-sft"));
  EXPECT_NE(expected.at("a"), expected.at("b"));

  // Alone first (each fills the prefix cache under its own root), then nine at once: every name three times, with
  // the prefix cache (borrowing the blocks the lone runs left), without it (use_cache false: every step re-feeds the
  // whole sequence) and, for the base, with no "model" at all.
  for (const auto& [name, text] : expected) {
    const json answer = post(server, "/v1/completions", completion(name), 200);
    EXPECT_EQ(answer["choices"][0]["text"], text) << name;
    EXPECT_EQ(answer["model"], name);
  }
  std::vector<std::pair<std::string, json>> requests;
  for (const auto& [name, text] : expected) {
    requests.emplace_back(name, completion(name));
    requests.emplace_back(name, completion(name, /*use_cache=*/false));
    requests.emplace_back(name, completion(name == "minigen-tiny-sft" ? "" : name));
  }
  std::vector<std::string> answers(requests.size());
  std::vector<std::thread> clients;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    clients.emplace_back(
        [&, i] { answers[i] = post(server, "/v1/completions", requests[i].second, 200)["choices"][0]["text"]; });
  }
  for (std::thread& client : clients) client.join();
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(answers[i], expected.at(requests[i].first)) << requests[i].first << " " << requests[i].second.dump();
  }
  EXPECT_EQ(server.settled().kv_blocks_used, 0);
}

TEST(LoraServing, ThePrefixCacheKeepsEachAdaptersBlocksApart) {
  LiveServer server;
  server.stack.adapters().load("a", kMiniMindAdapter);
  const auto cached = [&] { return server.settled().counters.prefix_cached_tokens; };
  const int prompt_tokens = post(server, "/v1/completions", completion(""), 200)["usage"]["prompt_tokens"];
  ASSERT_EQ(cached(), 0);
  // A prompt borrows whole blocks, and never its last token (its logits must be computed).
  const int borrowable = (prompt_tokens - 1) / 16 * 16;
  ASSERT_GE(borrowable, 32);
  // The same prompt for the adapter: the base's two full blocks hold other K and V, so nothing is borrowed …
  post(server, "/v1/completions", completion("a"), 200);
  EXPECT_EQ(cached(), 0);
  // … while the adapter's second request borrows its own first one's, and the base's its own.
  post(server, "/v1/completions", completion("a"), 200);
  EXPECT_EQ(cached(), borrowable);
  post(server, "/v1/completions", completion(""), 200);
  EXPECT_EQ(cached(), 2 * borrowable);
}

TEST(LoraServing, ModelsListsTheAdaptersAndAnUnknownNameIs404) {
  LiveServer server;
  // Before any adapter is loaded, any name runs the base model, as it always did (clients send their own names).
  EXPECT_EQ(post(server, "/v1/completions", completion("gpt-4o"), 200)["model"], "minigen-tiny-sft");
  server.stack.adapters().load("identity", kMiniMindAdapter);
  const json missing = post(server, "/v1/completions", completion("gpt-4o"), 404);
  EXPECT_EQ(missing["error"]["code"], "model_not_found");
  EXPECT_EQ(missing["error"]["param"], "model");
  EXPECT_NE(missing["error"]["message"].get<std::string>().find("minigen-tiny-sft, identity"), std::string::npos)
      << missing;
  const json wrong_type = post(server, "/v1/completions", json{{"prompt", "x"}, {"model", 7}}, 400);
  EXPECT_EQ(wrong_type["error"]["param"], "model");

  const auto models = server.client().Get("/v1/models");
  ASSERT_TRUE(models);
  const json list = json::parse(models->body)["data"];
  ASSERT_EQ(list.size(), 2u) << list;
  EXPECT_EQ(list[0]["id"], "minigen-tiny-sft");
  EXPECT_TRUE(list[0]["parent"].is_null());
  EXPECT_EQ(list[1]["id"], "identity");
  EXPECT_EQ(list[1]["parent"], "minigen-tiny-sft");
  EXPECT_EQ(list[1]["root"], "tiny_r4.pth");
  EXPECT_EQ(list[1]["lora"]["rank"], 4);
  EXPECT_EQ(list[1]["lora"]["parameters"], 16384);  // 4 layers × (q, o) × 4 · (256 + 256)

  post(server, "/v1/chat/completions",
       json{{"model", "identity"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 2}}, 200);
  const auto metrics = server.client().Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("\nminigen_lora_adapters_loaded 1\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("\nminigen_lora_requests_total{adapter=\"identity\"} 1\n"), std::string::npos)
      << metrics->body;
}

// POST with the API key (or without one when `key` is empty).
httplib::Result admin_post(LiveServer& server, const std::string& path, const json& body, const std::string& key) {
  httplib::Headers headers;
  if (!key.empty()) headers.emplace("Authorization", "Bearer " + key);
  return server.client().Post(path, headers, body.dump(), "application/json");
}

TEST(LoraServing, AdaptersLoadAndUnloadAtRunTimeBehindTheApiKey) {
  ApiServerOptions api;
  api.api_key = "secret";
  api.allow_runtime_lora = true;
  LiveServer server(64, 256, api);
  const json load = {{"lora_name", "c"}, {"lora_path", kMiniMindAdapter.string()}};
  auto refused = admin_post(server, "/v1/load_lora_adapter", load, "");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  auto loaded = admin_post(server, "/v1/load_lora_adapter", load, "secret");
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->status, 200) << loaded->body;
  EXPECT_EQ(json::parse(loaded->body)["id"], "c");
  auto again = admin_post(server, "/v1/load_lora_adapter", load, "secret");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 400);
  EXPECT_NE(again->body.find("already loaded"), std::string::npos) << again->body;

  // Bad requests and hostile files: one clear 400 each, and the server goes on.
  const std::filesystem::path garbage = std::filesystem::temp_directory_path() / "minigen_lora_garbage.pth";
  std::ofstream(garbage) << "PK\x03\x04 this is not a torch zip";
  for (const json& bad : {json{{"lora_name", "d"}}, json{{"lora_name", "d"}, {"lora_path", 3}},
                          json{{"lora_name", "bad name"}, {"lora_path", kMiniMindAdapter.string()}},
                          json{{"lora_name", "minigen-tiny-sft"}, {"lora_path", kMiniMindAdapter.string()}},
                          json{{"lora_name", "d"}, {"lora_path", "/nonexistent/adapter.pth"}},
                          json{{"lora_name", "d"}, {"lora_path", std::string(100'000, 'a')}},
                          json{{"lora_name", "d"}, {"lora_path", garbage.string()}},
                          json{{"lora_name", "d"}, {"lora_path", (kLoraDir / "minimind3_r16.pth").string()}}}) {
    auto answer = admin_post(server, "/v1/load_lora_adapter", bad, "secret");
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, 400) << bad.dump() << " → " << answer->body;
    EXPECT_EQ(json::parse(answer->body)["error"]["type"], "invalid_request_error");
  }
  std::filesystem::remove(garbage);
  const auto too_long = admin_post(server, "/v1/load_lora_adapter",
                                   json{{"lora_name", "d"}, {"lora_path", std::string(4097, 'a')}}, "secret");
  ASSERT_TRUE(too_long);
  EXPECT_EQ(json::parse(too_long->body)["error"]["message"], "'lora_path' is longer than 4096 bytes");

  // A streaming request for c; c is unloaded after its first token, and the request still ends with c's answer.
  const std::string expected = generate_alone(server, read_adapter(server, kMiniMindAdapter));
  json body = completion("c");
  body["stream"] = true;
  std::string received;
  bool unloaded = false;
  httplib::Request request;
  request.method = "POST";
  request.path = "/v1/completions";
  request.body = body.dump();
  request.set_header("Content-Type", "application/json");
  request.set_header("Authorization", "Bearer secret");
  request.content_receiver = [&](const char* data, std::size_t size, uint64_t, uint64_t) {
    received.append(data, size);
    if (!unloaded && received.find("\"text\"") != std::string::npos) {
      auto gone = admin_post(server, "/v1/unload_lora_adapter", {{"lora_name", "c"}}, "secret");
      EXPECT_TRUE(gone && gone->status == 200);
      unloaded = true;
    }
    return true;
  };
  ASSERT_TRUE(server.client().send(request));
  EXPECT_TRUE(unloaded);
  std::string text;
  for (std::size_t at = 0; (at = received.find("data: {", at)) != std::string::npos;) {
    const std::size_t end = received.find("\n\n", at);
    const json chunk = json::parse(received.substr(at + 6, end - at - 6));
    if (chunk.contains("choices") && !chunk["choices"].empty()) text += chunk["choices"][0]["text"];
    at = end;
  }
  EXPECT_EQ(text, expected);

  auto after = admin_post(server, "/v1/completions", completion("c"), "secret");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200) << "no adapter is left, so an unknown name runs the base model again";
  auto twice = admin_post(server, "/v1/unload_lora_adapter", {{"lora_name", "c"}}, "secret");
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->status, 404);
}

// An adapter load runs beside the serving, not in front of it (issue 46: a 2 GB load answered 400 after 11.8–14.9 s
// and froze /health and every stream meanwhile): with a load held in the middle of reading its file, /health
// answers, a whole streamed completion comes back, and a second load is told to wait (409); released, the load ends
// with 200.
TEST(LoraServing, HealthAndStreamsGoOnWhileAnAdapterLoads) {
  ApiServerOptions api;
  api.api_key = "secret";
  api.allow_runtime_lora = true;
  LiveServer server(64, 256, api);
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  server.stack.adapters().set_file_loader(
      [&started, released](const std::filesystem::path& path, const ModelConfig& config) {
        started.set_value();
        released.wait();
        return load_lora_adapter(path, config);
      });
  int load_status = 0;
  std::thread loading([&] {
    const auto answer = admin_post(server, "/v1/load_lora_adapter",
                                   {{"lora_name", "c"}, {"lora_path", kMiniMindAdapter.string()}}, "secret");
    load_status = answer ? answer->status : -1;
  });
  started.get_future().wait();

  const auto health = server.client().Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  json body = completion("");
  body["stream"] = true;
  const auto streamed = admin_post(server, "/v1/completions", body, "secret");
  ASSERT_TRUE(streamed);
  EXPECT_EQ(streamed->status, 200) << streamed->body;
  EXPECT_NE(streamed->body.find("data: [DONE]"), std::string::npos) << streamed->body;
  const auto second = admin_post(server, "/v1/load_lora_adapter",
                                 {{"lora_name", "d"}, {"lora_path", kMiniMindAdapter.string()}}, "secret");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 409) << second->body;
  EXPECT_EQ(load_status, 0) << "the load answered before it was released";

  release.set_value();
  loading.join();
  EXPECT_EQ(load_status, 200);
}

TEST(LoraServing, TheAdminRoutesDoNotExistWithoutTheFlag) {
  LiveServer server;
  const json load = {{"lora_name", "c"}, {"lora_path", kMiniMindAdapter.string()}};
  EXPECT_EQ(post(server, "/v1/load_lora_adapter", load, 404)["error"]["type"], "invalid_request_error");
  EXPECT_TRUE(server.stack.adapters().empty());
}

}  // namespace
}  // namespace minigen
