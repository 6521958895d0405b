#pragma once
// The LoRA adapters `minigen serve` answers for, by name (vLLM's --lora-modules and /v1/load_lora_adapter).
//
// A request's "model" picks one: an adapter's name runs that adapter, the base model's name (or no "model") runs
// none. Every adapter is one LoraAdapter in memory next to the single copy of the base weights; a batch mixes rows
// of any adapters (model/low_rank_term.h). Adapters are added at start (--lora NAME=FILE) and, with
// --allow-runtime-lora, loaded and unloaded while the server runs: a request holds its adapter's shared_ptr, so an
// unload never pulls weights from under a sequence that is still generating.
//
// Each registration gets its own prefix-cache root (SequenceRequest::prefix_root), never reused: blocks computed
// under adapter a are never handed to a request for b or for the base, nor to a different adapter later loaded
// under a's name.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/lora_adapter.h"

namespace minigen {

struct ServedAdapter {
  std::string name;
  std::shared_ptr<const LoraAdapter> weights;  // nullptr: the base model
  int64_t prefix_root = 0;                     // 0 for the base model; negative, unique, for each adapter
  int64_t requests = 0;                        // requests that named it (list() only)
};

class AdapterRegistry {
 public:
  AdapterRegistry(std::string base_name, const ModelConfig& config)
      : base_name_(std::move(base_name)), config_(config) {}

  const std::string& base_name() const { return base_name_; }

  // Reads an adapter file (checkpoint/lora_loader.h: MiniMind .pth, PEFT folder, GGUF) checked against the model,
  // and serves it as `name`. Throws minigen::Error: a name that is not 1–64 of [A-Za-z0-9._-] or is already taken
  // (the base model's included), or an adapter the loader refuses (the message names the file and the problem).
  ServedAdapter load(const std::string& name, const std::filesystem::path& path);
  // How load() reads a file: load_lora_adapter unless replaced (a test slows it down to watch the server meanwhile).
  using FileLoader =
      std::function<std::shared_ptr<const LoraAdapter>(const std::filesystem::path&, const ModelConfig&)>;
  void set_file_loader(FileLoader loader);
  // Serves an adapter already in memory (tests, the load tester's in-process server).
  ServedAdapter add(const std::string& name, std::shared_ptr<const LoraAdapter> adapter);
  // Stops serving `name`; requests already running keep it to their end. False when no adapter has that name.
  bool remove(const std::string& name);

  // What a request's "model" names: the base (also for an empty name), an adapter, or nothing (std::nullopt).
  // Counts the request. An unknown name runs the base while no adapter is loaded, as before adapters existed
  // (clients send whatever model name they were written for); once one is, it is an error: a typo must not
  // quietly answer with the wrong adapter's weights.
  std::optional<ServedAdapter> resolve(const std::string& model);

  std::vector<ServedAdapter> list() const;  // by name, with their request counts
  bool empty() const;

 private:
  void check_free_locked(const std::string& name) const;  // throws unless `name` may be given to an adapter
  ServedAdapter add_locked(const std::string& name, std::shared_ptr<const LoraAdapter> adapter);

  const std::string base_name_;
  const ModelConfig config_;
  mutable std::mutex mutex_;
  std::map<std::string, ServedAdapter> adapters_;
  int64_t base_requests_ = 0;
  int64_t next_root_ = -1;
  FileLoader file_loader_;
};

}  // namespace minigen
