#pragma once
// The q8/q4 matrix product's kernel for CPUs with AVX-512 VNNI (Ice Lake and later Xeons, Zen 4/5), used by the
// AVX-512 target of ops/matmul_quantized.cpp when the CPU has it.
//
// The same integers as every other kernel, so the same bits: q8's vpdpwssd is vpmaddwd and vpaddd in one
// instruction (int16 pairs into int32, no saturation), q4's vpdpbusd is vpmaddubsw, vpmaddwd-by-ones and vpaddd in
// one (unsigned nibble × int8 quads into int32; the AVX2 kernel's int16 pair sums never saturate, 2 · 15 · 127 <
// 2¹⁵). q8 × int8 activations (W8A8) is vpdpbusd too, on weight codes + 128 (the product of the same integers the
// other kernels take as int16, so the same bits): four products per instruction instead of vpdpwssd's two. What
// changes is the width and the count: 16 output lanes in one 512-bit register, and tiles of 6 rows × 2
// panels (24 accumulators of the 32 registers), so a weight group loaded once serves 6 rows instead of 3 and each
// broadcast activation word two products.
//
// Highway 1.0.3 has no target for this: its AVX3_DL target is compiled for AVX-VNNI (the VEX form) rather than
// AVX-512 VNNI, and it lets the compiler use instructions a CPU without AVX-VNNI (this Zen 5 machine among them)
// cannot run. So the kernel is compiled with its own target attribute and chosen by a CPUID check.
#include "ops/block_quant.h"
#include "ops/matmul_output.h"
#include "ops/packed_matrix.h"

namespace minigen {

// True when the CPU runs AVX-512 F/BW/VL/VNNI and the kernel is compiled (x86-64 builds) and not switched off.
bool avx512_vnni_kernel_enabled();
// Tests switch the kernel off to hold the plain AVX-512 path to its reference too; returns the previous setting.
bool set_avx512_vnni_kernel_for_test(bool enabled);

// Output panels [panel_begin, panel_end) of out = xq · weightᵀ (rows of xq quantized for weight.type()).
void quantized_panels_avx512_vnni(float* out, const QuantizedRows& xq, const PackedMatrix& weight, int panel_begin,
                                  int panel_end, MatmulOutput mode);

}  // namespace minigen
