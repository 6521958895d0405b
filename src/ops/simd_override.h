#pragma once
// MINIGEN_SIMD=avxvnni, avx2 or scalar: run the kernels of a lower SIMD target than the best one the CPU has, so that
// the AVX2 or portable kernels can be measured (minigen bench) and used on a machine with AVX-512; unset or "best":
// the CPU's best. The AVX-512 VNNI and BF16 kernels run only under the AVX-512 target, so these leave them out.
// `avxvnni` is the AVX2 target as a CPU with AVX-VNNI but no AVX-512 runs it (Alder Lake): q8/q4 products with the
// 256-bit vpdpwssd/vpdpbusd; `avx2` is an AVX2-only CPU: no VNNI instruction at all.
namespace minigen {

// Reads MINIGEN_SIMD and restricts Highway's dispatch accordingly. Throws minigen::Error for a value it does not
// know or a target this CPU cannot run. Call once at start-up, before any kernel runs.
void apply_simd_override_from_environment();

}  // namespace minigen
