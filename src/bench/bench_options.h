#pragma once
// What `minigen bench` measures, as plain data, and the checks that turn bad flags into one clear error.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/config.h"
#include "ops/kv_dtype.h"
#include "ops/weight_type.h"

namespace minigen::bench {

// The minigen vocabularies begin with 36 added tokens (tokenizer/minimind_vocab_layout.h); the bench's prompt
// ids stay above them so that no chat-control token is fed.
inline constexpr int kFirstOrdinaryTokenId = 36;

// The long-context test prefills its prompt in chunks of this many tokens (the exactness contract makes chunked
// prefill give the bits of one call), so a 16k prompt needs no 16k-token activations.
inline constexpr int kLongContextChunkTokens = 512;

// What a one-shot run needs: the prompt file, the same text as the model's tokenizer encodes it (what `generate -f`
// feeds), and how to start minigen on the same model.
struct OneShotPrompt {
  std::filesystem::path text_path;
  std::vector<int> ids;
  std::filesystem::path program;             // this minigen executable
  std::vector<std::string> model_arguments;  // -m PATH, and --tokenizer / --heads when they were given
};

struct BenchOptions {
  int prompt_tokens = 512;                    // pp P, TTFT and the no-cache prompt
  int generate_tokens = 128;                  // tg N, and the decode steps of every batch test
  std::vector<int> batch_sizes = {1, 8, 32};  // rows of the batch decode tests
  std::vector<int> thread_counts;             // one pool per entry
  std::vector<WeightType> weight_types = {WeightType::kF32};
  // q8/q4 activation codes, each run for every q8/q4 type of weight_types (q4 only with int8); empty: each type's
  // default. f32, f16 and bf16 run once whatever this holds.
  std::vector<ActivationCodes> activations;
  bool no_cache = false;  // also generate without the cache (slow: P·N + N(N−1)/2 tokens)
  int repetitions = 5;    // measured runs per test, after one warm-up run
  bool quick = false;
  int batch_prompt_tokens = 16;                          // each batch row's prefix, prefilled before the timed steps
  std::size_t dram_buffer_bytes = std::size_t{1} << 30;  // far beyond any last-level cache
  int bandwidth_runs = 5;                                // the best of these is the bandwidth
  // KV cache element types: the first is the cache of every test above; the long-context test runs each.
  std::vector<KvDType> kv_dtypes = {KvDType::kF32};
  std::vector<int> long_context_tokens;  // prompt lengths of the long-context decode test; empty: not run
  int long_context_decode_tokens = 32;   // decoded after each long prompt
  // The LoRA tests (bench/lora_bench.h), run when one of the two is set: random MiniMind-style adapters of this rank,
  // or a real adapter file (and copies of it).
  int lora_rank = 0;
  std::string lora_path;
  int lora_batch_rows = 32;  // the mixed batch's rows, row b with adapter b mod lora_adapters
  int lora_adapters = 4;

  // The one-shot tests (bench/one_shot.h): `minigen generate -f TEXT --greedy` run as a fresh process, next to the
  // same generation warm in this process. Set by the CLI, which has the tokenizer and knows its own executable.
  std::optional<OneShotPrompt> one_shot;

  bool lora() const { return lora_rank > 0 || !lora_path.empty(); }
};

// The flags as typed. Numbers arrive as text so that every bad value — "x", "0", "1,,2" — becomes one
// minigen::Error naming the flag, like all bad input in minigen (CLI11's own messages span two lines).
struct BenchFlagValues {
  std::optional<std::string> prompt_tokens;
  std::optional<std::string> generate_tokens;
  std::optional<std::string> batch_sizes;
  std::optional<std::string> threads;
  std::optional<std::string> weights;
  std::optional<std::string> activations;
  std::optional<std::string> repetitions;
  std::optional<std::string> kv_dtypes;
  std::optional<std::string> long_context;
  std::optional<std::string> lora_rank;
  std::optional<std::string> lora_path;
  bool no_cache = false;
  bool quick = false;
};

// Flags given win; the rest are the defaults, or the smaller --quick defaults (P 64, N 16, b 1,4, 2 repetitions,
// a 512 MiB DRAM buffer). `default_threads` is used when --threads is not given.
BenchOptions bench_options_from_flags(const BenchFlagValues& flags, int default_threads);

// Throws minigen::Error when a prompt plus its generated tokens would not fit the model's context, a batch (the LoRA
// tests' mixed batch too) would not fit the memory budget, or the vocabulary is too small to hold prompt tokens that
// are not special tokens.
void validate_for_model(const BenchOptions& options, const ModelConfig& config);

// "512" → 512; anything that is not a whole number in [1, max_value] is an error naming `flag`.
int parse_positive_int(std::string_view flag, std::string_view text, int max_value);
// "1,8,32" → {1, 8, 32}; each value as parse_positive_int.
std::vector<int> parse_positive_int_list(std::string_view flag, std::string_view text, int max_value);
// "f32,bf16" → {kF32, kBF16}; an unknown name is an error listing the known ones; repeats are dropped.
std::vector<WeightType> parse_weight_type_list(std::string_view text);
// "f32,int8" → {kF32, kInt8}; the same rules.
std::vector<KvDType> parse_kv_dtype_list(std::string_view text);
// "int16,int8" → {kInt16, kInt8}; the same rules.
std::vector<ActivationCodes> parse_activation_codes_list(std::string_view text);

// The (weights, activation codes) pairs a bench runs, in order: each weight type of `options`, a q8/q4 one once per
// entry of options.activations (q4 × int16 left out: q4 takes int8 only), nullopt for the type's default. Throws
// minigen::Error when --activations leaves a quantized type nothing to run, or no type of the list is quantized.
std::vector<std::pair<WeightType, std::optional<ActivationCodes>>> weight_configurations(const BenchOptions& options);

}  // namespace minigen::bench
