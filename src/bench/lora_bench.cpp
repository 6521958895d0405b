#include "bench/lora_bench.h"

#include <chrono>
#include <functional>
#include <string>

#include "bench/bench_runner.h"
#include "bench/bench_statistics.h"
#include "bench/greedy_decode.h"
#include "core/error.h"

namespace minigen::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One untimed warm-up of every variant, then `repetitions` rounds in which each variant runs once, in order. Each
// run returns the seconds of its timed part. Returns the seconds per variant.
std::vector<std::vector<double>> interleaved_runs(int repetitions, const std::vector<std::function<double()>>& runs) {
  for (const auto& run : runs) run();
  std::vector<std::vector<double>> seconds(runs.size());
  for (int i = 0; i < repetitions; ++i) {
    for (std::size_t v = 0; v < runs.size(); ++v) seconds[v].push_back(runs[v]());
  }
  return seconds;
}

// The rank in a test's name: the adapter's largest (a file may mix ranks).
std::string lora_name(int new_tokens, const LoraAdapter& adapter) {
  std::string name = "tg";
  name += std::to_string(new_tokens);
  name += " lora r";
  name += std::to_string(adapter.max_rank());
  return name;
}

}  // namespace

TestResult lora_generate_test(Transformer& transformer, KvCache& cache, int first_token, int new_tokens,
                              int repetitions, const LoraAdapter& adapter) {
  std::vector<int> base_tokens;
  std::vector<int> lora_tokens;
  const auto decode = [&](const LoraAdapter* with, std::vector<int>& tokens) {
    cache.clear();
    const auto start = Clock::now();
    tokens = greedy_decode(transformer, cache, first_token, new_tokens, with);
    return seconds_since(start);
  };
  const auto seconds = interleaved_runs(
      repetitions, {[&] { return decode(nullptr, base_tokens); }, [&] { return decode(&adapter, lora_tokens); }});
  TestResult result;
  result.name = lora_name(new_tokens, adapter);
  result.kind = "lora_generate";
  result.tokens_per_second = per_second(seconds[1], new_tokens);
  result.time_ms = milliseconds_per(seconds[1], new_tokens);
  result.time_per = "token";
  LoraComparison lora;
  lora.base_test = "tg" + std::to_string(new_tokens);
  lora.base_tokens_per_second = per_second(seconds[0], new_tokens);
  lora.fraction_of_base = result.tokens_per_second->mean / lora.base_tokens_per_second.mean;
  lora.target_fraction = kLoraDecodeTarget;
  lora.greedy_tokens = new_tokens;
  for (int i = 0; i < new_tokens && lora.first_difference < 0; ++i) {
    if (base_tokens[i] != lora_tokens[i]) lora.first_difference = i;
  }
  lora.rows_differing_from_base = lora.first_difference >= 0 ? 1 : 0;
  result.lora = lora;
  return result;
}

TestResult lora_batch_test(Transformer& transformer, const BenchOptions& options,
                           std::span<const std::shared_ptr<const LoraAdapter>> adapters) {
  const ModelConfig& config = transformer.model().config;
  const int rows = options.lora_batch_rows;
  const int count = static_cast<int>(adapters.size());
  const int new_tokens = options.generate_tokens;
  if (count < 1 || rows % count != 0) {
    throw Error("the LoRA batch's " + std::to_string(rows) + " rows must spread evenly over its " +
                std::to_string(count) + " adapters");
  }
  std::vector<KvCache> caches;
  std::vector<std::vector<int>> prefixes;
  for (int b = 0; b < rows; ++b) {
    caches.emplace_back(config.kv_layout(options.kv_dtypes.front()), options.batch_prompt_tokens + new_tokens);
    prefixes.push_back(bench_prompt(options.batch_prompt_tokens, config.vocab_size, b + 1));
  }
  // The whole batch, and each adapter's rows (b mod count = g) as a group of their own.
  struct Rows {
    std::vector<KvCache*> caches;
    std::vector<std::vector<int>> prefixes;
    std::vector<const LoraAdapter*> adapters;
    std::vector<int> row_index;
  };
  Rows all;
  std::vector<Rows> groups(count);
  for (int b = 0; b < rows; ++b) {
    const LoraAdapter* adapter = adapters[b % count].get();
    for (Rows* into : {&all, &groups[b % count]}) {
      into->caches.push_back(&caches[b]);
      into->prefixes.push_back(prefixes[b]);
      into->adapters.push_back(adapter);
      into->row_index.push_back(b);
    }
  }
  // Each row's greedy tokens (the prefill's first, then the decoded ones) in the last run of each variant.
  using Tokens = std::vector<std::vector<int>>;
  Tokens base_tokens(rows), mixed_tokens(rows), separate_tokens(rows);
  const auto decode = [&](const Rows& group, std::span<const LoraAdapter* const> with, Tokens& tokens) {
    for (KvCache* cache : group.caches) cache->clear();
    const std::vector<int> first = prefill_argmax(transformer, group.caches, group.prefixes, with);  // untimed
    const auto start = Clock::now();
    const Tokens rest = greedy_decode(transformer, group.caches, first, new_tokens, with);
    const double seconds = seconds_since(start);
    for (std::size_t i = 0; i < group.row_index.size(); ++i) {
      std::vector<int>& row = tokens[group.row_index[i]];
      row.assign(1, first[i]);
      row.insert(row.end(), rest[i].begin(), rest[i].end());
    }
    return seconds;
  };
  const auto seconds = interleaved_runs(options.repetitions, {[&] { return decode(all, {}, base_tokens); },
                                                              [&] { return decode(all, all.adapters, mixed_tokens); },
                                                              [&] {
                                                                double total = 0;
                                                                for (const Rows& group : groups)
                                                                  total +=
                                                                      decode(group, group.adapters, separate_tokens);
                                                                return total;
                                                              }});
  const double row_tokens = static_cast<double>(rows) * new_tokens;  // B·N per run
  TestResult result;
  result.name = "b" + std::to_string(rows) + " " + std::to_string(count) + (count == 1 ? " adapter" : " adapters");
  result.kind = "lora_batch";
  result.batch_size = rows;
  result.tokens_per_second = per_second(seconds[1], row_tokens);
  result.time_ms = milliseconds_per(seconds[1], new_tokens);
  result.time_per = "step";
  LoraComparison lora;
  lora.adapters = count;
  lora.rows = rows;
  lora.base_test = "b" + std::to_string(rows) + " decode";
  lora.base_tokens_per_second = per_second(seconds[0], row_tokens);
  lora.fraction_of_base = result.tokens_per_second->mean / lora.base_tokens_per_second.mean;
  lora.target_fraction = kLoraMixedBatchTarget;
  lora.separate_tokens_per_second = per_second(seconds[2], row_tokens);
  lora.mixed_over_separate = result.tokens_per_second->mean / lora.separate_tokens_per_second->mean;
  lora.mixed_equals_separate = mixed_tokens == separate_tokens;
  lora.greedy_tokens = new_tokens + 1;
  for (int b = 0; b < rows; ++b) lora.rows_differing_from_base += mixed_tokens[b] != base_tokens[b] ? 1 : 0;
  result.lora = lora;
  return result;
}

}  // namespace minigen::bench
