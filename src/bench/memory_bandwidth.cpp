#include "bench/memory_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "hwy/aligned_allocator.h"

// foreach_target.h must come before the other Highway headers, so their order is not clang-format's to sort.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/memory_bandwidth.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace minigen::bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Elements summed in float before the partial goes into the double total: 16 Ki floats = 64 KiB, small enough
// that a float partial of small integers is exact, large enough that the horizontal add costs nothing.
constexpr std::size_t kBlockFloats = 16 * 1024;

// Four independent accumulators keep several loads in flight; one would serialise on the add's latency and
// measure the adder instead of the memory.
double sum_range_simd(const float* values, std::size_t count) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  double total = 0;
  for (std::size_t block = 0; block < count; block += kBlockFloats) {
    const std::size_t end = std::min(count, block + kBlockFloats);
    auto sum0 = hn::Zero(d), sum1 = hn::Zero(d), sum2 = hn::Zero(d), sum3 = hn::Zero(d);
    std::size_t i = block;
    for (; i + 4 * lanes <= end; i += 4 * lanes) {
      sum0 = hn::Add(sum0, hn::LoadU(d, values + i));
      sum1 = hn::Add(sum1, hn::LoadU(d, values + i + lanes));
      sum2 = hn::Add(sum2, hn::LoadU(d, values + i + 2 * lanes));
      sum3 = hn::Add(sum3, hn::LoadU(d, values + i + 3 * lanes));
    }
    float block_sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(sum0, sum1), hn::Add(sum2, sum3))));
    for (; i < end; ++i) block_sum += values[i];
    total += block_sum;
  }
  return total;
}

const char* target_name_simd() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace minigen::bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace minigen::bench {

HWY_EXPORT(sum_range_simd);
HWY_EXPORT(target_name_simd);

namespace {

// Per-thread results on their own cache lines, so that storing them does not bounce a line between cores.
struct alignas(64) ThreadSum {
  double value = 0;
};

std::size_t share_begin(std::size_t count, int64_t share, int shares) {
  return count * static_cast<std::size_t>(share) / static_cast<std::size_t>(shares);  // count < 2^40: no overflow
}

// A run should last long enough that the clock's resolution and the pool's hand-off do not matter.
constexpr double kMinimumRunSeconds = 0.02;

}  // namespace

double parallel_sum(const float* values, std::size_t count, ThreadPool& pool) {
  const int shares = pool.num_threads();
  std::vector<ThreadSum> sums(shares);
  pool.parallel_for(shares, [&](int64_t begin, int64_t end) {
    for (int64_t share = begin; share < end; ++share) {
      const std::size_t first = share_begin(count, share, shares);
      const std::size_t last = share_begin(count, share + 1, shares);
      sums[share].value = HWY_DYNAMIC_DISPATCH(sum_range_simd)(values + first, last - first);
    }
  });
  double total = 0;
  for (const ThreadSum& sum : sums) total += sum.value;
  return total;
}

float bandwidth_pattern_value(std::size_t index) { return static_cast<float>(index % 8); }

double bandwidth_pattern_sum(std::size_t count) {
  // Each full period 0 + 1 + … + 7 = 28; the incomplete one contributes 0 + 1 + … + (r − 1) = r(r − 1)/2.
  const std::size_t remainder = count % 8;
  return 28.0 * static_cast<double>(count / 8) +
         static_cast<double>(remainder == 0 ? 0 : remainder * (remainder - 1) / 2);
}

BandwidthMeasurement measure_read_bandwidth(std::size_t buffer_bytes, ThreadPool& pool, int runs) {
  const std::size_t count = std::max<std::size_t>(1, buffer_bytes / sizeof(float));
  hwy::AlignedFreeUniquePtr<float[]> buffer = hwy::AllocateAligned<float>(count);
  float* values = buffer.get();
  // Filled through the same shares the reads use, so each page is first touched (and placed) by its reader.
  const int shares = pool.num_threads();
  pool.parallel_for(shares, [&](int64_t begin, int64_t end) {
    for (int64_t share = begin; share < end; ++share) {
      const std::size_t last = share_begin(count, share + 1, shares);
      for (std::size_t i = share_begin(count, share, shares); i < last; ++i) values[i] = bandwidth_pattern_value(i);
    }
  });

  BandwidthMeasurement measurement;
  measurement.buffer_bytes = count * sizeof(float);
  measurement.threads = shares;
  measurement.runs = std::max(1, runs);
  measurement.expected_checksum = bandwidth_pattern_sum(count);

  using Clock = std::chrono::steady_clock;
  // The first pass warms the caches (for a cache-sized buffer) and calibrates how many passes make a run.
  const auto warm_start = Clock::now();
  measurement.checksum = parallel_sum(values, count, pool);
  const double warm_seconds = std::chrono::duration<double>(Clock::now() - warm_start).count();
  measurement.passes_per_run =
      static_cast<int>(std::clamp(std::ceil(kMinimumRunSeconds / std::max(warm_seconds, 1e-9)), 1.0, 100000.0));

  for (int run = 0; run < measurement.runs; ++run) {
    const auto start = Clock::now();
    for (int pass = 0; pass < measurement.passes_per_run; ++pass)
      measurement.checksum = parallel_sum(values, count, pool);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const double bytes_per_second =
        static_cast<double>(measurement.buffer_bytes) * measurement.passes_per_run / std::max(seconds, 1e-12);
    measurement.bytes_per_second = std::max(measurement.bytes_per_second, bytes_per_second);
  }
  return measurement;
}

std::string simd_target_name() { return HWY_DYNAMIC_DISPATCH(target_name_simd)(); }

}  // namespace minigen::bench
#endif  // HWY_ONCE
