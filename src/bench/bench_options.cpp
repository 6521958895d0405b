#include "bench/bench_options.h"

#include <algorithm>
#include <charconv>

#include "core/error.h"
#include "generate/memory_budget.h"

namespace minigen::bench {
namespace {

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return parts;
    start = comma + 1;
  }
}

}  // namespace

int parse_positive_int(std::string_view flag, std::string_view text, int max_value) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 1 || value > max_value) {
    throw Error(std::string(flag) + " takes whole numbers from 1 to " + std::to_string(max_value) + ", got '" +
                std::string(text) + "'");
  }
  return value;
}

std::vector<int> parse_positive_int_list(std::string_view flag, std::string_view text, int max_value) {
  std::vector<int> values;
  for (std::string_view part : split_commas(text)) values.push_back(parse_positive_int(flag, part, max_value));
  return values;
}

namespace {

// The distinct values of a comma-separated list, in order, each read by `parse` (which throws minigen::Error for a
// name it does not know); `refusal`, when not empty, replaces that message with "REFUSAL, got 'NAME'".
template <class Value, class Parse>
std::vector<Value> distinct_values(std::string_view text, Parse parse, const std::string& refusal) {
  std::vector<Value> values;
  for (std::string_view part : split_commas(text)) {
    std::optional<Value> value;
    try {
      value = parse(part);
    } catch (const Error&) {
      if (refusal.empty()) throw;
      throw Error(refusal + ", got '" + std::string(part) + "'");
    }
    if (std::find(values.begin(), values.end(), *value) == values.end()) values.push_back(*value);
  }
  return values;
}

}  // namespace

std::vector<WeightType> parse_weight_type_list(std::string_view text) {
  return distinct_values<WeightType>(text, parse_weight_type,
                                     "--weights takes f32, f16, bf16, q8 and q4, comma-separated");
}

std::vector<KvDType> parse_kv_dtype_list(std::string_view text) {
  // parse_kv_dtype's own message names the flag and the choices.
  return distinct_values<KvDType>(text, parse_kv_dtype, "");
}

std::vector<ActivationCodes> parse_activation_codes_list(std::string_view text) {
  return distinct_values<ActivationCodes>(text, parse_activation_codes,
                                          "--activations takes int16 and int8, comma-separated");
}

std::vector<std::pair<WeightType, std::optional<ActivationCodes>>> weight_configurations(const BenchOptions& options) {
  std::vector<std::pair<WeightType, std::optional<ActivationCodes>>> configurations;
  bool any_quantized = false;
  for (WeightType type : options.weight_types) {
    if (!is_block_quantized(type) || options.activations.empty()) {
      configurations.emplace_back(type, std::nullopt);
      any_quantized = any_quantized || is_block_quantized(type);
      continue;
    }
    any_quantized = true;
    bool any = false;
    for (ActivationCodes codes : options.activations) {
      if (type == WeightType::kQ4 && codes != ActivationCodes::kInt8) continue;
      configurations.emplace_back(type, codes);
      any = true;
    }
    if (!any) throw Error("--activations int16: q4 weights take int8 activations only; add int8 or leave q4 out");
  }
  if (!options.activations.empty() && !any_quantized) {
    throw Error("--activations applies to q8 and q4 weights: add q8 or q4 to --weights");
  }
  return configurations;
}

BenchOptions bench_options_from_flags(const BenchFlagValues& flags, int default_threads) {
  BenchOptions options;
  options.quick = flags.quick;
  options.no_cache = flags.no_cache;
  if (flags.quick) {
    options.prompt_tokens = 64;
    options.generate_tokens = 16;
    options.batch_sizes = {1, 4};
    options.repetitions = 2;
    options.dram_buffer_bytes = std::size_t{512} << 20;
    options.bandwidth_runs = 3;
  }
  // Limits beyond any sensible run, so that a typo (-n 1000000000) is an error rather than an hour of waiting.
  if (flags.prompt_tokens) options.prompt_tokens = parse_positive_int("-p/--prompt", *flags.prompt_tokens, 1 << 20);
  if (flags.generate_tokens) options.generate_tokens = parse_positive_int("-n/--gen", *flags.generate_tokens, 1 << 20);
  if (flags.batch_sizes) {
    options.batch_sizes = parse_positive_int_list("-b/--batch", *flags.batch_sizes, kMaxBatchRows);
  }
  options.thread_counts = flags.threads ? parse_positive_int_list("--threads", *flags.threads, 1024)
                                        : std::vector<int>{std::max(1, default_threads)};
  if (flags.weights) options.weight_types = parse_weight_type_list(*flags.weights);
  if (flags.activations) options.activations = parse_activation_codes_list(*flags.activations);
  weight_configurations(options);  // a bad pair is an error before anything runs
  if (flags.repetitions) options.repetitions = parse_positive_int("-r/--repetitions", *flags.repetitions, 1000);
  if (flags.kv_dtypes) options.kv_dtypes = parse_kv_dtype_list(*flags.kv_dtypes);
  if (flags.long_context) {
    options.long_context_tokens = parse_positive_int_list("--long-context", *flags.long_context, 1 << 24);
  }
  if (flags.lora_rank && flags.lora_path) {
    throw Error(
        "--lora-rank and --lora both choose the LoRA tests' adapters (random ones of a rank, or a file's); "
        "give one");
  }
  // The rank is checked against the model's widths once it is loaded (bench/bench_adapters.h).
  if (flags.lora_rank) options.lora_rank = parse_positive_int("--lora-rank", *flags.lora_rank, 4096);
  if (flags.lora_path) {
    if (flags.lora_path->empty()) throw Error("--lora takes an adapter file, got ''");
    options.lora_path = *flags.lora_path;
  }
  return options;
}

void validate_for_model(const BenchOptions& options, const ModelConfig& config) {
  const int context = config.max_position_embeddings;
  // pp and tg use their own empty caches; the longest sequence is the no-cache run's P + N − 1 tokens, and the
  // prompt plus the generated tokens is what a user asks the model to hold.
  if (static_cast<long long>(options.prompt_tokens) + options.generate_tokens > context) {
    throw Error("-p " + std::to_string(options.prompt_tokens) + " plus -n " + std::to_string(options.generate_tokens) +
                " tokens exceed the model's context of " + std::to_string(context) + " tokens");
  }
  if (static_cast<long long>(options.batch_prompt_tokens) + options.generate_tokens > context) {
    throw Error("the batch tests' " + std::to_string(options.batch_prompt_tokens) + "-token prefix plus -n " +
                std::to_string(options.generate_tokens) + " tokens exceed the model's context of " +
                std::to_string(context) + " tokens");
  }
  // The largest run of each kind must fit the memory budget: pp and tg (or the no-cache run) in one row, and each
  // batch test's rows.
  constexpr std::string_view kAdvice = "lower -p/--prompt, -n/--gen or -b/--batch";
  const KvDType kv_dtype = options.kv_dtypes.front();
  const int64_t single_row_tokens = static_cast<int64_t>(options.prompt_tokens) + options.generate_tokens;
  const int64_t single_row_forward = options.no_cache ? single_row_tokens - 1 : options.prompt_tokens;
  check_run_memory(config, RunShape{1, single_row_tokens, single_row_forward, kv_dtype}, kAdvice);
  std::vector<int> batches = options.batch_sizes;
  if (options.lora()) batches.push_back(options.lora_batch_rows);
  for (const int rows : batches) {
    check_run_memory(config,
                     RunShape{rows, static_cast<int64_t>(options.batch_prompt_tokens) + options.generate_tokens,
                              static_cast<int64_t>(rows) * options.batch_prompt_tokens, kv_dtype},
                     kAdvice);
  }
  for (const int tokens : options.long_context_tokens) {
    const int64_t total = static_cast<int64_t>(tokens) + options.long_context_decode_tokens;
    if (total > context) {
      throw Error("--long-context " + std::to_string(tokens) + " plus " +
                  std::to_string(options.long_context_decode_tokens) +
                  " decoded tokens exceed the model's context of " + std::to_string(context) + " tokens");
    }
    for (const KvDType dtype : options.kv_dtypes) {
      check_run_memory(config, RunShape{1, total, kLongContextChunkTokens, dtype}, "lower --long-context");
    }
  }
  if (config.vocab_size <= kFirstOrdinaryTokenId) {
    throw Error("the model's vocabulary of " + std::to_string(config.vocab_size) +
                " tokens has no room for prompt tokens above the special ids");
  }
}

}  // namespace minigen::bench
