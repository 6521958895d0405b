#pragma once
// The passes of the sampler chain that read a whole row of logits, one vocabulary entry at a time in the scalar
// form, here compared, selected and counted a SIMD vector at a time (Highway, chosen at run time). A greedy step of
// the chain (temperature → top-k → top-p → argmax) makes about eight such passes; on a 6,400-token vocabulary they
// took 35 µs, more than a tenth of a tiny model's decode step, before they were vectorised.
//
// Every function gives exactly what its scalar form gives: they compare and select, and the one that computes
// (divide_all) does the same single division per value, so no result depends on the SIMD width.
#include <cstddef>
#include <span>
#include <vector>

namespace minigen {

// True when some value is NaN.
bool any_nan(std::span<const float> values);

// values[i] = values[i] / divisor for every i (temperature).
void divide_all(std::span<float> values, float divisor);

// Every value below `bound` becomes −inf (top-k's and top-p's cut).
void remove_below(std::span<float> values, float bound);

// The k-th largest value counting duplicates, like torch.topk(values, k).values[-1]; needs 0 < k < size.
float kth_largest(std::span<const float> values, std::size_t k);

// The index of the first largest value (torch.argmax's and std::max_element's choice); `values` holds no NaN.
int first_max_index(std::span<const float> values);

// How many values are not −inf: the candidates a draw chooses among.
int count_candidates(std::span<const float> values);

// The values that are not −inf, in index order, into `out` (resized; its capacity reused).
void gather_candidates(std::span<const float> values, std::vector<float>& out);

// The scalar forms, for the tests.
namespace vocab_scan_reference {
float kth_largest(std::span<const float> values, std::size_t k);
int first_max_index(std::span<const float> values);
}  // namespace vocab_scan_reference

}  // namespace minigen
