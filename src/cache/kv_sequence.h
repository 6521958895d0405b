#pragma once
// What the forward pass needs from one sequence's KV storage, whoever owns the memory: the contiguous KvCache of
// `minigen generate`, or the server's paged sequence whose blocks come from a shared pool (and may be shared with
// other sequences through the prefix cache). Either way the attention kernel sees a list of 16-position blocks.
#include <cstddef>
#include <vector>

#include "ops/kv_block.h"

namespace minigen {

class KvSequence {
 public:
  virtual ~KvSequence() = default;

  // Positions already computed and stored (the cached prefix).
  virtual int length() const = 0;
  virtual const KvBlockLayout& layout() const = 0;
  // Makes room for positions [length, length + count) before a forward call writes them; throws minigen::Error
  // when the storage cannot grow.
  virtual void reserve_for(int count) = 0;
  // Stores K and V rows ([kv_head][head_dim]) of `position` in `layer`, converted to the layout's dtype.
  virtual void write(int layer, int position, const float* key_row, const float* value_row) = 0;
  // The blocks holding positions [0, positions) of `layer`, for the attention kernel.
  virtual void block_pointers(int layer, int positions, std::vector<const std::byte*>& blocks) const = 0;
  // The forward call wrote `count` new positions; they become part of the cached prefix.
  virtual void advance(int count) = 0;
};

}  // namespace minigen
