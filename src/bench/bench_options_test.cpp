#include "bench/bench_options.h"

#include <gtest/gtest.h>

#include <functional>

#include "core/error.h"

namespace minigen::bench {
namespace {

// The error must name the flag, so that the one line a user sees says what to fix.
void expect_error_naming(const std::function<void()>& parse, const std::string& needle) {
  try {
    parse();
    ADD_FAILURE() << "no error; expected one naming " << needle;
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
  }
}

TEST(BenchOptions, ParsesPositiveNumbersAndLists) {
  EXPECT_EQ(parse_positive_int("-p", "512", 1 << 20), 512);
  EXPECT_EQ(parse_positive_int_list("-b", "1,8,32", 4096), (std::vector<int>{1, 8, 32}));
  EXPECT_EQ(parse_positive_int_list("--threads", "2", 1024), (std::vector<int>{2}));
  EXPECT_EQ(parse_weight_type_list("f32,bf16,f32"), (std::vector<WeightType>{WeightType::kF32, WeightType::kBF16}));
  EXPECT_EQ(parse_weight_type_list("f16,f32"), (std::vector<WeightType>{WeightType::kF16, WeightType::kF32}));
}

TEST(BenchOptions, RejectsEveryBadValueNamingTheFlag) {
  for (const char* bad : {"", "0", "-3", "x", "1.5", "8x", "5000", " 1"}) {
    expect_error_naming([&] { parse_positive_int("-b/--batch", bad, 4096); }, "-b/--batch");
  }
  for (const char* bad : {"1,,2", "1,", ",1", "1,0", "1;2", "1,x"}) {
    expect_error_naming([&] { parse_positive_int_list("--threads", bad, 1024); }, "--threads");
  }
  expect_error_naming([] { parse_weight_type_list("f32,f8"); }, "--weights");
  expect_error_naming([] { parse_weight_type_list(""); }, "--weights");
}

TEST(BenchOptions, QuickChangesOnlyTheDefaultsThatWereNotGiven) {
  BenchFlagValues flags;
  const BenchOptions full = bench_options_from_flags(flags, 4);
  EXPECT_EQ(full.prompt_tokens, 512);
  EXPECT_EQ(full.generate_tokens, 128);
  EXPECT_EQ(full.batch_sizes, (std::vector<int>{1, 8, 32}));
  EXPECT_EQ(full.thread_counts, (std::vector<int>{4}));
  EXPECT_EQ(full.repetitions, 5);
  EXPECT_EQ(full.dram_buffer_bytes, std::size_t{1} << 30);

  flags.quick = true;
  flags.prompt_tokens.emplace("16");
  flags.batch_sizes.emplace("1,2");
  flags.weights.emplace("bf16");
  const BenchOptions quick = bench_options_from_flags(flags, 4);
  EXPECT_EQ(quick.prompt_tokens, 16);
  EXPECT_EQ(quick.generate_tokens, 16);
  EXPECT_EQ(quick.batch_sizes, (std::vector<int>{1, 2}));
  EXPECT_EQ(quick.repetitions, 2);
  EXPECT_EQ(quick.weight_types, (std::vector<WeightType>{WeightType::kBF16}));
  EXPECT_EQ(quick.dram_buffer_bytes, std::size_t{512} << 20);

  flags.repetitions.emplace("0");
  expect_error_naming([&] { bench_options_from_flags(flags, 4); }, "--repetitions");
}

TEST(BenchOptions, LoraRankOrAdapterFileButNotBoth) {
  BenchFlagValues flags;
  EXPECT_FALSE(bench_options_from_flags(flags, 2).lora());  // opt-in
  flags.lora_rank.emplace("16");
  const BenchOptions ranked = bench_options_from_flags(flags, 2);
  EXPECT_TRUE(ranked.lora());
  EXPECT_EQ(ranked.lora_rank, 16);
  EXPECT_EQ(ranked.lora_batch_rows, 32);
  EXPECT_EQ(ranked.lora_adapters, 4);
  flags.lora_path.emplace("adapter.pth");
  expect_error_naming([&] { bench_options_from_flags(flags, 2); }, "--lora-rank and --lora");
  flags.lora_rank.reset();
  EXPECT_EQ(bench_options_from_flags(flags, 2).lora_path, "adapter.pth");
  flags.lora_path.reset();
  for (const char* bad : {"0", "r16", "5000", ""}) {
    flags.lora_rank.emplace(bad);
    expect_error_naming([&] { bench_options_from_flags(flags, 2); }, "--lora-rank");
  }
}

TEST(BenchOptions, PromptPlusGeneratedTokensMustFitTheContext) {
  ModelConfig config = config_for_family("tiny");
  config.max_position_embeddings = 512;
  BenchOptions options;
  options.prompt_tokens = 384;
  options.generate_tokens = 128;
  EXPECT_NO_THROW(validate_for_model(options, config));  // exactly the context
  options.generate_tokens = 129;
  expect_error_naming([&] { validate_for_model(options, config); }, "context of 512");
  options.prompt_tokens = 1;
  options.generate_tokens = 500;  // fits after one prompt token, not after the batch tests' 16-token prefix
  expect_error_naming([&] { validate_for_model(options, config); }, "prefix");
}

TEST(BenchOptions, KvDTypesAndLongContextLengths) {
  BenchFlagValues flags;
  flags.kv_dtypes.emplace("int8,f32,int8,bf16");
  flags.long_context.emplace("8192,16384");
  const BenchOptions options = bench_options_from_flags(flags, 2);
  EXPECT_EQ(options.kv_dtypes, (std::vector<KvDType>{KvDType::kInt8, KvDType::kF32, KvDType::kBF16}));
  EXPECT_EQ(options.long_context_tokens, (std::vector<int>{8192, 16384}));
  EXPECT_TRUE(BenchOptions{}.long_context_tokens.empty());  // opt-in: the default bench does not grow
  flags.kv_dtypes.emplace("f32,fp8");
  expect_error_naming([&] { bench_options_from_flags(flags, 2); },
                      "unknown --kv-dtype 'fp8' (expected f32, bf16, f16 or int8)");
  flags.kv_dtypes.reset();
  flags.long_context.emplace("8192,0");
  expect_error_naming([&] { bench_options_from_flags(flags, 2); }, "--long-context");

  ModelConfig config = config_for_family("tiny");
  config.max_position_embeddings = 8224;
  BenchOptions fits;
  fits.long_context_tokens = {8192};  // + 32 decoded tokens = the context
  EXPECT_NO_THROW(validate_for_model(fits, config));
  fits.long_context_tokens = {8193};
  expect_error_naming([&] { validate_for_model(fits, config); },
                      "--long-context 8193 plus 32 decoded tokens exceed the model's context of 8224 tokens");
}

}  // namespace
}  // namespace minigen::bench
