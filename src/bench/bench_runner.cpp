#include "bench/bench_runner.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "bench/bench_adapters.h"
#include "bench/bench_statistics.h"
#include "bench/bf16_drift.h"
#include "bench/greedy_decode.h"
#include "bench/lora_bench.h"
#include "bench/memory_bandwidth.h"
#include "bench/one_shot.h"
#include "bench/roofline.h"
#include "cache/kv_cache.h"
#include "checkpoint/lora_loader.h"

namespace minigen::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One untimed warm-up (first-touch of buffers, caches, the pool's threads waking up), then `repetitions` runs.
// Each run returns the seconds of its timed part, so untimed setup (a batch's prefill) can sit inside it.
template <class Run>
std::vector<double> timed_runs(int repetitions, Run&& run) {
  run();
  std::vector<double> seconds;
  for (int i = 0; i < repetitions; ++i) seconds.push_back(run());
  return seconds;
}

// "pp" 512 → "pp512". Built by appending: GCC 12 reports a false -Wrestrict for "literal" + std::to_string(…).
std::string numbered(std::string_view prefix, std::size_t number, std::string_view suffix = {}) {
  std::string name(prefix);
  name += std::to_string(number);
  name += suffix;
  return name;
}

TestResult named_test(std::string name, std::string kind) {
  TestResult test;
  test.name = std::move(name);
  test.kind = std::move(kind);
  return test;
}

// Greedy generation of `new_tokens` after `prompt` with the cache: prefill, then one token per step.
std::vector<int> generate_cached(Transformer& transformer, KvCache& cache, std::span<const int> prompt,
                                 int new_tokens) {
  cache.clear();
  std::vector<int> tokens{prefill_argmax(transformer, cache, prompt)};
  const std::vector<int> rest = greedy_decode(transformer, cache, tokens.front(), new_tokens - 1);
  tokens.insert(tokens.end(), rest.begin(), rest.end());
  return tokens;
}

// The same without the cache: step s re-feeds the prompt and the s tokens so far from an empty cache (P + s tokens).
std::vector<int> generate_uncached(Transformer& transformer, KvCache& cache, std::span<const int> prompt,
                                   int new_tokens) {
  std::vector<int> sequence(prompt.begin(), prompt.end());
  std::vector<int> tokens;
  while (static_cast<int>(tokens.size()) < new_tokens) {
    cache.clear();
    tokens.push_back(prefill_argmax(transformer, cache, sequence));
    sequence.push_back(tokens.back());
  }
  return tokens;
}

TestResult prompt_test(Transformer& transformer, KvCache& cache, std::span<const int> prompt, int repetitions) {
  const auto seconds = timed_runs(repetitions, [&] {
    cache.clear();
    const ForwardRow row{&cache, prompt, false};
    const auto start = Clock::now();
    transformer.forward(std::span(&row, 1));
    return seconds_since(start);
  });
  TestResult result = named_test(numbered("pp", prompt.size()), "prompt");
  result.tokens_per_second = per_second(seconds, static_cast<double>(prompt.size()));
  result.time_ms = milliseconds_per(seconds, 1);
  result.time_per = "call";
  return result;
}

// tg N: from an empty cache, feed a token, take the argmax of its logits, feed that — N times.
TestResult generate_test(Transformer& transformer, KvCache& cache, int first_token, int new_tokens, int repetitions) {
  const auto seconds = timed_runs(repetitions, [&] {
    cache.clear();
    const auto start = Clock::now();
    static_cast<void>(greedy_decode(transformer, cache, first_token, new_tokens));
    return seconds_since(start);
  });
  TestResult result = named_test(numbered("tg", new_tokens), "generate");
  result.tokens_per_second = per_second(seconds, new_tokens);
  result.time_ms = milliseconds_per(seconds, new_tokens);
  result.time_per = "token";
  return result;
}

// B rows, each with its own cache and a short prefix (prefilled, untimed), then N steps of one forward call with
// B rows of one token: the weights are read once per step for all B rows.
TestResult batch_decode_test(Transformer& transformer, const BenchOptions& options, int batch_size) {
  const ModelConfig& config = transformer.model().config;
  const int new_tokens = options.generate_tokens;
  std::vector<KvCache> caches;
  std::vector<std::vector<int>> prefixes;
  for (int b = 0; b < batch_size; ++b) {
    caches.emplace_back(config.kv_layout(options.kv_dtypes.front()), options.batch_prompt_tokens + new_tokens);
    prefixes.push_back(bench_prompt(options.batch_prompt_tokens, config.vocab_size, b + 1));
  }
  std::vector<KvCache*> cache_of_row;
  for (KvCache& cache : caches) cache_of_row.push_back(&cache);
  const auto seconds = timed_runs(options.repetitions, [&] {
    for (KvCache& cache : caches) cache.clear();
    const std::vector<int> first = prefill_argmax(transformer, cache_of_row, prefixes);  // untimed
    const auto start = Clock::now();
    static_cast<void>(greedy_decode(transformer, cache_of_row, first, new_tokens));
    return seconds_since(start);
  });
  TestResult result = named_test(numbered("b", batch_size, " decode"), "batch_decode");
  result.batch_size = batch_size;
  result.tokens_per_second = per_second(seconds, static_cast<double>(batch_size) * new_tokens);  // B·N / time
  result.time_ms = milliseconds_per(seconds, new_tokens);
  result.time_per = "step";
  return result;
}

// Time to first token: prefill P and take the argmax of the last position.
TestResult first_token_test(Transformer& transformer, KvCache& cache, std::span<const int> prompt, int repetitions) {
  const auto seconds = timed_runs(repetitions, [&] {
    cache.clear();
    const auto start = Clock::now();
    static_cast<void>(prefill_argmax(transformer, cache, prompt));
    return seconds_since(start);
  });
  TestResult result = named_test("ttft", "ttft");
  result.time_ms = milliseconds_per(seconds, 1);
  result.time_per = "call";
  return result;
}

// tg N without the cache, next to the same generation with it: their wall-time ratio beside the forward-token
// ratio (P·N + N(N−1)/2) ÷ (P + N − 1) that the module predicts it approaches.
TestResult uncached_generate_test(Transformer& transformer, KvCache& cache, std::span<const int> prompt, int new_tokens,
                                  int repetitions) {
  std::vector<double> cached_seconds;
  bool identical = true;
  const auto uncached_seconds = timed_runs(repetitions, [&] {
    auto start = Clock::now();
    const std::vector<int> with_cache = generate_cached(transformer, cache, prompt, new_tokens);
    cached_seconds.push_back(seconds_since(start));
    start = Clock::now();
    const std::vector<int> without_cache = generate_uncached(transformer, cache, prompt, new_tokens);
    const double seconds = seconds_since(start);
    identical = identical && with_cache == without_cache;
    return seconds;
  });
  cached_seconds.erase(cached_seconds.begin());  // the warm-up's
  TestResult result = named_test(numbered("tg", new_tokens, " no-cache"), "generate_no_cache");
  result.tokens_per_second = per_second(uncached_seconds, new_tokens);
  result.time_ms = milliseconds_per(uncached_seconds, new_tokens);
  result.time_per = "token";
  result.cached_total_ms = milliseconds_per(cached_seconds, 1);
  result.uncached_total_ms = milliseconds_per(uncached_seconds, 1);
  result.forward_tokens_cached = cached_forward_tokens(static_cast<int64_t>(prompt.size()), new_tokens);
  result.forward_tokens_uncached = uncached_forward_tokens(static_cast<int64_t>(prompt.size()), new_tokens);
  result.tokens_identical = identical;
  return result;
}

// ctxL tgN DTYPE: N greedy steps after an L-token prompt, where reading the cache, not the weights, grows to
// dominate a step — so the KV element type shows in the speed. The prompt is prefilled once, untimed, in chunks;
// every timed run cuts the cache back to it and decodes the same N tokens.
TestResult long_context_test(Transformer& transformer, const BenchOptions& options, int context_tokens, KvDType dtype) {
  const ModelConfig& config = transformer.model().config;
  const int steps = options.long_context_decode_tokens;
  KvCache cache(config.kv_layout(dtype), context_tokens + steps);
  const std::vector<int> prompt = bench_prompt(context_tokens, config.vocab_size, 0);
  int first = 0;
  for (int done = 0; done < context_tokens; done += kLongContextChunkTokens) {
    const int chunk = std::min(kLongContextChunkTokens, context_tokens - done);
    first = prefill_argmax(transformer, cache, std::span(prompt).subspan(done, chunk));
  }
  const auto seconds = timed_runs(options.repetitions, [&] {
    cache.truncate(context_tokens);
    const auto start = Clock::now();
    static_cast<void>(greedy_decode(transformer, cache, first, steps));
    return seconds_since(start);
  });
  std::string name = numbered("ctx", context_tokens);
  name += numbered(" tg", steps, " ");
  name += kv_dtype_name(dtype);
  TestResult result = named_test(std::move(name), "long_context");
  result.tokens_per_second = per_second(seconds, steps);
  result.time_ms = milliseconds_per(seconds, steps);
  result.time_per = "token";
  result.kv_dtype = dtype;
  result.kv_bytes = cache.bytes_used();
  return result;
}

std::string describe(const Transformer& transformer) {
  return weights_label(transformer.weight_type(), transformer.activations()) + " · " +
         std::to_string(transformer.threads()) + (transformer.threads() == 1 ? " thread" : " threads");
}

}  // namespace

std::vector<int> bench_prompt(int length, int vocab_size, int salt) {
  std::vector<int> ids(length);
  const int64_t ordinary = vocab_size - kFirstOrdinaryTokenId;
  for (int i = 0; i < length; ++i) {
    ids[i] = kFirstOrdinaryTokenId + static_cast<int>((int64_t{i} * 7919 + int64_t{salt} * 104729) % ordinary);
  }
  return ids;
}

std::vector<TestResult> run_configuration_tests(Transformer& transformer, const BenchOptions& options,
                                                std::ostream& progress,
                                                std::span<const std::shared_ptr<const LoraAdapter>> adapters) {
  const ModelConfig& config = transformer.model().config;
  const std::vector<int> prompt = bench_prompt(options.prompt_tokens, config.vocab_size, 0);
  KvCache cache(config.kv_layout(options.kv_dtypes.front()), options.prompt_tokens + options.generate_tokens);
  const std::string label = describe(transformer);
  std::vector<TestResult> tests;
  auto done = [&](TestResult test) {
    progress << "[bench] " << label << ": " << test.name << " done\n" << std::flush;
    tests.push_back(std::move(test));
  };
  done(prompt_test(transformer, cache, prompt, options.repetitions));
  done(generate_test(transformer, cache, prompt.front(), options.generate_tokens, options.repetitions));
  double batch1_tokens_per_second = 0;
  for (int batch_size : options.batch_sizes) {
    TestResult test = batch_decode_test(transformer, options, batch_size);
    if (batch_size == 1) batch1_tokens_per_second = test.tokens_per_second->mean;
    done(std::move(test));
  }
  for (TestResult& test : tests) {
    if (test.kind == "batch_decode" && batch1_tokens_per_second > 0) {
      test.speedup_vs_batch1 = test.tokens_per_second->mean / batch1_tokens_per_second;
    }
  }
  done(first_token_test(transformer, cache, prompt, options.repetitions));
  if (options.one_shot) {
    for (TestResult& test : one_shot_tests(transformer, options, tests[1])) done(std::move(test));
  }
  if (options.no_cache) {
    done(uncached_generate_test(transformer, cache, prompt, options.generate_tokens, options.repetitions));
  }
  for (int context_tokens : options.long_context_tokens) {
    for (KvDType dtype : options.kv_dtypes) done(long_context_test(transformer, options, context_tokens, dtype));
  }
  if (!adapters.empty()) {
    done(lora_generate_test(transformer, cache, prompt.front(), options.generate_tokens, options.repetitions,
                            *adapters.front()));
    done(lora_batch_test(transformer, options, adapters));
  }
  return tests;
}

BenchReport run_bench(const Model& model, const ModelDescription& description, const BenchOptions& options,
                      std::ostream& progress) {
  validate_for_model(options, model.config);
  // The adapters are built (or read) before anything is measured: a rank the model cannot take, or a file that
  // does not fit it, is an error before the first test.
  std::vector<std::shared_ptr<const LoraAdapter>> adapters;
  if (options.lora()) {
    const std::shared_ptr<const LoraAdapter> file =
        options.lora_path.empty() ? nullptr : load_lora_adapter(options.lora_path, model.config);
    adapters = bench_adapters(model.config, options.lora_rank, file, options.lora_adapters);
  }
  const auto start = Clock::now();
  BenchReport report;
  report.model = description;
  report.options = options;
  if (!adapters.empty()) {
    const LoraAdapter& first = *adapters.front();
    LoraDescription& lora = report.lora.emplace();
    lora.source = options.lora_path.empty() ? "random" : options.lora_path;
    lora.summary = first.summary();
    lora.count = static_cast<int>(adapters.size());
    lora.rank = first.max_rank();
    lora.parameters = first.parameter_count();
    lora.model_parameters = static_cast<int64_t>(model.config.parameter_count());
    if (options.lora_path.empty()) {
      lora.a_std = kLoraAStd;
      lora.b_std = kBenchLoraBStd;
    }
  }
  // Memory bandwidth on a shared host drifts from minute to minute, so a size is measured again whenever a bound
  // needs it (right after that configuration's tests) and the best of all its runs is kept, in first-seen order.
  std::vector<BandwidthMeasurement> bandwidth;
  auto measure_bandwidth = [&](ThreadPool& pool, std::size_t bytes) -> const BandwidthMeasurement& {
    progress << "[bench] memory read bandwidth, " << decimal_bytes(static_cast<double>(bytes)) << " buffer, "
             << pool.num_threads() << (pool.num_threads() == 1 ? " thread\n" : " threads\n") << std::flush;
    const BandwidthMeasurement measured = measure_read_bandwidth(bytes, pool, options.bandwidth_runs);
    for (BandwidthMeasurement& best : bandwidth) {
      if (best.threads != measured.threads || best.buffer_bytes != measured.buffer_bytes) continue;
      const int runs = best.runs + measured.runs;
      if (measured.bytes_per_second > best.bytes_per_second) best = measured;
      best.runs = runs;
      return best;
    }
    bandwidth.push_back(measured);
    return bandwidth.back();
  };

  for (int threads : options.thread_counts) {
    ThreadPool pool(threads);
    // Copied, not referenced: later measurements may grow the vector.
    const double dram_bytes_per_second = measure_bandwidth(pool, options.dram_buffer_bytes).bytes_per_second;
    for (const auto& [type, activations] : weight_configurations(options)) {
      Transformer transformer(model, pool, type, activations);
      ConfigurationResult configuration;
      configuration.weight_type = type;
      configuration.activations = activations;
      configuration.threads = threads;
      configuration.weight_bytes = transformer.weight_bytes();
      configuration.tests = run_configuration_tests(transformer, options, progress, adapters);

      // The bound uses the bandwidth at the working set a decode step streams: the cache-sized buffer when the
      // weights stay in the last-level cache between steps, else DRAM.
      BandwidthBound& bound = configuration.bound;
      bound.cache_resident = configuration.weight_bytes <= kCacheResidentBytes;
      const BandwidthMeasurement& measured =
          measure_bandwidth(pool, bound.cache_resident ? configuration.weight_bytes : options.dram_buffer_bytes);
      bound.bytes_per_second = measured.bytes_per_second;
      bound.buffer_bytes = measured.buffer_bytes;
      bound.bound_tokens_per_second = bound_tokens_per_second(measured.bytes_per_second, configuration.weight_bytes);
      const TestResult& generate = configuration.tests[1];
      bound.generate_test = generate.name;
      bound.generate_tokens_per_second = generate.tokens_per_second->mean;
      bound.fraction_of_bound = bound.generate_tokens_per_second / bound.bound_tokens_per_second;

      progress << "[bench] compute peak, " << weights_label(configuration) << ", " << threads
               << (threads == 1 ? " thread\n" : " threads\n") << std::flush;
      configuration.peak = measure_compute_peak(type, transformer.activations(), pool);
      RooflineInputs roofline;
      roofline.weight_bytes_per_second = bound.bytes_per_second;
      roofline.dram_bytes_per_second = dram_bytes_per_second;
      roofline.peak_ops_per_second = configuration.peak.ops_per_second;
      assign_bounds(configuration, model.config, options, roofline);
      report.configurations.push_back(std::move(configuration));
    }
  }

  const bool has_bf16 = std::find(options.weight_types.begin(), options.weight_types.end(), WeightType::kBF16) !=
                        options.weight_types.end();
  if (has_bf16) {
    progress << "[bench] bf16 drift against f32\n" << std::flush;
    ThreadPool pool(options.thread_counts.front());
    const std::vector<int> prompt = bench_prompt(options.prompt_tokens, model.config.vocab_size, 0);
    report.drift = measure_bf16_drift(model, pool, prompt, options.generate_tokens);
  }
  report.bandwidth = std::move(bandwidth);
  report.elapsed_s = seconds_since(start);
  return report;
}

}  // namespace minigen::bench
