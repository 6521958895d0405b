#pragma once
// How fast this machine streams memory into the cores: the ceiling a decode step runs into, because one decode step
// must read every weight once (ops/packed_matrix.h) and does only two flops per weight it reads.
//
// The kernel is a SIMD sum over a float buffer, split like the matrix products split their work: each thread of the
// pool reads its own contiguous share. The sum is returned and checked against a closed form, so the compiler cannot
// drop the reads and a broken kernel cannot report a bandwidth it did not achieve.
#include <cstddef>
#include <string>

#include "ops/thread_pool.h"

namespace minigen::bench {

// Sums values[0, count) on `pool`; thread i reads share i = [count·i/n, count·(i+1)/n). Partial sums are taken in
// float over blocks of a few thousand elements and added in double, so small integer values sum exactly.
double parallel_sum(const float* values, std::size_t count, ThreadPool& pool);

// The value the measurement buffer holds at `index` (0, 1, …, 7, 0, 1, …), and the exact sum of `count` of them.
float bandwidth_pattern_value(std::size_t index);
double bandwidth_pattern_sum(std::size_t count);

struct BandwidthMeasurement {
  std::size_t buffer_bytes = 0;
  int threads = 0;
  int runs = 0;                  // the best of these is reported
  int passes_per_run = 0;        // whole-buffer reads per run, enough for a run to last a few tens of ms
  double bytes_per_second = 0;   // best run: passes · buffer_bytes / seconds
  double checksum = 0;           // what the last pass summed …
  double expected_checksum = 0;  // … and what it must be
};

// Allocates and fills (first touch by the reading threads) a buffer of `buffer_bytes`, then reads it `runs` times.
BandwidthMeasurement measure_read_bandwidth(std::size_t buffer_bytes, ThreadPool& pool, int runs);

// The SIMD instruction set Highway dispatches to on this CPU, e.g. "AVX2" or "AVX3".
std::string simd_target_name();

}  // namespace minigen::bench
