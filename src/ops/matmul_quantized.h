#pragma once
// y = x · Wᵀ for q8 and q4 weights (ops/weight_type.h), reached through matmul() in ops/matmul.h.
//
// Each activation row is quantized first (ops/block_quant.h: int16 codes for q8 weights, int8 for q4, an fp32 scale
// per block of 32). Then, per output element, block by block:
//   isum = Σ_{k in block} code_w[o][k] · code_x[r][k]          exact in int32 (any order gives the same integer)
//   acc  = fma(float(isum), d_w[o][b] · d_x[r][b], acc)       one fma chain over b = 0, 1, …
// float(isum) rounds to nearest-even once |isum| passes 2²⁴ (int16 codes), the same rounding everywhere. A row's
// codes and scales depend on that row alone, so the result is the same alone or in a batch, on any thread count.
#include "ops/matmul_output.h"
#include "ops/packed_matrix.h"
#include "ops/thread_pool.h"

namespace minigen {

void matmul_quantized(float* out, const float* x, const PackedMatrix& weight, int rows, ThreadPool& pool,
                      MatmulOutput mode);

// The readable reference: the sums above as scalar loops over PackedMatrix::code and block_scale.
void matmul_reference_quantized(float* out, const float* x, const PackedMatrix& weight, int rows,
                                MatmulOutput mode = MatmulOutput::kStore);

}  // namespace minigen
