#pragma once
// The element type the matrix products read their weights in.
//
//   f32   exact: bit-identical to the reference.
//   f16   IEEE fp16 storage, fp32 compute: each weight widened exactly (F16C's vcvtph2ps) into the f32 kernel's fma
//         order, so on a checkpoint stored in fp16 (every MiniMind .pth) it is bit-identical to f32 at half the
//         bytes. An f32 checkpoint is rounded to nearest-even once, at packing.
//   bf16  each weight rounded to 8 mantissa bits; half the bytes. Accumulation stays fp32.
//   q8    symmetric int8 in blocks of 32 weights along the input dimension, one fp16 scale per block
//         (8.5 bits per weight, llama.cpp's Q8_0 size). The product quantizes each activation row to int16 with a
//         scale per block of 32 and sums int8 × int16 exactly in int32 — see ops/matmul_quantized.h.
//   q4    4-bit codes −8 … 7 in blocks of 32 with one fp16 scale (4.5 bits per weight, Q4_0's size); the block's
//         largest-magnitude weight maps to −8 so all 16 codes are used. Activations are quantized to int8 for it
//         (q4's own error is ~50× larger than that). The output projection (the tied
//         embedding) stays q8 in a q4 model: it is the one matrix every logit comes from.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/enum_names.h"
#include "ops/float_formats.h"  // the weights' 16-bit formats

namespace minigen {

enum class WeightType { kF32, kF16, kBF16, kQ8, kQ4 };
inline constexpr EnumName<WeightType> kWeightTypeNames[] = {{WeightType::kF32, "f32"},
                                                            {WeightType::kF16, "f16"},
                                                            {WeightType::kBF16, "bf16"},
                                                            {WeightType::kQ8, "q8"},
                                                            {WeightType::kQ4, "q4"}};

std::string_view weight_type_name(WeightType type);   // "f32", "f16", "bf16", "q8", "q4"
WeightType parse_weight_type(std::string_view name);  // throws minigen::Error for anything else
bool is_block_quantized(WeightType type);             // q8 or q4
// Stored bits per weight, scales included: 32, 16, 16, 8.5, 4.5.
double weight_type_bits(WeightType type);
// f16 or bf16: 16-bit floats in the panels.
bool is_half_float(WeightType type);

// The integer codes a q8/q4 product quantizes each activation row to (ops/block_quant.h), per block of 32 with an
// fp32 scale: int16 (codes −32767 … 32767) or int8 (−127 … 127, llama.cpp's Q8_0 activations). q8 takes int16 by
// default and int8 when asked (W8A8: AVX-512 VNNI's vpdpbusd does twice the products of vpdpwssd); q4 takes int8
// only — its 4-bit weights are the error that matters, and its kernels multiply bytes.
enum class ActivationCodes { kInt8, kInt16 };
inline constexpr EnumName<ActivationCodes> kActivationCodeNames[] = {{ActivationCodes::kInt8, "int8"},
                                                                     {ActivationCodes::kInt16, "int16"}};
std::string_view activation_codes_name(ActivationCodes codes);  // "int8", "int16"
ActivationCodes parse_activation_codes(std::string_view name);  // throws minigen::Error for anything else
// What a q8/q4 product of `type` runs with when nothing is asked: int16 for q8, int8 for q4.
ActivationCodes default_activation_codes(WeightType type);
// What outputs report as "activations": "int8" or "int16" for q8/q4 weights, empty for the float types (whose
// products take fp32 activations).
std::string_view reported_activations(WeightType type, ActivationCodes codes);
// How output names what runs: "q8", or "q8·int8" when a q8/q4 type runs other codes than its default.
std::string weights_label(WeightType type, ActivationCodes codes);

}  // namespace minigen
