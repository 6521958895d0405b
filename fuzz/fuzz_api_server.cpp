// `minigen serve`'s API as a state machine (ServerStack: ApiServer over the Engine, scheduler, KV block pool and
// weight switching), driven over a loopback socket by a script the input spells out: SGLang's /generate (whole,
// streamed, streamed and hung up on), /update_weights_from_disk (a fitting model, a wrong shape, a missing path, a
// FIFO, with and without abort_all_requests), /flush_cache, /get_model_info, /v1/completions, LoRA adapter loads
// and unloads (a fitting adapter, one claiming a 1 GB matrix of the wrong shape, a missing path) and completions
// naming them, long prefills sent from a second client while the script goes on with short requests, and raw
// bodies — one server kept across inputs, so a state one input leaves behind meets the next.
//
// Invariants beyond "no crash" (ASan + UBSan):
//   - every answer has a status the API gives (200, 400, 404, 405, 409, 413, 415, 429, 503) and, unless it is a
//     stream, a JSON body;
//   - /health answers 200 at every step, whatever is loading or prefilling meanwhile;
//   - a 200 from /generate holds one result per sequence asked for, each with one logprob per output id when asked;
//   - once the script ends, the engine goes idle with no KV block referenced (cancelled and aborted sequences gave
//     theirs back), and the weight version only ever moved forward.
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "checkpoint/model_loader.h"
#include "fuzz_check.h"
#include "model/io/claimed_tensors_test_util.h"
#include "model/io/safetensors.h"
#include "model/weights.h"
#include "serve/server_stack.h"
#include "shipped_tokenizer.h"

using namespace minigen;
using minigen::fuzz::check;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

ModelConfig small_config(int intermediate) {
  ModelConfig config;
  config.family = "custom";
  config.hidden_size = 32;
  config.num_layers = 1;
  config.num_q_heads = 2;
  config.num_kv_heads = 1;
  config.head_dim = 16;
  config.intermediate_size = intermediate;
  config.qk_norm = true;
  return config;
}

// The server and the directories update bodies may name: the same shape (seed 2), another shape, nothing, a FIFO.
struct World {
  fs::path scratch = fs::temp_directory_path() / ("minigen_fuzz_api_" + std::to_string(::getpid()));
  fs::path same_shape = scratch / "same_shape";
  fs::path wrong_shape = scratch / "wrong_shape";
  fs::path missing = scratch / "missing";
  fs::path fifo = scratch / "fifo_model";
  fs::path adapter = scratch / "adapter";            // a PEFT folder that fits: q_proj of layer 0, rank 2
  fs::path huge_adapter = scratch / "huge_adapter";  // claims a 1 GB A of the wrong shape (a hole in the file)
  Model model{small_config(64), random_weights(small_config(64), 1)};
  std::unique_ptr<ServerStack> stack;
  int port = 0;
  std::thread thread;

  World() {
    fs::remove_all(scratch);
    fs::create_directories(fifo);
    const TokenizerFiles tokenizer = read_tokenizer_files(MINIGEN_SOURCE_DIR "/tokenizers/minigen-6400");
    save_model_directory(same_shape, small_config(64), random_weights(small_config(64), 2), tokenizer, DType::kF16);
    save_model_directory(wrong_shape, small_config(48), random_weights(small_config(48), 3), tokenizer);
    fs::copy_file(same_shape / "config.json", fifo / "config.json");
    ::mkfifo((fifo / "model.safetensors").c_str(), 0600);
    const std::string module = "base_model.model.model.layers.0.self_attn.q_proj";
    for (const fs::path& folder : {adapter, huge_adapter}) {
      fs::create_directories(folder);
      std::ofstream(folder / "adapter_config.json") << R"({"peft_type": "LORA", "r": 2, "lora_alpha": 4})";
    }
    TensorMap lora;
    lora[module + ".lora_A.weight"] = HostTensor{{2, 32}, std::vector<float>(64, 0.01f), DType::kF32};
    lora[module + ".lora_B.weight"] = HostTensor{{32, 2}, std::vector<float>(64, 0.02f), DType::kF32};
    write_safetensors(adapter / "adapter_model.safetensors", lora);
    testing::write_safetensors_with_claims(
        huge_adapter / "adapter_model.safetensors", {},
        {{module + ".lora_A.weight", "F16", {2, 1 << 28}}, {module + ".lora_B.weight", "F16", {32, 2}}});
    ServeOptions options;
    options.threads = 1;
    options.kv_budget_bytes = 96 * BlockPool::bytes_per_block(model.config.kv_layout());
    options.max_batch = 4;
    options.token_budget = 32;
    options.max_queue = 8;
    options.api.api_key = "fuzz";  // the adapter routes need one
    options.api.allow_runtime_lora = true;
    stack = std::make_unique<ServerStack>(model, fuzz::shipped_tokenizer(), "fuzz", options);
    port = stack->bind("127.0.0.1", 0);
    thread = std::thread([this] { stack->serve(); });
  }
};

World& world() {
  static World* instance = new World();  // lives to the end of the process, as the fuzzer does
  return *instance;
}

// Reads the script: each call takes one byte (0 once it has run out).
struct Script {
  const uint8_t* data;
  size_t size;
  size_t at = 0;
  uint8_t next() { return at < size ? data[at++] : 0; }
  bool done() const { return at >= size; }
};

json generate_body(Script& script, int& sequences, bool& logprobs) {
  json prompts = json::array();
  const int count = script.next() % 3 + 1;
  for (int p = 0; p < count; ++p) {
    json ids = json::array();
    const int length = script.next() % 20 + 1;
    for (int t = 0; t < length; ++t) ids.push_back((script.next() * 131 + t) % 6400);
    prompts.push_back(ids);
  }
  const int n = script.next() % 3 + 1;
  sequences = count * n;
  logprobs = script.next() % 2 == 0;
  json sampling = {{"max_new_tokens", script.next() % 12 + 1},
                   {"temperature", (script.next() % 5) * 0.4},
                   {"n", n},
                   {"stop_token_ids", {2}}};
  if (script.next() % 4 == 0) sampling["ignore_eos"] = true;
  if (script.next() % 8 == 0) sampling["top_k"] = script.next() % 3 == 0 ? 0 : 5;  // 0 is a 400
  json body = {{"input_ids", prompts}, {"sampling_params", sampling}, {"return_logprob", logprobs}};
  if (script.next() % 8 == 0) body["sampling_seed"] = "not a seed";  // a 400 naming the field
  return body;
}

void check_status(int status) {
  static const std::set<int> known = {200, 400, 404, 405, 409, 413, 415, 429, 503};
  check(known.count(status) == 1, "a status the API gives");
}

httplib::Client client_of(const World& w) {
  httplib::Client client("127.0.0.1", w.port);
  client.set_read_timeout(30, 0);
  client.set_bearer_token_auth("fuzz");
  return client;
}

// A long prefill on a second client: 300–1,000 prompt tokens against a per-step budget of 32, so it runs for many
// steps while the script's short requests are admitted beside it. At most one at a time; joined at the script's end.
struct Background {
  std::thread thread;
  void start(Script& script) {
    join();
    const int length = 300 + script.next() * 3;
    json ids = json::array();
    for (int t = 0; t < length; ++t) ids.push_back((t * 37 + 11) % 6400);
    const json body = {{"input_ids", ids}, {"sampling_params", {{"max_new_tokens", 2}, {"temperature", 0}}}};
    thread = std::thread([body] {
      httplib::Client client = client_of(world());
      auto answer = client.Post("/generate", body.dump(), "application/json");
      check(static_cast<bool>(answer), "an answer to the long prefill");
      check_status(answer->status);
    });
  }
  void join() {
    if (thread.joinable()) thread.join();
  }
};

void adapter_step(Script& script, httplib::Client& client) {
  const World& w = world();
  const std::string name = script.next() % 2 ? "a" : "b";
  const uint8_t what = script.next() % 5;
  if (what <= 2) {
    const fs::path paths[] = {w.adapter, w.huge_adapter, w.missing};
    const json body = {{"lora_name", name}, {"lora_path", paths[what].string()}};
    auto answer = client.Post("/v1/load_lora_adapter", body.dump(), "application/json");
    check(static_cast<bool>(answer), "an answer");
    check_status(answer->status);
    if (what >= 1) check(answer->status == 400, "a misshapen or missing adapter is a 400");
    return;
  }
  if (what == 3) {
    auto answer = client.Post("/v1/unload_lora_adapter", json{{"lora_name", name}}.dump(), "application/json");
    check(answer && (answer->status == 200 || answer->status == 404), "an unload answers 200 or 404");
    return;
  }
  const json body = {{"model", name}, {"prompt", "The"}, {"max_tokens", script.next() % 6 + 1}, {"temperature", 0}};
  auto answer = client.Post("/v1/completions", body.dump(), "application/json");
  check(static_cast<bool>(answer), "an answer");
  check_status(answer->status);
}

void run_step(Script& script, httplib::Client& client, Background& background) {
  {
    auto health = client.Get("/health");
    check(health && health->status == 200, "/health answers at every step");
  }
  const uint8_t op = script.next() % 10;
  if (op == 8) return adapter_step(script, client);
  if (op == 9) return background.start(script);
  if (op <= 2) {  // /generate: whole, streamed, or streamed and closed after a few events
    int sequences = 0;
    bool logprobs = false;
    json body = generate_body(script, sequences, logprobs);
    if (op == 0) {
      auto answer = client.Post("/generate", body.dump(), "application/json");
      check(static_cast<bool>(answer), "an answer");
      check_status(answer->status);
      const json parsed = json::parse(answer->body, nullptr, false);
      check(!parsed.is_discarded(), "a JSON body");
      if (answer->status != 200) return;
      const json results = parsed.is_array() ? parsed : json::array({parsed});
      check(static_cast<int>(results.size()) == sequences, "one result per sequence");
      for (const json& result : results) {
        const json& meta = result["meta_info"];
        if (logprobs && meta["finish_reason"]["type"] != "abort") {
          check(meta["output_token_logprobs"].size() == result["output_ids"].size(), "a logprob per id");
        }
      }
      return;
    }
    body["stream"] = true;
    const int keep_events = op == 2 ? script.next() % 4 : 1 << 30;
    int events = 0;
    httplib::Request request;
    request.method = "POST";
    request.path = "/generate";
    request.body = body.dump();
    request.set_header("Content-Type", "application/json");
    request.content_receiver = [&](const char* data, std::size_t size, uint64_t, uint64_t) {
      events += static_cast<int>(std::string_view(data, size).find("data: ") != std::string_view::npos);
      return events <= keep_events;
    };
    auto answer = client.send(request);
    if (answer) check_status(answer->status);
    return;
  }
  if (op == 3) {  // a weight update
    const World& w = world();
    const fs::path paths[] = {w.same_shape, w.wrong_shape, w.missing, w.fifo, "/dev/zero"};
    json body = {{"model_path", paths[script.next() % 5].string()}};
    if (script.next() % 2) body["abort_all_requests"] = true;
    if (script.next() % 4 == 0) body["flush_cache"] = false;  // a 400
    auto answer = client.Post("/update_weights_from_disk", body.dump(), "application/json");
    check(static_cast<bool>(answer), "an answer");
    check_status(answer->status);
    check(!json::parse(answer->body, nullptr, false).is_discarded(), "a JSON body");
    return;
  }
  if (op == 4) {
    auto answer = client.Post("/flush_cache", "", "text/plain");
    check(answer && answer->status == 200, "/flush_cache answers 200");
    return;
  }
  if (op == 5) {
    auto answer = client.Get(script.next() % 2 ? "/get_model_info" : "/health_generate");
    check(answer && answer->status == 200, "the info routes answer 200");
    check(!json::parse(answer->body, nullptr, false).is_discarded(), "a JSON body");
    return;
  }
  if (op == 6) {  // the OpenAI route on the same engine
    const json body = {{"prompt", "The"}, {"max_tokens", script.next() % 8 + 1}, {"temperature", 0}};
    auto answer = client.Post("/v1/completions", body.dump(), "application/json");
    check(static_cast<bool>(answer), "an answer");
    check_status(answer->status);
    return;
  }
  // Raw bytes as a body, to a route the script picks.
  const char* routes[] = {"/generate", "/update_weights_from_disk", "/v1/completions"};
  const std::string route = routes[script.next() % 3];
  std::string raw;
  for (int length = script.next() % 64; length > 0 && !script.done(); --length) raw += static_cast<char>(script.next());
  auto answer = client.Post(route, raw, "application/json");
  check(static_cast<bool>(answer), "an answer");
  check_status(answer->status);
  check(!json::parse(answer->body, nullptr, false).is_discarded(), "a JSON body");
}

int version_number(const std::string& version) { return version == "default" ? 0 : std::stoi(version); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World& w = world();
  httplib::Client client = client_of(w);
  Background background;
  const int version_before = version_number(w.stack->engine().weight_version());
  Script script{data, std::min<size_t>(size, 256)};
  for (int step = 0; step < 12 && !script.done(); ++step) run_step(script, client, background);
  background.join();
  // Idle, with every block back in the pool (a minute: a sanitizer build is slow, a leak never settles).
  EngineStatus status = w.stack->engine().status();
  for (int i = 0; i < 6000 && (status.running > 0 || status.waiting > 0 || status.kv_blocks_used > 0); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    status = w.stack->engine().status();
  }
  check(status.running == 0 && status.waiting == 0, "the engine goes idle");
  check(status.kv_blocks_used == 0, "no KV block stays referenced");
  check(version_number(w.stack->engine().weight_version()) >= version_before, "the weight version only moves on");
  return 0;
}
