#pragma once
// The shipped chat model behind `minigen serve`'s stack on a free loopback port, and the requests the API tests send.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cache/block_pool.h"
#include "checkpoint/model_loader.h"
#include "generate/generate.h"
#include "serve/server_stack.h"
#include "tokenizer/chat_template.h"

namespace minigen::testing {

using nlohmann::json;

// The shipped chat model behind a server on a free loopback port.
struct LiveServer {
  explicit LiveServer(int max_queue = 64, int blocks = 256, ApiServerOptions api = {}, KvDType kv_dtype = KvDType::kF32)
      : LiveServer(minigen_home() / "models" / "minigen-tiny-sft", max_queue, blocks, std::move(api), kv_dtype) {}
  // Another model directory (its folder name serves as the model's name).
  LiveServer(const std::filesystem::path& model, int max_queue, int blocks, ApiServerOptions api = {},
             KvDType kv_dtype = KvDType::kF32, WeightType weights = WeightType::kF32,
             std::optional<ActivationCodes> activations = std::nullopt)
      : loaded(load_model(model)),
        stack(*loaded.model, *loaded.tokenizer, model.filename().string(),
              options(*loaded.model, max_queue, blocks, api, kv_dtype, weights, activations)) {
    port = stack.bind("127.0.0.1", 0);
    thread = std::thread([this] { stack.serve(); });
  }
  ~LiveServer() {
    stack.stop();
    thread.join();
  }
  static ServeOptions options(const Model& model, int max_queue, int blocks, ApiServerOptions api, KvDType kv_dtype,
                              WeightType weights = WeightType::kF32,
                              std::optional<ActivationCodes> activations = std::nullopt) {
    ServeOptions options;
    options.threads = 2;
    options.weight_type = weights;
    options.activations = activations;
    options.kv_dtype = kv_dtype;
    options.kv_budget_bytes =
        static_cast<std::size_t>(blocks) * BlockPool::bytes_per_block(model.config.kv_layout(kv_dtype));
    options.max_batch = 8;
    options.token_budget = 64;
    options.max_queue = max_queue;
    options.api = std::move(api);
    return options;
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(60, 0);
    return c;
  }
  // Waits (up to a minute, so that a slow sanitizer build cannot flake) until the engine has nothing running or
  // waiting and no KV block is referenced; returns the status either way, for the test to assert on.
  EngineStatus settled() {
    EngineStatus status = stack.engine().status();
    for (int i = 0; i < 6000 && (status.running > 0 || status.waiting > 0 || status.kv_blocks_used > 0); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      status = stack.engine().status();
    }
    return status;
  }

  LoadedModel loaded;
  ServerStack stack;
  int port = 0;
  std::thread thread;
};

inline json post(LiveServer& server, const std::string& path, const json& body, int expected_status) {
  auto result = server.client().Post(path, body.dump(), "application/json");
  EXPECT_TRUE(result) << path;
  if (!result) return json();
  EXPECT_EQ(result->status, expected_status) << result->body;
  return json::parse(result->body);
}

// POST whose response body is handed to `receiver` piece by piece (returning false hangs up).
inline httplib::Result post_streaming(LiveServer& server, const std::string& path, const json& body,
                                      const std::function<bool(const char*, std::size_t)>& receiver) {
  httplib::Request request;
  request.method = "POST";
  request.path = path;
  request.body = body.dump();
  request.set_header("Content-Type", "application/json");
  request.content_receiver = [&](const char* data, std::size_t size, uint64_t, uint64_t) {
    return receiver(data, size);
  };
  return server.client().send(request);
}

// The token ids minigen's generate loop gives for a base-model prompt with these settings (eos ignored): what the
// server must answer for the same request.
inline std::vector<int> engine_token_ids(LiveServer& server, const std::string& prompt, SamplingParams sampling,
                                         int max_tokens) {
  ThreadPool pool(1);
  Transformer transformer(*server.loaded.model, pool);
  GenerateOptions options;
  options.max_new_tokens = max_tokens;
  options.ignore_eos = true;
  options.sampling = sampling;
  const std::vector<std::vector<int>> prompts = {encode_base_prompt(*server.loaded.tokenizer, prompt)};
  return generate(transformer, prompts, options).sequences[0].token_ids;
}

// The text of /v1/completions for `prompt` with eos ignored and the other fields of `body`.
inline std::string completion_text(LiveServer& server, const std::string& prompt, json body) {
  body["prompt"] = prompt;
  body["ignore_eos"] = true;
  return post(server, "/v1/completions", body, 200)["choices"][0]["text"];
}

// A streaming POST's JSON chunks in order (every "data: {…}" event; the final "data: [DONE]" is checked, not returned).
inline std::vector<json> stream_chunks(LiveServer& server, const std::string& path, const json& body) {
  std::string received;
  auto result = post_streaming(server, path, body, [&](const char* data, std::size_t size) {
    received.append(data, size);
    return true;
  });
  EXPECT_TRUE(result) << path;
  if (!result) return {};
  EXPECT_EQ(result->status, 200) << received;
  EXPECT_TRUE(received.size() >= 14 && received.substr(received.size() - 14) == "data: [DONE]\n\n") << received;
  std::vector<json> chunks;
  for (std::size_t at = 0; (at = received.find("data: {", at)) != std::string::npos;) {
    const std::size_t end = received.find("\n\n", at);
    chunks.push_back(json::parse(received.substr(at + 6, end - at - 6)));
    at = end;
  }
  return chunks;
}

}  // namespace minigen::testing
