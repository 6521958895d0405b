#pragma once
// The arithmetic `minigen bench` reports, as pure functions: mean ± standard deviation of repeated runs, the
// module's forward-token counts, and the memory-bandwidth bound of decoding.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace minigen::bench {

// Repeated measurements of one quantity. stddev is the sample standard deviation (÷ (n − 1), as llama-bench
// reports it): the spread to expect of one more run; 0 for a single sample.
struct Statistic {
  std::vector<double> samples;
  double mean = 0;
  double stddev = 0;
};
// Throws minigen::Error for no samples.
Statistic summarize(std::vector<double> samples);
// Timed runs (seconds each) as a rate, `units` ÷ seconds per run (tokens/s), and as milliseconds per unit.
Statistic per_second(const std::vector<double>& seconds, double units);
Statistic milliseconds_per(const std::vector<double>& seconds, double units);

// Tokens fed to forward to generate N tokens after a P-token prompt. With the cache: the prompt once, then the
// N − 1 generated tokens before the last (the last is never fed): P + N − 1. Without: step s re-feeds the prompt and
// the s tokens so far, Σ_{s<N} (P + s) = P·N + N(N−1)/2.
int64_t cached_forward_tokens(int64_t prompt_tokens, int64_t new_tokens);
int64_t uncached_forward_tokens(int64_t prompt_tokens, int64_t new_tokens);

// A decode step reads every weight once, so it cannot finish faster than weight_bytes ÷ bandwidth:
// bound tokens/s = bandwidth (bytes/s) ÷ weight bytes per token.
double bound_tokens_per_second(double bytes_per_second, std::size_t weight_bytes);

// Buffers up to this size stand for "the weights stay in the last-level cache" (the tiny model's 19.4 MB of fp32
// weights fit an L3 of 32 MB); larger weights stream from DRAM at every step.
inline constexpr std::size_t kCacheResidentBytes = 24'000'000;

}  // namespace minigen::bench
