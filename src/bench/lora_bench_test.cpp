#include "bench/lora_bench.h"

#include <gtest/gtest.h>

#include "bench/bench_adapters.h"
#include "core/error.h"
#include "model/test_models.h"

namespace minigen::bench {
namespace {

BenchOptions small_batch() {
  BenchOptions options;
  options.generate_tokens = 5;
  options.repetitions = 1;
  options.lora_batch_rows = 6;
  return options;
}

// An adapter with B = 0, as MiniMind initialises one: its term adds exactly zero, so the "differs from the base"
// counts that prove a random adapter ran must read zero here.
LoraAdapter zero_b_adapter(const ModelConfig& config) {
  LoraAdapter random = random_minimind_adapter(config, 4, 1);
  std::vector<LoraTensors> tensors;
  for (const LoraAdapter::Wrapped& wrapped : random.wrapped()) {
    LoraTensors pair;
    pair.module = wrapped.module;
    pair.a = {{wrapped.pair->a.rows, wrapped.pair->a.cols}, wrapped.pair->a.values};
    pair.b = {{wrapped.pair->b.rows, wrapped.pair->b.cols}, std::vector<float>(wrapped.pair->b.values.size(), 0.0f)};
    tensors.push_back(std::move(pair));
  }
  return lora_from_tensors(config, std::move(tensors), 1.0f, "zero B", "test");
}

TEST(LoraBench, AnAdapterWithBZeroChangesNoToken) {
  const auto model = testing::random_test_model("tiny");
  ThreadPool pool(2);
  Transformer transformer(*model, pool);
  const auto adapter = std::make_shared<const LoraAdapter>(zero_b_adapter(model->config));
  KvCache cache(model->config.kv_layout(), 16);
  const TestResult decode = lora_generate_test(transformer, cache, 100, 8, 1, *adapter);
  EXPECT_EQ(decode.name, "tg8 lora r4");
  EXPECT_EQ(decode.lora->first_difference, -1);
  EXPECT_EQ(decode.lora->rows_differing_from_base, 0);

  const std::vector<std::shared_ptr<const LoraAdapter>> adapters = {adapter, adapter, adapter};
  const TestResult batch = lora_batch_test(transformer, small_batch(), adapters);
  EXPECT_EQ(batch.name, "b6 3 adapters");
  EXPECT_EQ(batch.lora->rows_differing_from_base, 0);
  EXPECT_TRUE(batch.lora->mixed_equals_separate);
}

TEST(LoraBench, RowsMustSpreadEvenlyOverTheAdapters) {
  const auto model = testing::random_test_model("tiny");
  ThreadPool pool(1);
  Transformer transformer(*model, pool);
  const auto adapter = std::make_shared<const LoraAdapter>(random_minimind_adapter(model->config, 4, 1));
  const std::vector<std::shared_ptr<const LoraAdapter>> four = {adapter, adapter, adapter, adapter};
  EXPECT_THROW(lora_batch_test(transformer, small_batch(), four), Error);  // 6 rows over 4
}

}  // namespace
}  // namespace minigen::bench
