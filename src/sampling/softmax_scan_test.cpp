#include "sampling/softmax_scan.h"

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/lane_sum.h"
#include "ops/ops_test_util.h"
#include "ops/simd_targets_test_util.h"

namespace minigen {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// A logit row as the samplers see it: spread over ±20, some tokens removed, one far below the rest (exp → 0).
std::vector<float> logit_row(std::size_t n, uint64_t seed) {
  std::vector<float> row = testing::pseudo_random_vector(static_cast<int>(n), seed);
  for (std::size_t i = 0; i < n; ++i) {
    row[i] *= 20.0f;
    if (i % 37 == 3) row[i] = kMinusInfinity;
    if (i % 101 == 7) row[i] = -150.0f;
  }
  return row;
}

double lane_order_sum(const std::vector<float>& values) {
  double lanes[kLanesInSum] = {};
  for (std::size_t i = 0; i < values.size(); ++i) lanes[i % kLanesInSum] += values[i];
  return fold_lanes_pairwise(lanes);
}

float ulp_of(float value) { return std::nextafter(value, INFINITY) - value; }

class SoftmaxScanSimd : public testing::EverySimdTarget {};

TEST_P(SoftmaxScanSimd, ExpsAreWithinAnUlpAndTheSumIsTheirsInLaneOrder) {
  for (std::size_t n : {1u, 2u, 15u, 16u, 17u, 33u, 100u, 6400u, 6403u}) {
    const std::vector<float> row = logit_row(n, 3 + n);
    const float shift = 4.5f;
    std::vector<float> exps(n, -1.0f);
    const double sum = shifted_exp(row.data(), shift, exps.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const float exact = std::exp(row[i] - shift);
      if (row[i] == kMinusInfinity || row[i] < -100.0f) {
        EXPECT_EQ(exps[i], 0.0f) << i;  // a removed token, and an exp far below fp32's range
      } else {
        EXPECT_LE(std::fabs(exps[i] - exact), ulp_of(exact)) << "n " << n << " element " << i << " of " << row[i];
      }
    }
    EXPECT_EQ(sum, lane_order_sum(exps)) << n;
    EXPECT_EQ(shifted_exp(row.data(), shift, nullptr, n), sum) << "sum alone, n " << n;
    std::vector<float> in_place = row;  // out may be the input
    EXPECT_EQ(shifted_exp(in_place.data(), shift, in_place.data(), n), sum);
    EXPECT_EQ(std::memcmp(in_place.data(), exps.data(), n * sizeof(float)), 0);
  }
}

TEST_P(SoftmaxScanSimd, SumsQuotientsAndMaximaAreTheScalarOnes) {
  for (std::size_t n : {1u, 7u, 16u, 31u, 6400u}) {
    std::vector<float> values = testing::pseudo_random_vector(static_cast<int>(n), 9 + n);
    for (float& value : values) value = std::fabs(value) * 1e-3f;
    EXPECT_EQ(sum_as_double(values.data(), n), lane_order_sum(values)) << n;
    const double divisor = 3.0000000001;
    std::vector<float> quotients(n);
    divide_as_double(values.data(), divisor, quotients.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(quotients[i], static_cast<float>(static_cast<double>(values[i]) / divisor)) << i;
    }
    values[n / 2] = 7.0f;
    EXPECT_EQ(largest_value(values.data(), n), *std::max_element(values.begin(), values.end()));
  }
}

MINIGEN_FOR_EVERY_SIMD_TARGET(SoftmaxScanSimd);

// The draw's numbers do not depend on the CPU: AVX2 and AVX-512 give the same exps and sums, bit for bit (the
// portable fallback, for a CPU with neither, rounds its multiply-adds twice and is only held to the ulp above).
TEST(SoftmaxScan, Avx2AndAvx512GiveTheSameBits) {
  const std::vector<float> row = logit_row(6403, 5);
  std::vector<std::vector<float>> exps;
  std::vector<double> sums;
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    if (target == HWY_SCALAR) continue;
    hwy::SetSupportedTargetsForTest(target);
    exps.emplace_back(row.size());
    sums.push_back(shifted_exp(row.data(), 2.0f, exps.back().data(), row.size()));
  }
  hwy::SetSupportedTargetsForTest(0);
  for (std::size_t t = 1; t < exps.size(); ++t) {
    EXPECT_EQ(std::bit_cast<uint64_t>(sums[t]), std::bit_cast<uint64_t>(sums[0]));
    EXPECT_EQ(std::memcmp(exps[t].data(), exps[0].data(), row.size() * sizeof(float)), 0);
  }
}

}  // namespace
}  // namespace minigen
