#pragma once
// The q8/q4 matrix product's kernel for CPUs with AVX-VNNI, the 256-bit VEX form of the VNNI instructions (Alder
// Lake and later Intel cores, Zen 5), used by the AVX2 target of ops/matmul_quantized.cpp when the CPU has it. It
// matters where AVX-512 is missing or switched off (MINIGEN_SIMD=avx2); with AVX-512 VNNI the 512-bit kernel
// (ops/matmul_quantized_vnni.h) runs instead.
//
// The same integers as the AVX2 kernel, so the same bits: q8's vpdpwssd is its vpmaddwd and vpaddd in one
// instruction; q4's vpdpbusd its vpmaddubsw, vpmaddwd-by-ones and vpaddd in one (the AVX2 kernel's int16 pair sums
// never saturate, 2 · 15 · 127 < 2¹⁵, so summing straight into int32 gives the same totals).
//
// Highway 1.0.3 has no target for AVX-VNNI without AVX-512, so the kernel is compiled with its own target attribute
// and chosen by a CPUID check.
#include "ops/block_quant.h"
#include "ops/matmul_output.h"
#include "ops/packed_matrix.h"

namespace minigen {

// True when the CPU runs AVX2 and AVX-VNNI and the kernel is compiled (x86-64 builds) and not switched off.
bool avx_vnni_kernel_enabled();
// Turns the kernel on (only where the CPU has it) or off; returns the previous setting. MINIGEN_SIMD=avx2 turns it
// off (the AVX2 kernels as an AVX2-only CPU runs them), and tests do, to hold the plain AVX2 path to its reference.
bool set_avx_vnni_kernel_enabled(bool enabled);

// Output panels [panel_begin, panel_end) of out = xq · weightᵀ (rows of xq quantized for weight.type()).
void quantized_panels_avx_vnni(float* out, const QuantizedRows& xq, const PackedMatrix& weight, int panel_begin,
                               int panel_end, MatmulOutput mode);

}  // namespace minigen
