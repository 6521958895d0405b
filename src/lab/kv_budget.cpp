#include "lab/kv_budget.h"

#include "cache/kv_cache.h"
#include "core/error.h"

namespace minigen::lab {

int64_t sequences_in_budget(uint64_t budget_bytes, uint64_t weights_bytes, std::size_t kv_bytes_per_token,
                            int length_tokens) {
  if (kv_bytes_per_token == 0 || length_tokens < 1) throw Error("a sequence must hold at least one cached byte");
  if (weights_bytes >= budget_bytes) return 0;
  const uint64_t bytes_per_sequence = static_cast<uint64_t>(kv_bytes_per_token) * static_cast<uint64_t>(length_tokens);
  return static_cast<int64_t>((budget_bytes - weights_bytes) / bytes_per_sequence);
}

uint64_t kv_bytes_used_at(const ModelConfig& config, int length_tokens, KvDType dtype) {
  KvCache cache(config.kv_layout(dtype), length_tokens);
  cache.advance(length_tokens);
  return cache.bytes_used();
}

}  // namespace minigen::lab
