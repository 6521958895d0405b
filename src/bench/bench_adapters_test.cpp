#include "bench/bench_adapters.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"

namespace minigen::bench {
namespace {

// MiniMind's apply_lora wraps the square projections: q_proj and o_proj in its shapes (q heads · head_dim = hidden),
// never k/v (GQA makes them narrower) nor the feed-forward (wider).
TEST(BenchAdapters, MiniMindShapeWrapsTheSquareProjections) {
  const ModelConfig config = config_for_family("minimind3");
  const std::vector<std::string> modules = square_projections(config);
  ASSERT_EQ(modules.size(), 16u);  // 8 layers × q_proj, o_proj
  EXPECT_EQ(modules[0], "model.layers.0.self_attn.q_proj");
  EXPECT_EQ(modules[1], "model.layers.0.self_attn.o_proj");
  const LoraAdapter adapter = random_minimind_adapter(config, 16, 1);
  // rank · (in + out) per matrix: 16 · (768 + 768) · 16 matrices.
  EXPECT_EQ(adapter.parameter_count(), 393'216);
  EXPECT_EQ(adapter.summary(), "q_proj, o_proj in 8 of 8 layers, rank 16");
  EXPECT_EQ(adapter.scale, 1.0f);
  // B is drawn non-zero (MiniMind starts it at 0): the term must change the output for its time to be real work.
  const Matrix& b = adapter.layers[0].q.b;
  double squares = 0;
  for (float value : b.values) squares += static_cast<double>(value) * value;
  EXPECT_NEAR(std::sqrt(squares / static_cast<double>(b.values.size())), kBenchLoraBStd, 0.05);
}

TEST(BenchAdapters, SeedsDifferAndCopiesHaveTheirOwnMemory) {
  const ModelConfig config = config_for_family("tiny");
  const LoraAdapter one = random_minimind_adapter(config, 4, 1);
  const LoraAdapter two = random_minimind_adapter(config, 4, 2);
  EXPECT_NE(one.layers[0].q.a.values, two.layers[0].q.a.values);
  const LoraAdapter copy = copy_of_adapter(config, one);
  EXPECT_EQ(copy.layers[3].o.b.values, one.layers[3].o.b.values);
  EXPECT_NE(copy.layers[3].o.b.values.data(), one.layers[3].o.b.values.data());
  EXPECT_EQ(copy.parameter_count(), one.parameter_count());

  const auto adapters = bench_adapters(config, 4, nullptr, 4);
  ASSERT_EQ(adapters.size(), 4u);
  EXPECT_EQ(adapters[3]->layers[0].q.a.values, random_minimind_adapter(config, 4, 4).layers[0].q.a.values);
  const auto file = std::make_shared<const LoraAdapter>(random_minimind_adapter(config, 4, 9));
  const auto copies = bench_adapters(config, 0, file, 3);
  EXPECT_EQ(copies[0], file);
  EXPECT_NE(copies[2].get(), file.get());
  EXPECT_EQ(copies[2]->layers[1].q.a.values, file->layers[1].q.a.values);
}

TEST(BenchAdapters, RankBeyondTheWidthIsAnError) {
  const ModelConfig config = config_for_family("tiny");
  EXPECT_NO_THROW(random_minimind_adapter(config, 256, 1));
  try {
    random_minimind_adapter(config, 257, 1);
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("--lora-rank 257 exceeds the width"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace minigen::bench
