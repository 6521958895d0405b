#include "bench/memory_bandwidth.h"

#include <gtest/gtest.h>

#include <vector>

#include "ops/simd_targets_test_util.h"

namespace minigen::bench {
namespace {

TEST(BenchBandwidth, PatternSumHasTheClosedForm) {
  double running = 0;
  for (std::size_t count = 0; count < 40; ++count) {
    EXPECT_EQ(bandwidth_pattern_sum(count), running) << count;
    running += bandwidth_pattern_value(count);
  }
  EXPECT_EQ(bandwidth_pattern_sum(8), 28.0);
}

// Odd lengths and thread counts exercise the ragged shares and the scalar tail of every block.
TEST(BenchBandwidth, ParallelSumReadsEveryElementOnAnyThreadCount) {
  for (const std::size_t count : {std::size_t{1}, std::size_t{13}, std::size_t{16 * 1024 + 5}, std::size_t{100'003}}) {
    std::vector<float> values(count);
    for (std::size_t i = 0; i < count; ++i) values[i] = bandwidth_pattern_value(i);
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      EXPECT_EQ(parallel_sum(values.data(), count, pool), bandwidth_pattern_sum(count))
          << count << " floats, " << threads << " threads";
    }
  }
}

TEST(BenchBandwidth, MeasurementSumsTheWholeBufferAndReportsAPositiveRate) {
  ThreadPool pool(2);
  const BandwidthMeasurement measured = measure_read_bandwidth(4'000'000, pool, 2);
  EXPECT_EQ(measured.buffer_bytes, 4'000'000u);
  EXPECT_EQ(measured.threads, 2);
  EXPECT_EQ(measured.runs, 2);
  EXPECT_GE(measured.passes_per_run, 1);
  EXPECT_EQ(measured.expected_checksum, bandwidth_pattern_sum(1'000'000));
  EXPECT_EQ(measured.checksum, measured.expected_checksum);
  EXPECT_GT(measured.bytes_per_second, 0.0);
}

TEST(BenchBandwidth, NamesTheDispatchedSimdTarget) { EXPECT_FALSE(simd_target_name().empty()); }

// The per-target SIMD tests (ops/simd_targets_test_util.h) rest on this: forcing a target really changes which
// compiled variant a dispatched call runs, even after an earlier call chose the CPU's best.
class DispatchedTarget : public testing::EverySimdTarget {};
TEST_P(DispatchedTarget, IsTheForcedOne) { EXPECT_EQ(simd_target_name(), hwy::TargetName(GetParam())); }
MINIGEN_FOR_EVERY_SIMD_TARGET(DispatchedTarget);

}  // namespace
}  // namespace minigen::bench
