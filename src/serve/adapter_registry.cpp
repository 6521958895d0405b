#include "serve/adapter_registry.h"

#include <algorithm>

#include "checkpoint/lora_loader.h"
#include "core/error.h"

namespace minigen {
namespace {

// Names go into responses, log lines and Prometheus labels as they are: a short, plain alphabet keeps all three
// safe without escaping.
void check_name(const std::string& name) {
  const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
  if (name.empty() || name.size() > 64 || !plain) {
    throw Error("an adapter's name must be 1 to 64 letters, digits, '.', '_' or '-' (got '" + name.substr(0, 80) +
                "')");
  }
}

}  // namespace

void AdapterRegistry::check_free_locked(const std::string& name) const {
  check_name(name);
  if (name == base_name_) throw Error("'" + name + "' is the base model's name; give the adapter another");
  if (adapters_.contains(name)) throw Error("an adapter named '" + name + "' is already loaded; unload it first");
}

ServedAdapter AdapterRegistry::add_locked(const std::string& name, std::shared_ptr<const LoraAdapter> adapter) {
  check_free_locked(name);
  if (adapter == nullptr) throw Error("adapter '" + name + "' has no weights");
  ServedAdapter served{name, std::move(adapter), next_root_--, 0};
  adapters_.emplace(name, served);
  return served;
}

ServedAdapter AdapterRegistry::add(const std::string& name, std::shared_ptr<const LoraAdapter> adapter) {
  const std::lock_guard lock(mutex_);
  return add_locked(name, std::move(adapter));
}

ServedAdapter AdapterRegistry::load(const std::string& name, const std::filesystem::path& path) {
  {
    // Refuse a bad or taken name before reading a file that may be large.
    const std::lock_guard lock(mutex_);
    check_free_locked(name);
  }
  FileLoader loader;
  {
    const std::lock_guard lock(mutex_);
    loader = file_loader_ ? file_loader_ : FileLoader(load_lora_adapter);
  }
  std::shared_ptr<const LoraAdapter> adapter;
  try {
    adapter = loader(path, config_);  // outside the lock: file I/O
  } catch (const Error& error) {
    // The loader names the tensor or field; the server's log and the admin route's answer also need which file.
    const std::string message = error.what();
    if (message.find(path.string()) != std::string::npos) throw;
    throw Error("adapter '" + name + "' (" + path.string() + "): " + message);
  }
  const std::lock_guard lock(mutex_);
  return add_locked(name, std::move(adapter));
}

void AdapterRegistry::set_file_loader(FileLoader loader) {
  const std::lock_guard lock(mutex_);
  file_loader_ = std::move(loader);
}

bool AdapterRegistry::remove(const std::string& name) {
  const std::lock_guard lock(mutex_);
  return adapters_.erase(name) > 0;
}

std::optional<ServedAdapter> AdapterRegistry::resolve(const std::string& model) {
  const std::lock_guard lock(mutex_);
  if (const auto found = adapters_.find(model); found != adapters_.end()) {
    ++found->second.requests;
    return found->second;
  }
  if (model.empty() || model == base_name_ || adapters_.empty()) {
    ++base_requests_;
    return ServedAdapter{base_name_, nullptr, 0, base_requests_};
  }
  return std::nullopt;
}

std::vector<ServedAdapter> AdapterRegistry::list() const {
  const std::lock_guard lock(mutex_);
  std::vector<ServedAdapter> result;
  for (const auto& [name, served] : adapters_) result.push_back(served);
  return result;
}

bool AdapterRegistry::empty() const {
  const std::lock_guard lock(mutex_);
  return adapters_.empty();
}

}  // namespace minigen
