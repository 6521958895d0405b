#include "cache/kv_cache.h"

#include <algorithm>
#include <climits>
#include <string>

#include "core/assert.h"
#include "core/error.h"

namespace minigen {

KvCache::KvCache(const KvLayout& layout, int capacity_tokens, int max_capacity_tokens)
    : model_layout_(layout),
      layout_{layout.kv_heads, layout.head_dim, layout.dtype},
      max_capacity_(max_capacity_tokens),
      layers_(layout.layers) {
  if (capacity_tokens < 0) throw Error("KV cache capacity must not be negative");
  reserve_for(capacity_tokens);
}

void KvCache::reserve_for(int count) {
  constexpr int kBlock = KvBlockLayout::kBlockTokens;
  constexpr int kMaxPositions = INT_MAX / kBlock * kBlock;  // whole blocks, so rounding up cannot pass INT_MAX
  if (count < 0 || count > kMaxPositions - length_) {
    throw Error("a KV cache holds at most " + std::to_string(kMaxPositions) + " positions");
  }
  const int needed = length_ + count;
  if (needed <= capacity_) return;
  // Doubling keeps growth amortised; max_capacity_ (the most the caller will ever need) stops it from overshooting.
  const int64_t doubled = std::min<int64_t>({int64_t{2} * capacity_, max_capacity_, kMaxPositions});
  const int64_t wanted = std::max<int64_t>(needed, doubled);
  const int new_capacity = static_cast<int>((wanted + kBlock - 1) / kBlock * kBlock);
  // Blocks are whole and in order, so growing keeps every stored position where it was.
  for (auto& layer : layers_) layer.resize(static_cast<std::size_t>(new_capacity / kBlock) * layout_.block_bytes());
  capacity_ = new_capacity;
}

void KvCache::advance(int count) {
  if (count < 0 || length_ + count > capacity_) throw Error("KV cache advanced past its capacity");
  length_ += count;
}

void KvCache::truncate(int length) {
  if (length < 0 || length > length_) throw Error("KV cache truncated to a length it does not hold");
  length_ = length;
}

void KvCache::write(int layer, int position, const float* key_row, const float* value_row) {
  if (position < 0 || position >= capacity_) throw Error("KV cache write beyond its capacity");
  // The cached prefix is never written again: a forward call appends at length() and after.
  MINIGEN_ASSERT(position >= length_, "KV cache: position ", position, " rewritten below the length ", length_);
  layout_.write(block(layer, position), position % KvBlockLayout::kBlockTokens, key_row, value_row);
}

float KvCache::key_at(int layer, int position, int index) const {
  return layout_.key_at(block(layer, position), position % KvBlockLayout::kBlockTokens, index / layout_.head_dim,
                        index % layout_.head_dim);
}

float KvCache::value_at(int layer, int position, int index) const {
  return layout_.value_at(block(layer, position), position % KvBlockLayout::kBlockTokens, index / layout_.head_dim,
                          index % layout_.head_dim);
}

void KvCache::block_pointers(int layer, int positions, std::vector<const std::byte*>& blocks) const {
  // Past the capacity the pointers would run off the layer's buffer: reserve_for() must have made the room.
  MINIGEN_ASSERT(0 <= positions && positions <= capacity_, "KV cache: block pointers for ", positions,
                 " positions of a cache holding ", capacity_);
  MINIGEN_ASSERT(0 <= layer && layer < static_cast<int>(layers_.size()), "KV cache: layer ", layer, " of ",
                 layers_.size());
  blocks.clear();
  for (int p = 0; p < positions; p += KvBlockLayout::kBlockTokens) blocks.push_back(block(layer, p));
}

std::size_t KvCache::bytes_allocated() const {
  return static_cast<std::size_t>(capacity_) * model_layout_.bytes_per_token();
}

std::size_t KvCache::bytes_used() const { return static_cast<std::size_t>(length_) * model_layout_.bytes_per_token(); }

}  // namespace minigen
