#include "lab/adapter_variants.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/test_models.h"

namespace minigen::lab {
namespace {

// rank · (in + out) per wrapped matrix, with MiniMind's choice of matrices (the square ones: q_proj and o_proj).
TEST(AdapterVariants, MiniMindAdapterSizeIsRankTimesInPlusOut) {
  const ModelConfig minimind3 = config_for_family("minimind3");
  const AdapterSize size = minimind_adapter_size(minimind3, 16, "minimind-3");
  ASSERT_EQ(size.groups.size(), 2u);
  EXPECT_EQ(size.groups[0].name, "q_proj");
  EXPECT_EQ(size.groups[1].name, "o_proj");
  EXPECT_EQ(size.groups[0].matrices, 8);
  EXPECT_EQ(size.groups[0].parameters_each(), 16 * (768 + 768));
  EXPECT_EQ(size.parameters, 393'216);
  EXPECT_EQ(size.fp32_bytes(), 1'572'864u);
  EXPECT_EQ(size.fp16_bytes(), 786'432u);
  EXPECT_EQ(size.model_parameters, static_cast<int64_t>(minimind3.parameter_count()));
  EXPECT_NEAR(size.share_of_model(), 393'216.0 / static_cast<double>(minimind3.parameter_count()), 1e-15);
  EXPECT_GT(size.share_of_model(), 0.005);  // the module's "0.6 %"
  EXPECT_LT(size.share_of_model(), 0.007);

  const ModelConfig minimind2 = config_for_family("minimind2");
  const int64_t hidden = minimind2.hidden_size;
  EXPECT_EQ(minimind_adapter_size(minimind2, 8, "MiniMind2").parameters, minimind2.num_layers * 2 * 8 * 2 * hidden);
}

TEST(AdapterVariants, TrainedShapedAdapterHasTheAskedSizeAndItsSizeIsMeasured) {
  const auto model = testing::random_test_model("tiny");
  const LoraAdapter adapter = trained_shaped_adapter(model->config, model->weights, 16, 0.10, 3);
  EXPECT_EQ(adapter.summary(), "q_proj, o_proj in 4 of 4 layers, rank 16");
  EXPECT_EQ(adapter.summary_zh(), "q_proj、o_proj（4 层中的 4 层），秩 16");  // no English words in the zh report
  // B's σ is drawn for an expected ‖B·A‖ of 10 % of ‖W‖; one draw of 8 matrices lands within a few percent of it.
  EXPECT_NEAR(relative_size(adapter, model->weights), 0.10, 0.01);
  const AdapterSize size = adapter_size(adapter, model->config, "tiny");
  EXPECT_EQ(size.parameters, adapter.parameter_count());
  EXPECT_EQ(size.parameters, minimind_adapter_size(model->config, 16, "tiny").parameters);

  // relative_size's Gram-matrix formula against B·A formed explicitly.
  double update = 0;
  double base = 0;
  for (int l = 0; l < model->config.num_layers; ++l) {
    for (const auto& [pair, weight] : {std::pair{&adapter.layers[l].q, &model->weights.layers[l].q_proj},
                                       std::pair{&adapter.layers[l].o, &model->weights.layers[l].o_proj}}) {
      for (int o = 0; o < pair->b.rows; ++o) {
        for (int i = 0; i < pair->a.cols; ++i) {
          double product = 0;
          for (int k = 0; k < pair->rank; ++k) {
            product += double(pair->b.values[o * pair->rank + k]) * pair->a.values[k * pair->a.cols + i];
          }
          update += product * product;
          const double w = weight->values[o * weight->cols + i];
          base += w * w;
        }
      }
    }
  }
  EXPECT_NEAR(relative_size(adapter, model->weights), std::sqrt(update / base), 1e-9);
}

TEST(AdapterVariants, ZeroBKeepsAAndCopiesKeepEverything) {
  const auto model = testing::random_test_model("tiny");
  const LoraAdapter adapter = trained_shaped_adapter(model->config, model->weights, 4, 0.10, 5);
  const LoraAdapter zero = with_zero_b(model->config, adapter);
  EXPECT_EQ(zero.layers[2].q.a.values, adapter.layers[2].q.a.values);
  for (float value : zero.layers[2].o.b.values) ASSERT_EQ(value, 0.0f);
  EXPECT_EQ(relative_size(zero, model->weights), 0.0);
  const LoraAdapter copy = copy_of_adapter(model->config, adapter);
  EXPECT_EQ(copy.layers[1].o.b.values, adapter.layers[1].o.b.values);
  EXPECT_NE(copy.layers[1].o.b.values.data(), adapter.layers[1].o.b.values.data());
  EXPECT_EQ(copy.summary(), adapter.summary());
}

}  // namespace
}  // namespace minigen::lab
