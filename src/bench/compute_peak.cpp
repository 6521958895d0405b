#include "bench/compute_peak.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ops/matmul_bf16_avx512.h"
#include "ops/matmul_quantized_avx_vnni.h"
#include "ops/matmul_quantized_vnni.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MINIGEN_PEAK_X86 1
#else
#define MINIGEN_PEAK_X86 0
#endif

// foreach_target.h must come before the other Highway headers, so their order is not clang-format's to sort.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/compute_peak.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

#ifndef MINIGEN_COMPUTE_PEAK_ONCE
#define MINIGEN_COMPUTE_PEAK_ONCE
namespace minigen::bench {
// Independent chains per thread: enough to cover an FMA or dot-product latency of 4–5 cycles on two ports.
inline constexpr int kChains = 12;
}  // namespace minigen::bench
#endif

HWY_BEFORE_NAMESPACE();
namespace minigen::bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// kChains recurrences a = a · m + c, each converging to c / (1 − m): no overflow, no denormals, and nothing the
// compiler may fold (floating point is not reassociated here).
double fma_chains_simd(int64_t iterations, float c) {
  const hn::ScalableTag<float> d;
  const auto m = hn::Set(d, 0.999f);
  const auto add = hn::Set(d, c);
  // Each chain starts elsewhere: chains computing the same values would be merged by the compiler into one (it did:
  // the peak came out 3× too high).
  auto a0 = hn::Set(d, 1.0f), a1 = hn::Set(d, 2.0f), a2 = hn::Set(d, 3.0f), a3 = hn::Set(d, 4.0f);
  auto a4 = hn::Set(d, 5.0f), a5 = hn::Set(d, 6.0f), a6 = hn::Set(d, 7.0f), a7 = hn::Set(d, 8.0f);
  auto a8 = hn::Set(d, 9.0f), a9 = hn::Set(d, 10.0f), a10 = hn::Set(d, 11.0f), a11 = hn::Set(d, 12.0f);
  static_assert(kChains == 12);
  for (int64_t i = 0; i < iterations; ++i) {
    a0 = hn::MulAdd(a0, m, add), a1 = hn::MulAdd(a1, m, add), a2 = hn::MulAdd(a2, m, add);
    a3 = hn::MulAdd(a3, m, add), a4 = hn::MulAdd(a4, m, add), a5 = hn::MulAdd(a5, m, add);
    a6 = hn::MulAdd(a6, m, add), a7 = hn::MulAdd(a7, m, add), a8 = hn::MulAdd(a8, m, add);
    a9 = hn::MulAdd(a9, m, add), a10 = hn::MulAdd(a10, m, add), a11 = hn::MulAdd(a11, m, add);
  }
  const auto sum =
      hn::Add(hn::Add(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)), hn::Add(hn::Add(a4, a5), hn::Add(a6, a7))),
              hn::Add(hn::Add(a8, a9), hn::Add(a10, a11)));
  return static_cast<double>(hn::GetLane(hn::SumOfLanes(d, sum)));
}

int fp32_lanes_simd() { return static_cast<int>(hn::Lanes(hn::ScalableTag<float>())); }
int64_t target_simd() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace minigen::bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace minigen::bench {

HWY_EXPORT(fma_chains_simd);
HWY_EXPORT(fp32_lanes_simd);
HWY_EXPORT(target_simd);

namespace {

// One thread's work: `iterations` rounds of kChains instructions; returns a checksum.
using ChainKernel = double (*)(int64_t iterations, int seed);

#if MINIGEN_PEAK_X86
// The integer chains wrap around in int32 (the instructions do not saturate), which is defined: only the checksum
// depends on it. The operands come from `seed`, so the compiler cannot precompute the result, and each chain starts
// at its own value, so it cannot merge chains that would compute the same thing.
#define MINIGEN_PEAK_CHAINS(type, start, step)         \
  type acc[kChains];                                   \
  for (int k = 0; k < kChains; ++k) acc[k] = start(k); \
  for (int64_t i = 0; i < iterations; ++i) {           \
    for (int k = 0; k < kChains; ++k) acc[k] = step;   \
  }                                                    \
  alignas(64) int32_t lanes[sizeof(type) / 4];         \
  double total = 0;                                    \
  for (int k = 0; k < kChains; ++k) {                  \
    std::memcpy(lanes, &acc[k], sizeof(type));         \
    for (int32_t lane : lanes) total += lane;          \
  }                                                    \
  return total;

__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) double dpwssd_chains(int64_t iterations, int seed) {
  const __m512i a = _mm512_set1_epi16(static_cast<int16_t>(seed + 3)),
                b = _mm512_set1_epi16(static_cast<int16_t>(-seed));
  MINIGEN_PEAK_CHAINS(__m512i, _mm512_set1_epi32, _mm512_dpwssd_epi32(acc[k], a, b))
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) double dpbusd_chains(int64_t iterations, int seed) {
  const __m512i a = _mm512_set1_epi8(static_cast<char>(seed + 3)), b = _mm512_set1_epi8(static_cast<char>(-seed));
  MINIGEN_PEAK_CHAINS(__m512i, _mm512_set1_epi32, _mm512_dpbusd_epi32(acc[k], a, b))
}

// bf16 pairs from `seed`, so the products are not constants; the fp32 sums grow by a few thousandths a step.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) double dpbf16_chains(int64_t iterations, int seed) {
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.03f * static_cast<float>(seed + 1)), _mm512_set1_ps(0.05f));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.02f), _mm512_set1_ps(-0.01f * static_cast<float>(seed)));
  MINIGEN_PEAK_CHAINS(__m512, _mm512_set1_ps, _mm512_dpbf16_ps(acc[k], a, b))
}

__attribute__((target("avx2,avxvnni"))) double dpwssd_avx_chains(int64_t iterations, int seed) {
  const __m256i a = _mm256_set1_epi16(static_cast<int16_t>(seed + 3)),
                b = _mm256_set1_epi16(static_cast<int16_t>(-seed));
  MINIGEN_PEAK_CHAINS(__m256i, _mm256_set1_epi32, _mm256_dpwssd_avx_epi32(acc[k], a, b))
}

__attribute__((target("avx2,avxvnni"))) double dpbusd_avx_chains(int64_t iterations, int seed) {
  const __m256i a = _mm256_set1_epi8(static_cast<char>(seed + 3)), b = _mm256_set1_epi8(static_cast<char>(-seed));
  MINIGEN_PEAK_CHAINS(__m256i, _mm256_set1_epi32, _mm256_dpbusd_avx_epi32(acc[k], a, b))
}

__attribute__((target("avx2"))) double madd_chains(int64_t iterations, int seed) {
  const __m256i a = _mm256_set1_epi16(static_cast<int16_t>(seed + 3)),
                b = _mm256_set1_epi16(static_cast<int16_t>(-seed));
  MINIGEN_PEAK_CHAINS(__m256i, _mm256_set1_epi32, _mm256_add_epi32(acc[k], _mm256_madd_epi16(a, b)))
}

__attribute__((target("avx2"))) double maddubs_chains(int64_t iterations, int seed) {
  const __m256i a = _mm256_set1_epi8(static_cast<char>(seed + 3)), b = _mm256_set1_epi8(static_cast<char>(-seed));
  MINIGEN_PEAK_CHAINS(__m256i, _mm256_set1_epi32, _mm256_add_epi16(acc[k], _mm256_maddubs_epi16(a, b)))
}
#undef MINIGEN_PEAK_CHAINS
#endif

double fp32_chains(int64_t iterations, int seed) {
  return HWY_DYNAMIC_DISPATCH(fma_chains_simd)(iterations, 1e-3f * static_cast<float>(seed + 1));
}

struct PeakKernel {
  ChainKernel run = nullptr;  // null: no SIMD form here
  double macs_per_instruction = 0;
  std::string instruction;
};

PeakKernel peak_kernel(WeightType type, ActivationCodes activations) {
  const int64_t target = HWY_DYNAMIC_DISPATCH(target_simd)();
#if MINIGEN_PEAK_X86
  // As ops/matmul.cpp chooses: bf16 products with vdpbf16ps on the AVX-512 target of a CPU with AVX512_BF16.
  if (type == WeightType::kBF16 && target == HWY_AVX3 && avx512_bf16_kernel_enabled()) {
    return {dpbf16_chains, 32, "vdpbf16ps bf16 pairs, 512-bit (AVX512_BF16)"};
  }
#endif
  if (type == WeightType::kF32 || type == WeightType::kF16 || type == WeightType::kBF16) {
    const int lanes = HWY_DYNAMIC_DISPATCH(fp32_lanes_simd)();
    return {fp32_chains, static_cast<double>(lanes),
            "fp32 FMA, " + std::to_string(lanes) + " lanes (" + hwy::TargetName(target) + ")"};
  }
#if MINIGEN_PEAK_X86
  const bool q8 = type == WeightType::kQ8;
  // As ops/matmul_quantized.cpp chooses: the VNNI kernel on the AVX-512 target of a CPU with it, else the AVX2 one.
  // q8 × int8 is vpdpbusd in the AVX-512 VNNI kernel only; the others run it as int16 pairs.
  if (target == HWY_AVX3 && avx512_vnni_kernel_enabled()) {
    return q8 && activations == ActivationCodes::kInt16
               ? PeakKernel{dpwssd_chains, 32, "vpdpwssd int16 pairs, 512-bit (AVX-512 VNNI)"}
               : PeakKernel{dpbusd_chains, 64, "vpdpbusd int8 quads, 512-bit (AVX-512 VNNI)"};
  }
  // And on the AVX2 target of a CPU with AVX-VNNI, the same instructions in their 256-bit VEX form.
  if (target == HWY_AVX2 && avx_vnni_kernel_enabled()) {
    return q8 ? PeakKernel{dpwssd_avx_chains, 16, "vpdpwssd int16 pairs, 256-bit (AVX-VNNI)"}
              : PeakKernel{dpbusd_avx_chains, 32, "vpdpbusd int8 quads, 256-bit (AVX-VNNI)"};
  }
  if (target == HWY_AVX3 || target == HWY_AVX2) {
    // Two instructions a step each: the multiply (counted) and the add into the accumulator.
    return q8 ? PeakKernel{madd_chains, 16, "vpmaddwd + vpaddd int16 pairs, 256-bit (AVX2)"}
              : PeakKernel{maddubs_chains, 32, "vpmaddubsw + vpaddw int8 pairs, 256-bit (AVX2)"};
  }
#endif
  return {nullptr, 0, std::string("scalar loops (") + hwy::TargetName(target) + "): no SIMD peak"};
}

constexpr double kMinimumRunSeconds = 0.02;

}  // namespace

ComputePeak measure_compute_peak(WeightType type, ActivationCodes activations, ThreadPool& pool, int runs) {
  ComputePeak peak;
  peak.weight_type = type;
  peak.threads = pool.num_threads();
  const PeakKernel kernel = peak_kernel(type, activations);
  peak.instruction = kernel.instruction;
  if (kernel.run == nullptr) return peak;

  const int shares = pool.num_threads();
  std::vector<double> checksums(shares);
  auto run_all = [&](int64_t iterations) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    pool.parallel_for(shares, [&](int64_t begin, int64_t end) {
      for (int64_t share = begin; share < end; ++share)
        checksums[share] = kernel.run(iterations, static_cast<int>(share));
    });
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  int64_t iterations = 1 << 12;
  while (run_all(iterations) < kMinimumRunSeconds && iterations < (int64_t{1} << 34)) iterations *= 2;
  for (int run = 0; run < std::max(1, runs); ++run) {
    const double seconds = run_all(iterations);
    const double ops = 2.0 * kernel.macs_per_instruction * kChains * static_cast<double>(iterations) * shares;
    peak.ops_per_second = std::max(peak.ops_per_second, ops / std::max(seconds, 1e-12));
  }
  peak.checksum = 0;
  for (double checksum : checksums) peak.checksum += checksum;
  return peak;
}

double layer_macs_per_token(const ModelConfig& config) {
  const double hidden = config.hidden_size;
  const double attention = hidden * config.q_width() * 2 + hidden * config.kv_width() * 2;  // q, o; k, v
  double mlp = 3.0 * hidden * config.intermediate_size;
  if (config.use_moe) {
    const double expert = 3.0 * hidden * config.moe_intermediate_size;
    mlp = hidden * config.num_experts + expert * (config.num_experts_per_token + config.num_shared_experts);
  }
  return config.num_layers * (attention + mlp);
}

double attention_macs(const ModelConfig& config, int position) {
  return 2.0 * config.num_layers * config.num_q_heads * config.head_dim * (position + 1.0);
}

double prefill_ops(const ModelConfig& config, int prompt_tokens) {
  const double p = prompt_tokens;
  // Σ_{t<P} (t + 1) = P(P + 1)/2 keys over the causal triangle.
  const double attention = attention_macs(config, 0) * p * (p + 1) / 2;
  const double output = static_cast<double>(config.hidden_size) * config.vocab_size;
  return 2.0 * (layer_macs_per_token(config) * p + attention + output);
}

}  // namespace minigen::bench
#endif  // HWY_ONCE
