#pragma once
// The 16-bit float formats: bf16 (the upper half of an fp32, what PyTorch's bfloat16 is) and IEEE binary16 (fp16).
// Rounding is to nearest, ties to even, as PyTorch's .to() and F16C's vcvtps2ph; overflow goes to infinity (fp16),
// NaN stays NaN (quiet), fp16 subnormals are kept. Model files, bf16 weights and the q8/q4 scales all use these.
#include <cstdint>

namespace minigen {

float f16_to_float(uint16_t bits);
float bf16_to_float(uint16_t bits);
uint16_t float_to_f16(float value);
uint16_t float_to_bf16(float value);
// float_to_bf16, except that a subnormal input becomes a zero of its sign: the rounding of AVX512_BF16's
// vcvtne2ps2bf16, and the operands of the bf16 matrix product (ops/matmul_bf16.h), which vdpbf16ps would read as zero.
uint16_t float_to_bf16_flush_subnormal(float value);

}  // namespace minigen
