#pragma once
// How many sequences a memory budget can serve at once: the arithmetic behind "the cache size decides how many
// users a server holds", and the bytes a cache of some length holds.
#include <cstddef>
#include <cstdint>

#include "model/config.h"

namespace minigen::lab {

// Sequences of `length_tokens` tokens whose KV caches fit in what `budget_bytes` leaves after `weights_bytes`:
// ⌊(budget − weights) / (bytes_per_token · length)⌋, 0 when the weights alone do not fit.
int64_t sequences_in_budget(uint64_t budget_bytes, uint64_t weights_bytes, std::size_t kv_bytes_per_token,
                            int length_tokens);

// The bytes a KvCache of this model holds at `length_tokens` positions, read from a real cache (the forward pass
// would write them; only the size matters here).
uint64_t kv_bytes_used_at(const ModelConfig& config, int length_tokens, KvDType dtype);

}  // namespace minigen::lab
