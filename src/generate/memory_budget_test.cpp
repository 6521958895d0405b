#include "generate/memory_budget.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace minigen {
namespace {

TEST(MemoryBudget, EstimatesTheTinyModelFromItsShape) {
  const ModelConfig tiny = config_for_family("tiny");
  // 30 rows of 183 + 64 tokens, prefilled together: 2048 B of KV per token; per fed token 3·256 + 2·256 + 2·64 +
  // 3·832 = 3904 floats of scratch; 3 rows of 6400 logits per row.
  const MemoryEstimate estimate = estimate_run_memory(tiny, RunShape{30, 183 + 64, 30 * 183});
  EXPECT_EQ(estimate.kv_cache_bytes, 30u * 247 * 2048);
  EXPECT_EQ(estimate.activation_bytes, 30u * 183 * 3904 * 4);
  EXPECT_EQ(estimate.logits_bytes, 30u * 3 * 6400 * 4);
  EXPECT_EQ(estimate.total(), estimate.kv_cache_bytes + estimate.activation_bytes + estimate.logits_bytes);
}

TEST(MemoryBudget, RefusesARunBeyondTheBudgetWithOneMessage) {
  const ModelConfig tiny = config_for_family("tiny");
  EXPECT_NO_THROW(check_run_memory(tiny, RunShape{1, 100, 100}, "lower -n", 1 << 30));
  try {
    check_run_memory(tiny, RunShape{256, 1 << 20, 256}, "lower --num-return-sequences", 1 << 30);
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()),
              "256 rows of up to 1048576 tokens would need about 512.0 GiB (KV cache 512.0 GiB, activations for 256 "
              "tokens per forward 3.8 MiB), more than the 1.0 GiB minigen allows itself (half of this machine's "
              "memory); lower --num-return-sequences");
  }
}

// Shapes from absurd flags and configs saturate instead of wrapping around to a small number.
TEST(MemoryBudget, AbsurdShapesSaturate) {
  ModelConfig wide = config_for_family("tiny");
  wide.num_layers = 512;
  wide.num_kv_heads = 512;
  wide.head_dim = 1024;
  const MemoryEstimate estimate = estimate_run_memory(wide, RunShape{INT64_MAX, INT64_MAX, INT64_MAX});
  EXPECT_EQ(estimate.kv_cache_bytes, UINT64_MAX);
  EXPECT_EQ(estimate.activation_bytes, UINT64_MAX);
  EXPECT_THROW(check_run_memory(wide, RunShape{INT64_MAX, INT64_MAX, INT64_MAX}, "", UINT64_MAX - 1), Error);
}

TEST(MemoryBudget, BudgetIsHalfOfSomethingReal) {
  EXPECT_GT(run_memory_budget_bytes(), uint64_t{64} << 20);
  EXPECT_EQ(memory_size_text(800), "800 bytes");
  EXPECT_EQ(memory_size_text(3 << 20), "3.0 MiB");
  EXPECT_EQ(memory_size_text(uint64_t{3} << 29), "1.5 GiB");
}

}  // namespace
}  // namespace minigen
