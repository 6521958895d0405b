// Weights from disk while serving (POST /update_weights_from_disk), against golden numbers made by MiniMind's own code
// (tests/data/rollout, tools/rollout/make_rollout_fixtures.py): two fp16 policies saved as MiniMind's
// SGLangRolloutEngine.update_policy saves them — transformers' save_pretrained(safe_serialization=False): config.json
// with model_type "minimind", a pytorch_model.bin holding both tied keys — and their logprobs from
// compute_per_token_logps.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/model_loader.h"
#include "checkpoint/prompt_logits_test_util.h"
#include "core/error.h"
#include "serve/live_server_test_util.h"

namespace minigen {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::LiveServer;
using testing::post;

const fs::path kRolloutData = fs::path(MINIGEN_TEST_DATA_DIR) / "rollout";

const json& golden() {
  static const json data = [] {
    std::ifstream in(kRolloutData / "golden.json");
    return json::parse(in);
  }();
  return data;
}

std::vector<int> ids(const json& list) { return list.get<std::vector<int>>(); }

// One greedy rollout of every golden prompt, as SGLangRolloutEngine sends it (temperature 0 here, so that the tokens
// are the golden greedy ones; eos ignored, as the fixture's 16 tokens are).
json greedy_rollout(LiveServer& server) {
  json input_ids = json::array();
  for (const json& prompt : golden()["policies"]["policy_v1"]["prompts"]) input_ids.push_back(prompt["prompt_ids"]);
  const json body = {
      {"input_ids", input_ids},
      {"sampling_params", {{"temperature", 0}, {"max_new_tokens", 16}, {"stop_token_ids", {2}}, {"ignore_eos", true}}},
      {"return_logprob", true}};
  return post(server, "/generate", body, 200);
}

// The rollout's tokens and logprobs are `policy`'s (golden greedy ids; logprobs within 1e-4 of MiniMind's).
void expect_policy(const json& results, const std::string& policy, const std::string& version) {
  const json& prompts = golden()["policies"][policy]["prompts"];
  ASSERT_EQ(results.size(), prompts.size());
  for (std::size_t k = 0; k < prompts.size(); ++k) {
    const json& meta = results[k]["meta_info"];
    EXPECT_EQ(meta["weight_version"], version);
    EXPECT_EQ(ids(results[k]["output_ids"]), ids(prompts[k]["greedy_ids"])) << policy << " prompt " << k;
    const json& logprobs = meta["output_token_logprobs"];
    ASSERT_EQ(logprobs.size(), prompts[k]["greedy_logprobs"].size());
    for (std::size_t t = 0; t < logprobs.size(); ++t) {
      EXPECT_NEAR(logprobs[t][0].get<double>(), prompts[k]["greedy_logprobs"][t].get<double>(), 1e-4)
          << policy << " prompt " << k << " token " << t;
    }
  }
}

json update(LiveServer& server, const fs::path& path, int status, json extra = json::object()) {
  extra["model_path"] = path.string();
  return post(server, "/update_weights_from_disk", extra, status);
}

TEST(WeightUpdate, MiniMindsSavedPolicyLoadsWithItsOwnLogprobs) {
  for (const char* policy : {"policy_v1", "policy_v2"}) {
    const LoadedModel loaded = load_model(kRolloutData / policy);
    EXPECT_EQ(loaded.format, "pytorch_model.bin");
    EXPECT_EQ(loaded.stored_dtype, DType::kF16);
    EXPECT_EQ(loaded.model->config.hidden_size, golden()["policies"][policy]["config"]["hidden_size"].get<int>());
    EXPECT_TRUE(loaded.model->config.tie_word_embeddings);  // both keys stored, equal values
    for (const json& prompt : golden()["policies"][policy]["prompts"]) {
      const std::vector<double> forced =
          testing::completion_logprobs(*loaded.model, ids(prompt["prompt_ids"]), ids(prompt["forced_ids"]));
      ASSERT_EQ(forced.size(), prompt["forced_logprobs"].size());
      for (std::size_t t = 0; t < forced.size(); ++t) {
        EXPECT_NEAR(forced[t], prompt["forced_logprobs"][t].get<double>(), 1e-4) << policy << " token " << t;
      }
    }
  }
}

TEST(WeightUpdate, WeightsThatDoNotFitTheServedModelAreRefusedByName) {
  const LoadedModel served = load_model(kRolloutData / "policy_v1");
  const ModelConfig& config = served.model->config;
  EXPECT_EQ(load_replacement_weights(kRolloutData / "policy_v2", config)->config, config);
  auto message = [&](const fs::path& path) {
    try {
      load_replacement_weights(path, config);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("(accepted)");
  };
  const std::string wrong_shape = message(kRolloutData / "policy_wrong_shape");
  EXPECT_NE(wrong_shape.find("policy_wrong_shape"), std::string::npos) << wrong_shape;
  EXPECT_NE(wrong_shape.find("'model.layers.0.mlp.gate_proj.weight' has shape [64, 32] but the served model needs "
                             "[96, 32]"),
            std::string::npos)
      << wrong_shape;
  EXPECT_NE(message(kRolloutData / "missing").find("does not exist"), std::string::npos);

  // Shapes that fit but numbers that would not be the served model's: config.json says so.
  const fs::path copy = fs::temp_directory_path() / ("minigen_weight_update_" + std::to_string(::getpid()));
  fs::remove_all(copy);
  fs::create_directories(copy);
  fs::copy_file(kRolloutData / "policy_v2" / "pytorch_model.bin", copy / "pytorch_model.bin");
  std::ifstream in(kRolloutData / "policy_v2" / "config.json");
  json changed = json::parse(in);
  changed["rope_theta"] = 10000.0;
  std::ofstream(copy / "config.json") << changed.dump(2);
  EXPECT_NE(message(copy).find("config.json's rope_theta differs"), std::string::npos) << message(copy);
  // A FIFO for the weights would block a reader forever: refused as not a regular file.
  fs::remove(copy / "pytorch_model.bin");
  ASSERT_EQ(::mkfifo((copy / "pytorch_model.bin").c_str(), 0600), 0);
  EXPECT_NE(message(copy).find("not a regular file"), std::string::npos) << message(copy);
  fs::remove_all(copy);
}

// update_policy's save_pretrained(safe_serialization=False) into a folder that once held a model.safetensors leaves
// that file beside the new pytorch_model.bin: the newer of the two is the policy.
TEST(WeightUpdate, AStaleSafetensorsBesideANewerPytorchModelBinIsNotServed) {
  const LoadedModel v1 = load_model(kRolloutData / "policy_v1");
  const fs::path folder = fs::temp_directory_path() / ("minigen_weight_update_both_" + std::to_string(::getpid()));
  fs::remove_all(folder);
  save_model_directory(folder, v1.model->config, v1.model->weights, kRolloutData / "policy_v1");
  fs::copy_file(kRolloutData / "policy_v2" / "pytorch_model.bin", folder / "pytorch_model.bin");
  fs::last_write_time(folder / "model.safetensors",
                      fs::last_write_time(folder / "pytorch_model.bin") - std::chrono::hours(1));
  const json& prompt = golden()["policies"]["policy_v2"]["prompts"][0];
  auto first_logprob = [&](const Model& model) {
    return testing::completion_logprobs(model, ids(prompt["prompt_ids"]), ids(prompt["forced_ids"]))[0];
  };
  const double expected = prompt["forced_logprobs"][0].get<double>();
  EXPECT_NEAR(first_logprob(*load_replacement_weights(folder, v1.model->config)), expected, 1e-4);
  EXPECT_EQ(load_model(folder).format, "pytorch_model.bin");
  // Touched later, the safetensors is the newer one again.
  fs::last_write_time(folder / "model.safetensors",
                      fs::last_write_time(folder / "pytorch_model.bin") + std::chrono::hours(1));
  EXPECT_EQ(load_model(folder).format, "safetensors");
  fs::remove_all(folder);
}

// Served as f16 (fp16 storage, f32 arithmetic; the default for these fp16 checkpoints) the update packs the file's
// fp16 bits without an fp32 copy, and the rollouts are the f32 server's, logprob for logprob.
TEST(WeightUpdate, ServedAsF16TheUpdatedPolicysRolloutIsTheF32ServersBitForBit) {
  LiveServer f32(kRolloutData / "policy_v1", 64, 256);
  LiveServer f16(kRolloutData / "policy_v1", 64, 256, {}, KvDType::kF32, WeightType::kF16);
  // Everything but the request's id, its latency and the seed each unseeded request draws.
  const auto numbers = [](json results) {
    for (json& result : results) {
      for (const char* field : {"e2e_latency", "id", "sampling_seed"}) result["meta_info"].erase(field);
    }
    return results;
  };
  EXPECT_EQ(numbers(greedy_rollout(f16)), numbers(greedy_rollout(f32)));
  for (LiveServer* server : {&f32, &f16}) EXPECT_EQ(update(*server, kRolloutData / "policy_v2", 200)["success"], true);
  const json from_f16 = greedy_rollout(f16);
  expect_policy(from_f16, "policy_v2", "1");
  EXPECT_EQ(numbers(from_f16), numbers(greedy_rollout(f32)));
  EXPECT_EQ(f16.stack.transformer().weight_type(), WeightType::kF16);
}

TEST(WeightUpdate, TheNextRolloutHasTheNewPolicysLogprobsAndABadDirectoryChangesNothing) {
  LiveServer server(kRolloutData / "policy_v1", 64, 256);
  expect_policy(greedy_rollout(server), "policy_v1", "default");

  const json updated = update(server, kRolloutData / "policy_v2", 200);
  EXPECT_EQ(updated["success"], true);
  EXPECT_EQ(updated["weight_version"], "1");
  expect_policy(greedy_rollout(server), "policy_v2", "1");
  auto info = server.client().Get("/get_model_info");
  ASSERT_TRUE(info);
  EXPECT_EQ(json::parse(info->body)["weight_version"], "1");
  EXPECT_EQ(json::parse(info->body)["model_path"], (kRolloutData / "policy_v2").string());

  const json refused = update(server, kRolloutData / "policy_wrong_shape", 400);
  EXPECT_NE(refused["error"]["message"].get<std::string>().find("model.layers.0.mlp.gate_proj.weight"),
            std::string::npos);
  EXPECT_EQ(refused["error"]["param"], "model_path");
  expect_policy(greedy_rollout(server), "policy_v2", "1");  // the old weights still answer

  update(server, kRolloutData / "policy_v1", 200, {{"weight_version", "step-2"}});
  expect_policy(greedy_rollout(server), "policy_v1", "step-2");

  EXPECT_EQ(update(server, kRolloutData / "policy_v2", 400, {{"flush_cache", false}})["error"]["param"], "flush_cache");
  EXPECT_EQ(update(server, kRolloutData / "policy_v2", 400, {{"model_pth", "x"}})["error"]["param"], "model_pth");
  EXPECT_EQ(post(server, "/update_weights_from_disk", json::object(), 400)["error"]["param"], "model_path");
  EXPECT_EQ(server.settled().kv_blocks_used, 0);
}

// A weight update reads and packs beside the serving (issue 46): with its load held mid-way, /health answers and a
// whole streamed completion comes back on the old weights; released, the update answers 200 and the next rollout is
// the new policy's.
TEST(WeightUpdate, HealthAndStreamsGoOnWhileAWeightDirectoryLoads) {
  LiveServer server(kRolloutData / "policy_v1", 64, 256);
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  server.stack.set_weight_loader(
      [&started, released](const std::string& path, const ModelConfig& config, const TensorReadOptions& read) {
        started.set_value();
        released.wait();
        return load_replacement_weights(path, config, read);
      });
  json answer;
  std::thread updating([&] { answer = update(server, kRolloutData / "policy_v2", 200); });
  started.get_future().wait();
  const auto health = server.client().Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  const json body = {{"prompt", "The"}, {"max_tokens", 8}, {"temperature", 0}, {"stream", true}};
  const auto streamed = server.client().Post("/v1/completions", body.dump(), "application/json");
  ASSERT_TRUE(streamed);
  EXPECT_EQ(streamed->status, 200);
  EXPECT_NE(streamed->body.find("data: [DONE]"), std::string::npos) << streamed->body;
  EXPECT_TRUE(answer.is_null()) << "the update answered before its load was released";
  release.set_value();
  updating.join();
  EXPECT_EQ(answer["weight_version"], "1");
  expect_policy(greedy_rollout(server), "policy_v2", "1");
}

// A W8A8 server (q8 weights, int8 activations) says so and keeps its activations across an update: the policy it
// loads gives the tokens and logprobs of a W8A8 server started on that policy, bit for bit — and other logprobs than
// a q8 × int16 one.
TEST(WeightUpdate, AW8A8ServerKeepsItsActivationsAcrossAnUpdate) {
  LiveServer server(kRolloutData / "policy_v1", 64, 512, {}, KvDType::kF32, WeightType::kQ8, ActivationCodes::kInt8);
  auto info = server.client().Get("/get_server_info");
  ASSERT_TRUE(info);
  EXPECT_EQ(json::parse(info->body)["weight_type"], "q8");
  EXPECT_EQ(json::parse(info->body)["activations"], "int8");
  const json completion = post(server, "/v1/completions", {{"prompt", "hi"}, {"max_tokens", 1}}, 200);
  EXPECT_EQ(completion["system_fingerprint"], "minigen-q8-a8-kv-f32");
  update(server, kRolloutData / "policy_v2", 200);
  const json updated = greedy_rollout(server);

  LiveServer fresh(kRolloutData / "policy_v2", 64, 512, {}, KvDType::kF32, WeightType::kQ8, ActivationCodes::kInt8);
  LiveServer int16(kRolloutData / "policy_v2", 64, 512, {}, KvDType::kF32, WeightType::kQ8);
  const json started = greedy_rollout(fresh);
  const json other = greedy_rollout(int16);
  ASSERT_EQ(updated.size(), started.size());
  bool any_differs = false;
  for (std::size_t k = 0; k < updated.size(); ++k) {
    EXPECT_EQ(updated[k]["output_ids"], started[k]["output_ids"]) << k;
    EXPECT_EQ(updated[k]["meta_info"]["output_token_logprobs"], started[k]["meta_info"]["output_token_logprobs"]) << k;
    any_differs = any_differs ||
                  other[k]["meta_info"]["output_token_logprobs"] != started[k]["meta_info"]["output_token_logprobs"];
  }
  EXPECT_TRUE(any_differs);
}

// The route opens a path the client names: with a key it needs the key; listening beyond loopback without one, never.
TEST(WeightUpdate, TheRouteNeedsTheKeyOrALoopbackServer) {
  const LoadedModel loaded = load_model(kRolloutData / "policy_v1");
  const json body = {{"model_path", (kRolloutData / "policy_v2").string()}};
  for (const bool with_key : {false, true}) {
    ServeOptions options = LiveServer::options(*loaded.model, 8, 64, {}, KvDType::kF32);
    if (with_key) options.api.api_key = "secret";
    ServerStack stack(*loaded.model, *loaded.tokenizer, "policy_v1", options);
    const int port = stack.bind(with_key ? "127.0.0.1" : "0.0.0.0", 0);
    std::thread serving([&] { stack.serve(); });
    httplib::Client client("127.0.0.1", port);
    auto refused = client.Post("/update_weights_from_disk", body.dump(), "application/json");
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, with_key ? 401 : 403) << refused->body;
    if (!with_key) {
      EXPECT_NE(refused->body.find("needs an API key"), std::string::npos) << refused->body;
    } else {
      client.set_bearer_token_auth("secret");
      auto accepted = client.Post("/update_weights_from_disk", body.dump(), "application/json");
      ASSERT_TRUE(accepted);
      EXPECT_EQ(accepted->status, 200) << accepted->body;
    }
    EXPECT_EQ(stack.engine().weight_version(), with_key ? "1" : "default");
    stack.stop();
    serving.join();
  }
}

// A completion streaming when the update arrives: without abort_all_requests it runs to its end on the old weights
// (the update waits for it); with it, it ends at once with finish_reason "abort".
TEST(WeightUpdate, AStreamInFlightFinishesOnTheOldWeightsOrIsAborted) {
  LiveServer server(kRolloutData / "policy_v1", 64, 512);
  const std::vector<int> prompt = ids(golden()["policies"]["policy_v1"]["prompts"][1]["prompt_ids"]);
  constexpr int kLong = 1500;
  const json body = {{"prompt", prompt}, {"max_tokens", kLong}, {"temperature", 0}, {"ignore_eos", true}};

  for (const bool abort : {false, true}) {
    const std::string old_text = post(server, "/v1/completions", body, 200)["choices"][0]["text"];
    json stream_body = body;
    stream_body["stream"] = true;
    std::atomic<bool> first_chunk{false};
    std::thread updater([&] {
      while (!first_chunk) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      update(server, kRolloutData / (abort ? "policy_v1" : "policy_v2"), 200, {{"abort_all_requests", abort}});
    });
    std::string text;
    std::string finish_reason;
    std::string received;
    testing::post_streaming(server, "/v1/completions", stream_body, [&](const char* data, std::size_t size) {
      received.append(data, size);
      for (std::size_t end; (end = received.find("\n\n")) != std::string::npos; received.erase(0, end + 2)) {
        const std::string event = received.substr(0, end);
        if (event.rfind("data: {", 0) != 0) continue;
        const json chunk = json::parse(event.substr(6));
        text += chunk["choices"][0]["text"].get<std::string>();
        if (!chunk["choices"][0]["finish_reason"].is_null()) finish_reason = chunk["choices"][0]["finish_reason"];
        first_chunk = true;
      }
      return true;
    });
    updater.join();
    if (abort) {
      EXPECT_EQ(finish_reason, "abort");
      EXPECT_LT(text.size(), old_text.size());
      EXPECT_EQ(old_text.substr(0, text.size()), text);  // what it said until then was the old weights'
    } else {
      EXPECT_EQ(finish_reason, "length");
      EXPECT_EQ(text, old_text);  // every token from the weights it started with
    }
  }
  EXPECT_EQ(server.settled().kv_blocks_used, 0);
}

// Under load: clients roll out without pause while the weights switch back and forth. Every answer is wholly one
// policy's — the one its weight_version names — never a mix, and never KV from the other (the prompt's first block
// is in the prefix cache between requests).
TEST(WeightUpdate, UnderLoadNoTokenComesFromMixedWeights) {
  LiveServer server(kRolloutData / "policy_v1", 64, 256);
  std::mutex mutex;
  std::map<std::string, std::string> policy_of = {{"default", "policy_v1"}};
  std::map<std::string, int> answers;  // per weight version
  std::atomic<bool> stop{false};
  std::vector<std::thread> clients;
  for (int c = 0; c < 3; ++c) {
    clients.emplace_back([&] {
      while (!stop) {
        const json results = greedy_rollout(server);
        if (!results.is_array() || results.empty()) return;
        const std::string version = results[0]["meta_info"]["weight_version"];
        std::string policy;
        {
          std::lock_guard lock(mutex);
          policy = policy_of.count(version) ? policy_of[version] : "";
          ++answers[version];
        }
        ASSERT_FALSE(policy.empty()) << "unknown weight_version " << version;
        expect_policy(results, policy, version);
      }
    });
  }
  for (int step = 1; step <= 4; ++step) {
    const std::string policy = step % 2 == 1 ? "policy_v2" : "policy_v1";
    const std::string version = "v" + std::to_string(step);
    {
      std::lock_guard lock(mutex);
      policy_of[version] = policy;
    }
    update(server, kRolloutData / policy, 200, {{"weight_version", version}});
    // Wait (up to a minute) until some rollout ran on these weights.
    for (int i = 0; i < 6000; ++i) {
      {
        std::lock_guard lock(mutex);
        if (answers[version] > 0) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard lock(mutex);
    EXPECT_GT(answers[version], 0) << version;
  }
  stop = true;
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(server.settled().kv_blocks_used, 0);
}

}  // namespace
}  // namespace minigen
