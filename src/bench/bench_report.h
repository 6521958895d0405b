#pragma once
// What one `minigen bench` run measured, as plain data, and its two renderings: text with a llama-bench-style
// markdown table (for people) and one JSON object with every number (for scripts).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_options.h"
#include "bench/bench_statistics.h"
#include "bench/compute_peak.h"
#include "bench/memory_bandwidth.h"
#include "ops/weight_type.h"

namespace minigen::bench {

struct SystemDescription {
  std::string cpu_model;          // "model name" of /proc/cpuinfo
  int cores = 0;                  // hardware threads the OS offers
  std::string simd_target;        // what Highway dispatches to
  std::string openblas_coretype;  // $OPENBLAS_CORETYPE, empty when unset
};

struct ModelDescription {
  std::string source;  // the path, or "random:FAMILY"
  std::string family;
  std::size_t parameters = 0;
  int context = 0;
  int vocab_size = 0;
};

// A LoRA test against the run it is measured against (bench/lora_bench.h): both timed in the same repetitions, in
// turn, so that their ratio is the adapters' cost rather than the shared machine's drift between two tests.
struct LoraComparison {
  int adapters = 1;  // distinct adapters among the rows
  int rows = 1;
  std::string base_test;  // what it is measured against: "tg128", "b32 decode" (the same rows without adapters)
  Statistic base_tokens_per_second;
  double fraction_of_base = 0;  // mean tokens/s ÷ the base's mean
  double target_fraction = 0;   // the target for that fraction: reported, never asserted
  // b32 4 adapters only: "one engine per adapter", each adapter's rows decoded as a batch of their own, one batch
  // after another on the same cores; mixed ÷ separate throughput.
  std::optional<Statistic> separate_tokens_per_second;
  std::optional<double> mixed_over_separate;
  bool mixed_equals_separate = true;  // each row chose the same tokens in the mixed batch as in its own batch
  int greedy_tokens = 0;              // per row
  int rows_differing_from_base = 0;   // rows whose greedy tokens differ from the same row's without an adapter
  int first_difference = -1;          // tg: first token that differs from the base's (−1: none)
};

// A one-shot test against what it is measured against: the fresh process's TTFT against the warm TTFT of the same
// prompt in this process, or its inter-token time against tg's decode step (bench/one_shot.h).
struct OneShotComparison {
  std::string against;                   // "warm ttft", "decode step after the prompt"
  Statistic against_ms;                  // per call (warm TTFT) or per token (tg)
  double ratio = 0;                      // this test's mean ÷ against's mean
  double target_ratio = 0;               // the target, at most: reported, never asserted
  int prompt_tokens = 0;                 // the text's tokens
  int new_tokens = 0;                    // greedy, eos ignored
  std::optional<Statistic> load_ms;      // ttft: the fresh process's load (files, packing, threads), before TTFT
  std::optional<Statistic> warm_itl_ms;  // itl: the same generation's inter-token time in this process
  std::optional<Statistic> tg_step_ms;   // itl: tg's step, decoding from an empty cache
  std::string tg_name;                   // itl: that test's name, "tg128"
  bool tokens_identical = true;          // the fresh process chose the warm run's tokens
};

// A test against the ceiling of the resource it runs into (bench/roofline.h).
struct TestBound {
  std::string resource;  // "memory bandwidth" or "compute"
  double time_ms = 0;    // the least time per time_per that resource allows
  double fraction = 0;   // time_ms ÷ the test's mean time: 1 is the ceiling
};

struct TestResult {
  std::string name;  // llama-bench style: "pp512", "tg128", "b8 decode", "ttft", "tg128 no-cache", "tg128 lora r16"
  std::string kind;  // "prompt", "generate", "batch_decode", "ttft", "generate_no_cache", "long_context",
                     // "lora_generate", "lora_batch", "one_shot_ttft", "one_shot_itl"
  int batch_size = 1;
  std::optional<Statistic> tokens_per_second;  // none for ttft, which is a latency
  Statistic time_ms;                           // per time_per
  std::string time_per;                        // "call", "token" or "step"
  std::optional<double> speedup_vs_batch1;     // batch decode: tokens/s ÷ the b1 test's, when b1 was measured
  // generate_no_cache: the same generation with the cache, and how the two compare.
  std::optional<Statistic> cached_total_ms;
  std::optional<Statistic> uncached_total_ms;
  int64_t forward_tokens_cached = 0;    // P + N − 1
  int64_t forward_tokens_uncached = 0;  // P·N + N(N−1)/2
  bool tokens_identical = true;         // the cache changes no token
  // long_context: the cache's element type, and its bytes after the last step (P + N positions).
  std::optional<KvDType> kv_dtype;
  std::size_t kv_bytes = 0;
  std::optional<LoraComparison> lora;
  std::optional<OneShotComparison> one_shot;
  std::optional<TestBound> bound;
};

// tg against the bandwidth ceiling: bound = bandwidth ÷ weight bytes.
struct BandwidthBound {
  double bytes_per_second = 0;
  std::size_t buffer_bytes = 0;
  bool cache_resident = false;  // the weights fit kCacheResidentBytes, so the cache-sized buffer's number is used
  double bound_tokens_per_second = 0;
  std::string generate_test;  // "tg128"
  double generate_tokens_per_second = 0;
  double fraction_of_bound = 0;
};

struct ConfigurationResult {
  WeightType weight_type = WeightType::kF32;
  std::optional<ActivationCodes> activations;  // q8/q4 codes asked for with --activations; nullopt: the default
  int threads = 1;
  std::size_t weight_bytes = 0;  // Transformer::weight_bytes(): what one decode step reads
  std::vector<TestResult> tests;
  BandwidthBound bound;
  ComputePeak peak;  // the arithmetic ceiling of this weight type's kernel on these threads
};

// "q8", or "q8·int8" when --activations chose codes other than the type's default.
std::string weights_label(const ConfigurationResult& configuration);

// bf16 against f32 weights on the same prompt.
struct DriftResult {
  int prompt_tokens = 0;
  int threads = 1;
  double max_abs_logit_difference = 0;  // over every position of the prefill and the whole vocabulary
  int64_t logits_compared = 0;
  int f32_last_argmax = -1;
  int bf16_last_argmax = -1;
  int greedy_tokens = 0;      // N greedy tokens generated by each
  int greedy_identical = 0;   // positions where both chose the same token
  int first_divergence = -1;  // first differing position, −1 when all agree
};

// The adapters of the LoRA tests.
struct LoraDescription {
  std::string source;      // "random" or the adapter file
  std::string summary;     // LoraAdapter::summary(): "q_proj, o_proj in 8 of 8 layers, rank 16"
  int count = 0;           // adapters in the mixed batch (random: seeds 1 … count; a file: it and count − 1 copies)
  int rank = 0;            // the largest
  int64_t parameters = 0;  // of one adapter: Σ rank · (in + out)
  int64_t model_parameters = 0;  // the base model's
  float a_std = 0;               // random adapters: A ~ N(0, a_std²), B ~ N(0, b_std²)
  float b_std = 0;
};

struct BenchReport {
  SystemDescription system;
  ModelDescription model;
  BenchOptions options;
  std::vector<BandwidthMeasurement> bandwidth;  // best per (threads, buffer size); runs counts all of them
  std::vector<ConfigurationResult> configurations;
  std::optional<DriftResult> drift;
  std::optional<LoraDescription> lora;
  double elapsed_s = 0;
};

// | model | weights | threads | test | t/s (mean ± sd) | time (mean ± sd) | vs |, one row per test.
std::string render_table(const BenchReport& report);
// Header (CPU, SIMD, model, settings), the table, the bandwidth and bound arithmetic, the bf16 drift.
std::string render_text(const BenchReport& report);
nlohmann::json report_json(const BenchReport& report);

// "12,345.68 ± 9.10": thousands separators, `decimals` digits after the point.
std::string mean_plus_minus(const Statistic& statistic, int decimals);
// Decimal units, as bandwidths are quoted: 19,398,656 B → "19.4 MB", 1,073,741,824 B → "1.07 GB".
std::string decimal_bytes(double bytes);

}  // namespace minigen::bench
