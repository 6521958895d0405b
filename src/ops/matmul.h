#pragma once
// y = x · Wᵀ for a batch of rows (W is an nn.Linear weight, packed into 16-wide panels).
//
// The reduction order is the whole contract: every output element is one sequential fused-multiply-add chain,
//   acc = 0; for k = 0, 1, …, in_features − 1: acc = fma(x[r][k], W[o][k], acc)
// — never split, never reordered. The SIMD kernel runs 16 (or 64) such chains side by side, one per output
// feature, which is why it matches the scalar reference bit for bit, and why a row's result cannot depend on how
// many rows share the call, how they are tiled, or how many threads split the output features.
// f16 weights are widened exactly into this very order (ops/matmul_f16.h); bf16 weights keep the same guarantees
// with their own order, over pairs of inputs (ops/matmul_bf16.h); q8 and q4 sum integers per block
// (ops/matmul_quantized.h).
#include "ops/matmul_output.h"
#include "ops/packed_matrix.h"
#include "ops/thread_pool.h"

namespace minigen {

// x: [rows][in_features], row-major with row stride in_features; out: [rows][out_features].
void matmul(float* out, const float* x, const PackedMatrix& weight, int rows, ThreadPool& pool,
            MatmulOutput mode = MatmulOutput::kStore);

// The readable reference: three loops over a row-major [out_features][in_features] matrix, std::fma in the order
// above. Tests hold the SIMD kernel to it bit for bit.
void matmul_reference(float* out, const float* x, const float* weight, int rows, int in_features, int out_features,
                      MatmulOutput mode = MatmulOutput::kStore);

}  // namespace minigen
