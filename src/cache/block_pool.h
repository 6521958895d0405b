#pragma once
// The server's KV memory: one pool of fixed-size blocks (16 positions × every layer), sized by a byte budget, and
// the prefix cache over it.
//
// A block is either free, held by sequences (reference count > 0), or cached-but-unreferenced (its K/V still
// valid, waiting in least-recently-used order to be reused by a prompt with the same prefix, or evicted when a
// fresh block is needed). Only full blocks are cached, keyed by (prefix id of everything before them, their 16
// token ids): K and V of a position depend on exactly those tokens, so a hit gives the bits a fresh prefill would.
// Prefix ids are never reused, so evicting a block can never make a stale child match a different prefix.
#include <array>
#include <cstddef>
#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

#include "hwy/aligned_allocator.h"
#include "ops/kv_block.h"

namespace minigen {

class BlockPool {
 public:
  static constexpr int kBlockTokens = KvBlockLayout::kBlockTokens;
  // The prefix id of "nothing before". The ids the pool gives out are positive; a caller may root sequences under
  // a negative id of its own to keep their blocks apart (serve: one root per LoRA adapter).
  static constexpr int64_t kNoPrefix = 0;

  BlockPool(const KvLayout& layout, int num_blocks);

  // 16 · bytes_per_token: 16 · 2 · layers · kv_heads · head_dim · bytes_per_element (+ int8 scales).
  static std::size_t bytes_per_block(const KvLayout& layout);
  static int blocks_for_budget(const KvLayout& layout, std::size_t budget_bytes);

  int total_blocks() const { return static_cast<int>(reference_count_.size()); }
  // Blocks a new allocation can get: never-used or released ones, plus cached ones nobody references.
  int available_blocks() const { return static_cast<int>(free_.size() + evictable_.size()); }
  int referenced_blocks() const { return total_blocks() - available_blocks(); }
  int cached_blocks() const { return static_cast<int>(entries_.size()); }
  const KvBlockLayout& layout() const { return layout_; }
  KvDType dtype() const { return layout_.dtype; }
  // One block's bytes over every layer: bytes_per_block of the pool's layout.
  std::size_t block_bytes() const { return static_cast<std::size_t>(num_layers_) * layout_.block_bytes(); }
  int num_layers() const { return num_layers_; }

  std::byte* block(int id, int layer) {
    return storage_.get() + (static_cast<std::size_t>(id) * num_layers_ + layer) * layout_.block_bytes();
  }

  // A block for new K/V with one reference: a free one, else the least recently used cached block (evicted
  // from the prefix cache). −1 when every block is referenced.
  int allocate();
  void add_ref(int id);
  void release(int id);

  struct Hit {
    int block = -1;
    int64_t prefix_id = kNoPrefix;
  };
  // The cached block that follows prefix `parent` with exactly these 16 tokens; on a hit it gains a reference.
  Hit lookup(int64_t parent, std::span<const int> tokens);
  // Records a full block just computed. Returns the prefix id of parent + tokens (an existing one when another
  // block already holds the same prefix — then this block simply stays uncached).
  int64_t publish(int id, int64_t parent, std::span<const int> tokens);

  // Empties the prefix cache (SGLang's /flush_cache): unreferenced cached blocks become free, referenced ones stay
  // with their sequences but will not be handed to a later prompt. Returns how many cached blocks were forgotten.
  int flush_cached();

  int64_t lookups() const { return lookups_; }
  int64_t hits() const { return hits_; }

 private:
  struct Key {
    int64_t parent;
    std::array<int, kBlockTokens> tokens;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& key) const;
  };
  struct Entry {
    int block;
    int64_t prefix_id;
  };
  static Key make_key(int64_t parent, std::span<const int> tokens);
  void forget_cached(int id);

  int num_layers_;
  KvBlockLayout layout_;
  hwy::AlignedFreeUniquePtr<std::byte[]> storage_;
  std::vector<int> reference_count_;
  std::vector<int> free_;     // uncached, unreferenced
  std::list<int> evictable_;  // cached, unreferenced; front = least recently used
  std::vector<std::list<int>::iterator> evictable_position_;
  std::vector<bool> in_evictable_;
  std::unordered_map<Key, Entry, KeyHash> entries_;
  std::vector<const Key*> key_of_block_;  // the entry a cached block is registered under, else nullptr
  int64_t next_prefix_id_ = 1;
  int64_t lookups_ = 0;
  int64_t hits_ = 0;
};

}  // namespace minigen
