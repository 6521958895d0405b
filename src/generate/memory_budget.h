#pragma once
// What a generation run will hold at its peak, estimated from its shape before anything is allocated, and the
// budget it must fit. Without it a flag such as --num-return-sequences 1000000 (or a long no-cache run) would be
// found out only when the machine ran out of memory; with it the run is refused with one message saying what to
// lower.
#include <cstdint>
#include <string>
#include <string_view>

#include "model/config.h"

namespace minigen {

// Rows of one batch (generate's --num-return-sequences, bench's -b): far beyond what the tiny models or the lab
// use (30 rows), and a small enough number of per-row caches, samplers and streams to keep bookkeeping trivial.
inline constexpr int kMaxBatchRows = 256;

struct RunShape {
  int64_t rows = 1;
  int64_t tokens_per_row = 0;          // the longest a row gets: prompt + new tokens
  int64_t max_tokens_per_forward = 0;  // fed in one forward call over all rows (prefill, or no-cache re-feeding)
  KvDType kv_dtype = KvDType::kF32;    // what each cached element costs
};

struct MemoryEstimate {
  uint64_t kv_cache_bytes = 0;    // rows · tokens · kv_bytes_per_token (in the run's KV dtype)
  uint64_t activation_bytes = 0;  // the forward pass's scratch for max_tokens_per_forward tokens
  uint64_t logits_bytes = 0;      // per row: the last logits and the sampler's working copies
  uint64_t total() const { return kv_cache_bytes + activation_bytes + logits_bytes; }
};

MemoryEstimate estimate_run_memory(const ModelConfig& config, const RunShape& shape);

// Half the machine's memory (physical memory, or the cgroup's limit when that is lower): the rest is for the
// weights, the packed copy the kernels read, and everything else on the machine.
uint64_t run_memory_budget_bytes();

// Throws minigen::Error when the estimate exceeds `budget_bytes`, naming the sizes and ending with `advice` (which
// flags to lower). A shape whose sizes overflow 64 bits is refused the same way.
void check_run_memory(const ModelConfig& config, const RunShape& shape, std::string_view advice,
                      uint64_t budget_bytes = run_memory_budget_bytes());

// "1.5 GiB", "12.0 MiB", "800 bytes".
std::string memory_size_text(uint64_t bytes);

}  // namespace minigen
