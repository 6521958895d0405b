#pragma once
// The matrix product for f16 weights (ops/weight_type.h): fp16 storage, fp32 compute. Each weight is widened to
// fp32 — exact, every fp16 value is an fp32 value — and enters ops/matmul.h's fma chain where the f32 kernel's
// would: acc = 0; for k = 0 … in_features − 1: acc = fma(x[r][k], float(W[o][k]), acc). So an f16 matrix gives the
// bits of an f32 matrix holding the same (fp16-representable) values, in every target, for any row count and
// thread count, at half the bytes streamed — the point for MiniMind's checkpoints, which are stored in fp16.
//
// Two kernels, one order: a few rows widen each weight vector inside the register tile (F16C's vcvtph2ps on
// AVX2/AVX-512, a bit-exact emulation elsewhere); from kF16WidenRows rows on, each group of panels is widened to an
// fp32 scratch once per block of rows and the f32 tile runs over it.
#include "ops/matmul_output.h"
#include "ops/packed_matrix.h"
#include "ops/thread_pool.h"

namespace minigen {

// Called by matmul() for an f16 weight.
void matmul_f16(float* out, const float* x, const PackedMatrix& weight, int rows, ThreadPool& pool, MatmulOutput mode);

}  // namespace minigen
