#pragma once
// MINIGEN_SIMD=avx2 or scalar: run the kernels of a lower SIMD target than the best one the CPU has, so that the
// AVX2 or portable kernels can be measured (minigen bench) and used on a machine with AVX-512; unset or "best": the
// CPU's best. The AVX-512 VNNI and BF16 kernels run only under the AVX-512 target, so `avx2` leaves them out too.
namespace minigen {

// Reads MINIGEN_SIMD and restricts Highway's dispatch accordingly. Throws minigen::Error for a value it does not
// know or a target this CPU cannot run. Call once at start-up, before any kernel runs.
void apply_simd_override_from_environment();

}  // namespace minigen
