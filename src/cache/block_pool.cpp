#include "cache/block_pool.h"

#include <algorithm>
#include <string>

#include "core/assert.h"
#include "core/error.h"

namespace minigen {

BlockPool::BlockPool(const KvLayout& layout, int num_blocks)
    : num_layers_(layout.layers), layout_{layout.kv_heads, layout.head_dim, layout.dtype} {
  if (num_blocks < 1) throw Error("the KV block pool needs at least one block");
  storage_ =
      hwy::AllocateAligned<std::byte>(static_cast<std::size_t>(num_blocks) * num_layers_ * layout_.block_bytes());
  if (!storage_) throw Error("cannot allocate " + std::to_string(num_blocks) + " KV blocks");
  reference_count_.assign(num_blocks, 0);
  evictable_position_.resize(num_blocks);
  in_evictable_.assign(num_blocks, false);
  key_of_block_.assign(num_blocks, nullptr);
  // Hand out low ids first (pop from the back).
  for (int id = num_blocks - 1; id >= 0; --id) free_.push_back(id);
}

std::size_t BlockPool::bytes_per_block(const KvLayout& layout) { return kBlockTokens * layout.bytes_per_token(); }

int BlockPool::blocks_for_budget(const KvLayout& layout, std::size_t budget_bytes) {
  return static_cast<int>(std::min<std::size_t>(budget_bytes / bytes_per_block(layout), 1u << 30));
}

int BlockPool::allocate() {
  int id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else if (!evictable_.empty()) {
    id = evictable_.front();
    evictable_.pop_front();
    in_evictable_[id] = false;
    forget_cached(id);
  } else {
    return -1;
  }
  // A free or evictable block is referenced by nobody; handing out a referenced one would share K/V by accident.
  MINIGEN_ASSERT(reference_count_[id] == 0, "KV block ", id, " allocated with ", reference_count_[id], " references");
  reference_count_[id] = 1;
  return id;
}

void BlockPool::add_ref(int id) {
  MINIGEN_ASSERT(0 <= id && id < total_blocks(), "KV block ", id, " of ", total_blocks());
  if (reference_count_[id]++ == 0 && in_evictable_[id]) {
    evictable_.erase(evictable_position_[id]);
    in_evictable_[id] = false;
  }
}

void BlockPool::release(int id) {
  MINIGEN_ASSERT(0 <= id && id < total_blocks(), "KV block ", id, " of ", total_blocks());
  if (reference_count_[id] <= 0) throw Error("KV block " + std::to_string(id) + " released more often than taken");
  if (--reference_count_[id] > 0) return;
  if (key_of_block_[id] != nullptr) {  // still worth keeping for a later prompt with the same prefix
    evictable_position_[id] = evictable_.insert(evictable_.end(), id);
    in_evictable_[id] = true;
  } else {
    free_.push_back(id);
  }
}

BlockPool::Key BlockPool::make_key(int64_t parent, std::span<const int> tokens) {
  if (tokens.size() != kBlockTokens) throw Error("a prefix-cache key needs exactly 16 tokens");
  Key key{parent, {}};
  std::copy(tokens.begin(), tokens.end(), key.tokens.begin());
  return key;
}

std::size_t BlockPool::KeyHash::operator()(const Key& key) const {
  uint64_t hash = 1469598103934665603ull ^ static_cast<uint64_t>(key.parent);
  for (int token : key.tokens) hash = (hash ^ static_cast<uint32_t>(token)) * 1099511628211ull;
  return static_cast<std::size_t>(hash);
}

BlockPool::Hit BlockPool::lookup(int64_t parent, std::span<const int> tokens) {
  ++lookups_;
  const auto found = entries_.find(make_key(parent, tokens));
  if (found == entries_.end()) return {};
  ++hits_;
  add_ref(found->second.block);
  return {found->second.block, found->second.prefix_id};
}

int64_t BlockPool::publish(int id, int64_t parent, std::span<const int> tokens) {
  const auto [position, inserted] = entries_.try_emplace(make_key(parent, tokens), Entry{id, next_prefix_id_});
  if (!inserted) return position->second.prefix_id;
  if (key_of_block_[id] != nullptr) forget_cached(id);  // a block is registered under one key at most
  key_of_block_[id] = &position->first;
  return next_prefix_id_++;
}

int BlockPool::flush_cached() {
  const int forgotten = cached_blocks();
  for (const int id : evictable_) {
    in_evictable_[id] = false;
    free_.push_back(id);
  }
  evictable_.clear();
  entries_.clear();
  std::fill(key_of_block_.begin(), key_of_block_.end(), nullptr);
  return forgotten;
}

void BlockPool::forget_cached(int id) {
  if (key_of_block_[id] == nullptr) return;
  const Key key = *key_of_block_[id];  // a copy: the stored key dies with its entry
  entries_.erase(key);
  key_of_block_[id] = nullptr;
}

}  // namespace minigen
