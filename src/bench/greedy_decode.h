#pragma once
// The greedy loop every benchmark shares, without samplers or counters (the real loop is generate/generate.h): the
// timings measure forward calls and an argmax, nothing else.
#include <span>
#include <vector>

#include "cache/kv_cache.h"
#include "model/transformer.h"

namespace minigen::bench {

// Feeds each row its prompt in one forward call (row b into caches[b], appended to what it holds) and returns the
// argmax of each row's last position: the first generated token of each row. Row b runs with adapters[b] (LoRA;
// nullptr or an empty span: the model's own weights alone).
std::vector<int> prefill_argmax(Transformer& transformer, std::span<KvCache* const> caches,
                                std::span<const std::vector<int>> prompts,
                                std::span<const LoraAdapter* const> adapters = {});
int prefill_argmax(Transformer& transformer, KvCache& cache, std::span<const int> prompt,
                   const LoraAdapter* adapter = nullptr);

// `steps` decode steps: each feeds every row its last token (all rows in one forward call, so the weights are read
// once per step for all of them) and appends the argmax. Row b starts by feeding first[b]; the result holds each
// row's `steps` chosen tokens. Adapters as for prefill_argmax.
std::vector<std::vector<int>> greedy_decode(Transformer& transformer, std::span<KvCache* const> caches,
                                            std::span<const int> first, int steps,
                                            std::span<const LoraAdapter* const> adapters = {});
std::vector<int> greedy_decode(Transformer& transformer, KvCache& cache, int first, int steps,
                               const LoraAdapter* adapter = nullptr);

}  // namespace minigen::bench
