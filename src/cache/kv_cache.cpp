#include "cache/kv_cache.h"

#include <algorithm>

#include "core/error.h"

namespace minigen {

KvCache::KvCache(const ModelConfig& config, int capacity_tokens)
    : num_layers_(config.num_layers), kv_width_(config.kv_width()), keys_(config.num_layers),
      values_(config.num_layers) {
  if (capacity_tokens < 0) throw Error("KV cache capacity must not be negative");
  reserve_for(capacity_tokens);
}

void KvCache::reserve_for(int count) {
  const int needed = length_ + count;
  if (needed <= capacity_) return;
  const int new_capacity = std::max(needed, capacity_ * 2);
  const std::size_t floats = static_cast<std::size_t>(new_capacity) * kv_width_;
  for (int layer = 0; layer < num_layers_; ++layer) {
    keys_[layer].resize(floats);
    values_[layer].resize(floats);
  }
  capacity_ = new_capacity;
}

void KvCache::advance(int count) {
  if (count < 0 || length_ + count > capacity_) throw Error("KV cache advanced past its capacity");
  length_ += count;
}

std::size_t KvCache::bytes_allocated() const {
  return 2 * static_cast<std::size_t>(num_layers_) * capacity_ * kv_width_ * kBytesPerElement;
}

std::size_t KvCache::bytes_used() const {
  return 2 * static_cast<std::size_t>(num_layers_) * length_ * kv_width_ * kBytesPerElement;
}

}  // namespace minigen
