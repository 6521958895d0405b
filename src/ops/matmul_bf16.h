#pragma once
// The matrix product for bf16 weights: y = x · Wᵀ with x rounded to bf16 as well, so that every product is
// bf16 × bf16 — the operation AVX512_BF16's vdpbf16ps does for 32 pairs per instruction, twice the products of an
// fp32 FMA of the same width.
//
// The contract, in every kernel:
//   x̂ = float_to_bf16_flush_subnormal(x), zero past in_features up to whole pairs (the weights are padded alike)
//   acc = 0; for j = 0 … in_pairs − 1:
//     acc = fma(x̂[2j + 1], W[o][2j + 1], acc);  acc = fma(x̂[2j], W[o][2j], acc)
// — vdpbf16ps's order: the odd input of each pair first (checked on Zen 5: 1.6 M random lanes, 0 differences; the
// even-first order differs in 8 %). A bf16 × bf16 product is exact in fp32, so each step rounds once, whether an
// FMA, vdpbf16ps or the scalar reference takes it: the same bits in every Highway target, alone or in a batch, at
// any thread count. vdpbf16ps flushes a partial sum below 2⁻¹²⁶ to zero where an FMA keeps it; subnormal operands
// never reach it (both roundings flush them), and model activations stay far above that range.
//
// The cost is the rounding of x: 8 bits of mantissa instead of 24 in one operand. `minigen perplexity --kl-base f32`
// on bf16 weights measures it (docs/speed.md).
#include <cstddef>
#include <cstdint>

#include "hwy/aligned_allocator.h"
#include "ops/matmul_output.h"
#include "ops/packed_matrix.h"
#include "ops/thread_pool.h"

namespace minigen {

// Activation rows rounded to bf16, in one of two forms (pairs = (in_features + 1) / 2; the pad input is zero):
//   kPacked   [rows][pairs] words: word j holds input 2j's bf16 in its low half and 2j + 1's in its high half — the
//             operand vdpbf16ps broadcasts (ops/matmul_bf16_avx512.h).
//   kWidened  [rows][2 · pairs] fp32 values, each a bf16 (low half zero), each pair odd input first (2j + 1, then
//             2j: the order the fmas take them in): the other kernels broadcast them straight from memory into their
//             fmas, or, for bf16 weights widened to fp32 in the same order, run the fp32 kernel over them.
struct Bf16Rows {
  enum class Form { kPacked, kWidened };
  int rows = 0;
  int pairs = 0;
  Form form = Form::kPacked;
  hwy::AlignedFreeUniquePtr<uint32_t[]> words;
  std::size_t capacity = 0;

  std::size_t row_words() const { return static_cast<std::size_t>(form == Form::kPacked ? pairs : 2 * pairs); }
  const uint32_t* row(int r) const { return words.get() + static_cast<std::size_t>(r) * row_words(); }
  uint32_t* row(int r) { return words.get() + static_cast<std::size_t>(r) * row_words(); }
  const float* widened_row(int r) const { return reinterpret_cast<const float*>(row(r)); }
};

// Sizes `out` for rows × in_features in `form` without clearing it (the rounding writes every word).
void prepare_bf16_rows(Bf16Rows& out, int rows, int in_features, Bf16Rows::Form form);
// The scalar rounding of rows [row_begin, row_end) of x ([rows][in_features]) into `out`, in out's form.
void round_rows_to_bf16(Bf16Rows& out, const float* x, int in_features, int row_begin, int row_end);

// Sizes `out` and rounds x into the form the kernel of the dispatched target reads, with that target's code.
void round_rows_for_bf16_kernel(Bf16Rows& out, const float* x, int rows, int in_features);

// Called by matmul() for a bf16 weight.
void matmul_bf16(float* out, const float* x, const PackedMatrix& weight, int rows, ThreadPool& pool, MatmulOutput mode);

// The readable reference: the contract above in three loops, over a packed bf16 weight read through at().
void matmul_reference_bf16(float* out, const float* x, const PackedMatrix& weight, int rows,
                           MatmulOutput mode = MatmulOutput::kStore);

}  // namespace minigen
