#pragma once
// The passes of a softmax over a whole row of the vocabulary, a SIMD vector at a time (Highway, chosen at run
// time): the exponentials and the fp64 sums that the draw (probabilities.h) and the raw log-probabilities
// (raw_logprobs.h) take on every generated token of every row. Written as scalar loops they were a quarter of a
// small model's rollout (two exps and three sequential fp64 sums per vocabulary entry).
//
// The sums follow core/lane_sum.h's order in fp64 (element i into running sum i mod 16, folded pairwise), so they
// are the same bits on AVX2 and AVX-512. exp is Highway's (within 1 ulp of the correctly rounded value, 0 below
// −104), the same bits on AVX2 and AVX-512, which both fuse its multiply-adds.
#include <cstddef>

namespace minigen {

// e_i = exp(x_i − shift) for i < n, into out (when out is not null; it may be x itself); returns Σ e_i in fp64.
// −inf gives exactly 0.
double shifted_exp(const float* x, float shift, float* out, std::size_t n);

// Σ x_i in fp64.
double sum_as_double(const float* x, std::size_t n);

// out_i = float(x_i / divisor), the quotient taken in fp64 and rounded once (out may be x).
void divide_as_double(const float* x, double divisor, float* out, std::size_t n);

// The largest of n ≥ 1 values (NaN-free).
float largest_value(const float* x, std::size_t n);

}  // namespace minigen
