#pragma once
// The bf16 matrix product's kernel for CPUs with AVX512_BF16 (Cooper Lake, Sapphire Rapids, Zen 4/5), used by the
// AVX-512 target of ops/matmul.cpp when the CPU has it: vdpbf16ps takes 16 lanes × one pair of inputs per
// instruction, and vcvtne2ps2bf16 rounds the activations 32 at a time — the same bits as every other kernel
// (ops/matmul_bf16.h). Highway 1.0.3 has no target with AVX512_BF16, so, like ops/matmul_quantized_vnni.h, it has
// its own target attribute and a CPUID check.
#include "ops/matmul_bf16.h"

namespace minigen {

// True when the CPU runs AVX-512 F/BW/VL/BF16, the kernel is compiled (x86-64 builds) and not switched off.
bool avx512_bf16_kernel_enabled();
// Tests switch the kernel off to hold the plain AVX-512 path to its reference too; returns the previous setting.
bool set_avx512_bf16_kernel_for_test(bool enabled);

// Rows [row_begin, row_end) of x rounded into `out` (sized by prepare_bf16_rows).
void round_rows_to_bf16_avx512(Bf16Rows& out, const float* x, int in_features, int row_begin, int row_end);
// Output panels [panel_begin, panel_end) of out = x̂ · weightᵀ.
void bf16_panels_avx512(float* out, const Bf16Rows& x, const PackedMatrix& weight, int panel_begin, int panel_end,
                        MatmulOutput mode);

}  // namespace minigen
