#include "cache/paged_sequence.h"

#include <string>

#include "core/assert.h"
#include "core/error.h"

namespace minigen {

namespace {
constexpr int kBlock = BlockPool::kBlockTokens;
}

int PagedKvSequence::blocks_needed(int count) const {
  const int blocks_after = (length_ + count + kBlock - 1) / kBlock;
  return blocks_after > blocks_held() ? blocks_after - blocks_held() : 0;
}

void PagedKvSequence::reserve_for(int count) {
  for (int needed = blocks_needed(count); needed > 0; --needed) {
    const int id = pool_.allocate();
    if (id < 0) throw Error("the KV block pool is exhausted");
    table_.push_back(id);
  }
}

void PagedKvSequence::write(int layer, int position, const float* key_row, const float* value_row) {
  if (position < 0 || position / kBlock >= blocks_held()) throw Error("paged KV write outside the block table");
  // Blocks below length() may be borrowed from the prefix cache and shared: they are full and read-only.
  MINIGEN_ASSERT(position >= length_, "paged KV: position ", position, " rewritten below the length ", length_);
  pool_.layout().write(pool_.block(table_[position / kBlock], layer), position % kBlock, key_row, value_row);
}

void PagedKvSequence::block_pointers(int layer, int positions, std::vector<const std::byte*>& blocks) const {
  MINIGEN_ASSERT(0 <= positions && (positions + kBlock - 1) / kBlock <= blocks_held(), "paged KV: ", positions,
                 " positions need more than the ", blocks_held(), " blocks of the table");
  blocks.clear();
  for (int p = 0; p < positions; p += kBlock) blocks.push_back(pool_.block(table_[p / kBlock], layer));
}

void PagedKvSequence::advance(int count) {
  if (count < 0 || (length_ + count + kBlock - 1) / kBlock > blocks_held()) {
    throw Error("paged KV sequence advanced past its blocks");
  }
  length_ += count;
}

int PagedKvSequence::attach_prefix(std::span<const int> tokens, int max_positions) {
  if (length_ != 0 || !table_.empty()) throw Error("attach_prefix needs an empty sequence");
  int64_t parent = prefix_root_;
  while (length_ + kBlock <= max_positions && length_ + kBlock <= static_cast<int>(tokens.size())) {
    const BlockPool::Hit hit = pool_.lookup(parent, tokens.subspan(length_, kBlock));
    if (hit.block < 0) break;
    table_.push_back(hit.block);
    prefix_ids_.push_back(hit.prefix_id);
    parent = hit.prefix_id;
    length_ += kBlock;
  }
  return length_;
}

void PagedKvSequence::publish_full_blocks(std::span<const int> tokens) {
  const int full_blocks = length_ / kBlock;
  if (static_cast<int>(tokens.size()) < full_blocks * kBlock) throw Error("publish_full_blocks: too few tokens");
  while (static_cast<int>(prefix_ids_.size()) < full_blocks) {
    const int b = static_cast<int>(prefix_ids_.size());
    const int64_t parent = b == 0 ? prefix_root_ : prefix_ids_[b - 1];
    prefix_ids_.push_back(
        pool_.publish(table_[b], parent, tokens.subspan(static_cast<std::size_t>(b) * kBlock, kBlock)));
  }
}

void PagedKvSequence::release() {
  for (int id : table_) pool_.release(id);
  table_.clear();
  prefix_ids_.clear();
  length_ = 0;
}

}  // namespace minigen
