#include "bench/greedy_decode.h"

#include "sampling/token_choice.h"

namespace minigen::bench {
namespace {

std::span<const float> row_logits(const std::vector<float>& logits, std::size_t row, std::size_t vocab) {
  return std::span(logits).subspan(row * vocab, vocab);
}

const LoraAdapter* adapter_of(std::span<const LoraAdapter* const> adapters, std::size_t row) {
  return adapters.empty() ? nullptr : adapters[row];
}

}  // namespace

std::vector<int> prefill_argmax(Transformer& transformer, std::span<KvCache* const> caches,
                                std::span<const std::vector<int>> prompts,
                                std::span<const LoraAdapter* const> adapters) {
  std::vector<ForwardRow> rows;
  for (std::size_t b = 0; b < caches.size(); ++b) {
    rows.push_back(ForwardRow{caches[b], prompts[b], false, adapter_of(adapters, b)});
  }
  const std::vector<float>& logits = transformer.forward(rows);
  const std::size_t vocab = transformer.model().config.vocab_size;
  std::vector<int> first(caches.size());
  for (std::size_t b = 0; b < caches.size(); ++b) first[b] = argmax(row_logits(logits, b, vocab));
  return first;
}

int prefill_argmax(Transformer& transformer, KvCache& cache, std::span<const int> prompt, const LoraAdapter* adapter) {
  const ForwardRow row{&cache, prompt, false, adapter};
  return argmax(transformer.forward(std::span(&row, 1)));
}

std::vector<std::vector<int>> greedy_decode(Transformer& transformer, std::span<KvCache* const> caches,
                                            std::span<const int> first, int steps,
                                            std::span<const LoraAdapter* const> adapters) {
  const std::size_t batch = caches.size();
  const std::size_t vocab = transformer.model().config.vocab_size;
  std::vector<int> next(first.begin(), first.end());
  std::vector<std::vector<int>> chosen(batch);
  for (std::vector<int>& tokens : chosen) tokens.reserve(steps);
  std::vector<ForwardRow> rows(batch);
  for (int step = 0; step < steps; ++step) {
    for (std::size_t b = 0; b < batch; ++b)
      rows[b] = ForwardRow{caches[b], std::span(&next[b], 1), false, adapter_of(adapters, b)};
    const std::vector<float>& logits = transformer.forward(rows);
    for (std::size_t b = 0; b < batch; ++b) {
      next[b] = argmax(row_logits(logits, b, vocab));
      chosen[b].push_back(next[b]);
    }
  }
  return chosen;
}

std::vector<int> greedy_decode(Transformer& transformer, KvCache& cache, int first, int steps,
                               const LoraAdapter* adapter) {
  KvCache* const caches[] = {&cache};
  const LoraAdapter* const adapters[] = {adapter};
  return std::move(greedy_decode(transformer, caches, std::span(&first, 1), steps, adapters).front());
}

}  // namespace minigen::bench
