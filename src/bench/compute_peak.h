#pragma once
// How fast this machine multiplies and adds: the ceiling a prefill runs into, the way memory bandwidth is the
// ceiling of a decode step (bench/memory_bandwidth.h). A prefill of P tokens does 2 ops per weight per token and
// reads each weight once for all P of them, so it is bound by arithmetic, not by bytes.
//
// Each weight type is measured with the instruction its matrix-product kernel is built from on this CPU, in the
// kernel's register width, as many independent chains as hide the latency, on every thread of the pool at once:
//   f32, bf16   fp32 FMA (bf16 weights are widened to fp32 before the FMA), Highway's vector width
//   q8          int16 pairs into int32: vpdpwssd (AVX-512 VNNI; AVX-VNNI on the AVX2 target) or vpmaddwd + vpaddd
//               (AVX2)
//   q4          unsigned × signed int8 quads into int32: vpdpbusd (AVX-512 VNNI; AVX-VNNI on the AVX2 target) or
//               vpmaddubsw + vpaddw (AVX2)
// so the fraction of peak a test reaches says how well the kernel feeds its own instruction. A multiply-add
// counts as 2 ops.
#include <string>

#include "model/config.h"
#include "ops/thread_pool.h"
#include "ops/weight_type.h"

namespace minigen::bench {

struct ComputePeak {
  WeightType weight_type = WeightType::kF32;
  int threads = 0;
  std::string instruction;    // "fp32 FMA, 16 lanes (AVX3)", "vpdpwssd int16 pairs, 512-bit (AVX-512 VNNI)"
  double ops_per_second = 0;  // best run; 0 when the kernel of this type has no SIMD form here (scalar target)
  double checksum = 0;        // what the chains ended at: finite, so the compiler could not drop them
};

// `activations`: the codes a q8/q4 product runs with (q8 × int8 is vpdpbusd where the AVX-512 VNNI kernel runs it);
// ignored for the other types.
ComputePeak measure_compute_peak(WeightType type, ActivationCodes activations, ThreadPool& pool, int runs = 9);

// Multiply-adds of the matrix products one token costs in the decoder layers (attention projections and the MLP;
// for a mixture of experts the router, the top-k routed experts and the shared ones), without the output
// projection, which a prefill runs for its last token only.
double layer_macs_per_token(const ModelConfig& config);
// Multiply-adds of attention for one query at position `position` (0-based): q·k and p·v over position + 1 keys,
// every head of every layer.
double attention_macs(const ModelConfig& config, int position);

// Ops of a prefill of `prompt_tokens` tokens: the layers for every token, attention over the causal triangle, and
// the output projection for the last token.
double prefill_ops(const ModelConfig& config, int prompt_tokens);

}  // namespace minigen::bench
