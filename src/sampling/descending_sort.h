#pragma once
// Sorting a row's candidate logits, largest first, fast enough to do once per generated token.
//
// top-p needs every remaining logit in descending order, because the softmax sum it compares with p is accumulated
// in that order (see top_p_sampler.cpp). With the top-k filter off that is the whole vocabulary, every step. Measured
// on this machine (AVX-512): 151,665 floats take 12.8 ms with std::sort and about 0.55 ms with Highway's vectorised
// quicksort (VQSort, which picks AVX-512, AVX2 or SSE4 when the program starts); 6,400 take 0.3 ms and 0.02 ms. Below
// a few hundred values VQSort's fixed cost dominates and std::sort is the faster of the two.
#include <span>

namespace minigen {

// Sorts `values` largest first. Equal values are interchangeable (+0 and −0 count as equal and may come in either
// order), so no tie rule is needed. Infinities are fine. NaN is not allowed: the chain rejects it before any filter.
void sort_descending(std::span<float> values);

}  // namespace minigen
