#pragma once
// What the Python module wraps, in plain C++ (no pybind11 here): a model loaded as `minigen` loads it, its forward
// pass, KV caches for step-by-step decoding, and generate with the CLI's --json summary. minigen_module.cpp binds it.
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "cache/kv_cache.h"
#include "checkpoint/model_loader.h"
#include "checkpoint/model_settings.h"
#include "generate/generate.h"
#include "grammar/token_vocabulary.h"
#include "model/transformer.h"
#include "ops/thread_pool.h"
#include "tokenizer/chat_template.h"

namespace minigen::python {

// A prompt as the CLI takes it: ids as given, a user message rendered as ChatML (--chat), or bos + text (-p).
struct Prompt {
  std::vector<int> ids;  // used when not empty
  std::string text;
  bool chat = false;
  std::string system;                      // --system, with chat
  bool thinking = false;                   // --think, with chat
  nlohmann::ordered_json tools = nullptr;  // --tools' array, offered in the chat prompt (null: none)
};

// One generate() or stream() call: the rows to run and how to report them. With chat, each sequence also gets the
// reply's fields (reasoning_content, content, tool_calls), as `minigen generate --chat … --json` prints them.
struct RunRequest {
  std::vector<int> prompt;
  GenerateOptions options;
  int num_return_sequences = 1;
  bool chat = false;
  bool thinking = false;
  bool tools_offered = false;
};

class PythonModel;

// One sequence's KV cache, fed by PythonModel::forward one call at a time (what generate does with use_cache).
class PythonCache {
 public:
  PythonCache(std::shared_ptr<PythonModel> model, int capacity_tokens);
  int length() const { return cache_.length(); }
  std::size_t bytes_used() const { return cache_.bytes_used(); }
  std::size_t bytes_allocated() const { return cache_.bytes_allocated(); }
  void truncate(int length) { cache_.truncate(length); }
  KvCache& cache() { return cache_; }
  const PythonModel* model() const { return model_.get(); }

 private:
  std::shared_ptr<PythonModel> model_;  // the cache's layout is this model's
  KvCache cache_;
};

class PythonModel {
 public:
  // Loads as the CLI's -m/--weights/--threads/--heads/--tokenizer/--yarn/--kv-dtype do, with the same errors.
  explicit PythonModel(const ModelSettings& settings);

  const Tokenizer& tokenizer() const { return *loaded_.tokenizer; }
  const ModelConfig& config() const { return loaded_.model->config; }
  const LoadedModel& loaded() const { return loaded_; }
  const Transformer& transformer() const { return *transformer_; }
  KvDType kv_dtype() const { return kv_dtype_; }
  // Model.config's fields: `minigen info --json`'s object (layers, q_heads, context...) with config.json's names
  // (num_hidden_layers, num_attention_heads, max_position_embeddings...) and the weight type it runs in.
  nlohmann::json config_fields() const;
  // The model's tokens as grammars mask them (TokenVocabulary::from_tokenizer).
  std::shared_ptr<const TokenVocabulary> vocabulary(bool plain_added_tokens_as_text = false) const;

  std::vector<int> encode(const Prompt& prompt) const;
  // An OpenAI messages array (and tools array, or null) in the chat template, as the server renders a request.
  std::vector<int> encode_messages(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                                   bool add_generation_prompt, bool thinking) const;

  // Logits of every fed position, [ids.size()][vocab], into `out`. Without a cache the ids are one whole sequence
  // (one forward call on an empty cache, as generate's prefill); with one they continue it.
  void forward(std::span<const int> ids, PythonCache* cache, std::vector<float>& out);

  // The checks generate() makes before it runs (the CLI's, named as the keyword arguments are): throws Error.
  void check_run(const RunRequest& run) const;
  // `minigen generate --json`'s object for the same settings (run_summary_json); on_token streams as the CLI does.
  nlohmann::json generate(const RunRequest& run, const TokenCallback& on_token = {});

 private:
  std::mutex mutex_;  // one computation at a time: the transformer's activation buffers are shared
  LoadedModel loaded_;
  KvDType kv_dtype_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Transformer> transformer_;
};

}  // namespace minigen::python
