#pragma once
// The one reduction every matrix product, norm and attention score goes through.
//
// Batch invariance starts here: a dot product is always summed in the same order — 16 interleaved partial sums
// over the vector, folded pairwise at the end — no matter which caller, how many rows share the call, or which
// thread computes it. So a logit computed for one row alone and the same row inside a batch are bit-identical.
namespace minigen {

float dot(const float* a, const float* b, int n);

}  // namespace minigen
