#include "sampling/logit_bias_sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "sampling/sampling_test_util.h"

namespace minigen {
namespace {

TEST(LogitBiasSamplerTest, AddsEachBiasAndMinusHundredBans) {
  std::vector<float> logits = {1.0f, 2.0f, 3.0f, 50.0f};
  LogitBiasSampler({{0, 0.5f}, {3, -100.0f}, {2, -99.5f}}).apply(logits, {});
  // −99.5 is a large penalty, not a ban; only −100 removes the token however large its logit.
  EXPECT_EQ(logits, (std::vector<float>{1.5f, 2.0f, -96.5f, kMinusInfinity}));
}

TEST(LogitBiasSamplerTest, RejectsBadEntries) {
  EXPECT_THROW(LogitBiasSampler({{1, 100.5f}}), InvalidSamplingParam);
  EXPECT_THROW(LogitBiasSampler({{-1, 1.0f}}), InvalidSamplingParam);
  EXPECT_THROW(LogitBiasSampler({{4, 1.0f}, {4, 2.0f}}), InvalidSamplingParam);
  EXPECT_THROW(LogitBiasSampler({{4, std::nanf("")}}), InvalidSamplingParam);
  std::vector<float> logits = {1.0f, 2.0f};
  EXPECT_THROW(LogitBiasSampler({{2, 1.0f}}).apply(logits, {}), Error);
  EXPECT_EQ(LogitBiasSampler({{1, 1.0f}}).name(), "logit-bias(1 token)");
}

}  // namespace
}  // namespace minigen
