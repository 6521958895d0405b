// The q8/q4 register tile for 256-bit registers, shared by two kernels that differ only in their integer steps:
// ops/matmul_quantized.cpp's AVX2 kernel (vpmaddwd + vpaddd; vpmaddubsw into int16, widened once per block) and
// ops/matmul_quantized_avx_vnni.cpp's AVX-VNNI kernel (vpdpwssd; vpdpbusd straight into int32). The integer totals
// are the same either way — the AVX2 kernel's int16 pair sums never saturate, 2 · 15 · 127 < 2¹⁵ — so both give the
// scalar reference's bits.
//
// Like Highway's -inl.h files this has no include guard: each kernel includes it inside its own namespace, with
// its own target attributes in force, after defining MINIGEN_QUANT_TILE_AVX_VNNI to 0 or 1. Since it lands inside a
// namespace, it includes nothing: the includer first includes <immintrin.h>, <cstring>, hwy/base.h,
// ops/block_quant.h, ops/matmul_output.h, ops/packed_matrix.h and ops/quantized_tile_walk.h.

#ifndef MINIGEN_QUANT_TILE_AVX_VNNI
#error "define MINIGEN_QUANT_TILE_AVX_VNNI (0 or 1) before including ops/quantized_tile_avx2-inl.h"
#endif

// Rows of one register tile: per row 2 float and 2 integer accumulators (16 lanes as two 8-lane vectors), so 3 rows
// and the two weight vectors fill the 16 ymm registers.
constexpr int kTileRows = 3;
constexpr int kRowBlock = kTileRows * 8;

// q8: acc += Σ of each lane's 2 int16 products.
inline __m256i pair_step(__m256i acc, __m256i w, __m256i x) {
#if MINIGEN_QUANT_TILE_AVX_VNNI
  return _mm256_dpwssd_avx_epi32(acc, w, x);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(w, x));
#endif
}

// q4: acc += Σ of each lane's 4 unsigned-nibble × int8 products — in int16 pairs for AVX2 (widened by
// quad_total once per block), straight into int32 for AVX-VNNI.
inline __m256i quad_step(__m256i acc, __m256i w, __m256i x) {
#if MINIGEN_QUANT_TILE_AVX_VNNI
  return _mm256_dpbusd_avx_epi32(acc, w, x);
#else
  return _mm256_add_epi16(acc, _mm256_maddubs_epi16(w, x));
#endif
}

inline __m256i quad_total(__m256i acc) {
#if MINIGEN_QUANT_TILE_AVX_VNNI
  return acc;
#else
  return _mm256_madd_epi16(acc, _mm256_set1_epi16(1));
#endif
}

// One block's integer sums Σ_k code_w · code_x for 16 lanes: isum[r][0] lanes 0–7, isum[r][1] lanes 8–15.
template <int kRows, WeightType kType>
inline void block_sums(const QuantizedRows& xq, int row0, int b, const uint8_t* group, __m256i (&isum)[kRows][2]) {
  for (int r = 0; r < kRows; ++r) isum[r][0] = isum[r][1] = _mm256_setzero_si256();
  if constexpr (kType == WeightType::kQ8) {
    // Pair j: inputs 2j, 2j + 1 of 16 lanes, int8 widened to int16. 16 pairs of 2 · 127 · 32767 fit int32.
    for (int j = 0; j < kQuantBlock / 2; ++j) {
      const __m256i w_low = _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(group + j * 32)));
      const __m256i w_high =
          _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(group + j * 32 + 16)));
      for (int r = 0; r < kRows; ++r) {
        int32_t x_pair;
        std::memcpy(&x_pair, xq.int16_row(row0 + r) + b * kQuantBlock + 2 * j, 4);
        const __m256i x = _mm256_set1_epi32(x_pair);
        isum[r][0] = pair_step(isum[r][0], w_low, x);
        isum[r][1] = pair_step(isum[r][1], w_high, x);
      }
    }
  } else {
    // Quad q: inputs 4q … 4q + 3, nibbles (codes + 8, unsigned) of lanes 0–7 low and 8–15 high. vpmaddubsw's pairs
    // of 15 · 127 summed over 8 quads stay below 2¹⁵.
    const __m256i mask = _mm256_set1_epi8(0x0f);
    for (int q = 0; q < kQuantBlock / 4; ++q) {
      const __m256i nibbles = _mm256_load_si256(reinterpret_cast<const __m256i*>(group + q * 32));
      const __m256i w_low = _mm256_and_si256(nibbles, mask);
      const __m256i w_high = _mm256_and_si256(_mm256_srli_epi16(nibbles, 4), mask);
      for (int r = 0; r < kRows; ++r) {
        int32_t x_quad;
        std::memcpy(&x_quad, xq.int8_row(row0 + r) + b * kQuantBlock + q * 4, 4);
        const __m256i x = _mm256_set1_epi32(x_quad);
        isum[r][0] = quad_step(isum[r][0], w_low, x);
        isum[r][1] = quad_step(isum[r][1], w_high, x);
      }
    }
    for (int r = 0; r < kRows; ++r) {  // Σ (c + 8) · x − 8 · Σ x = Σ c · x
      const __m256i offset = _mm256_set1_epi32(8 * xq.sum(row0 + r, b));
      isum[r][0] = _mm256_sub_epi32(quad_total(isum[r][0]), offset);
      isum[r][1] = _mm256_sub_epi32(quad_total(isum[r][1]), offset);
    }
  }
}

template <int kRows, WeightType kType>
HWY_NOINLINE void quantized_tile(const QuantizedRows& xq, int row0, const uint8_t* panel, int blocks,
                                 std::size_t group_bytes, float* out, int out_stride, int out_valid,
                                 MatmulOutput mode) {
  __m256 acc[kRows][2];
  for (int r = 0; r < kRows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int b = 0; b < blocks; ++b) {
    const uint8_t* group = panel + b * group_bytes;
    __m256i isum[kRows][2];
    block_sums<kRows, kType>(xq, row0, b, group, isum);
    const uint8_t* scales = group + group_bytes - PackedMatrix::kScaleBytes;
    const __m256 d_low = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales)));
    const __m256 d_high = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales + 16)));
    for (int r = 0; r < kRows; ++r) {  // acc = fma(float(isum), d_w · d_x, acc), as the scalar reference
      const __m256 dx = _mm256_set1_ps(xq.scale(row0 + r, b));
      acc[r][0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r][0]), _mm256_mul_ps(d_low, dx), acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r][1]), _mm256_mul_ps(d_high, dx), acc[r][1]);
    }
  }
  for (int r = 0; r < kRows; ++r) {
    float* out_row = out + static_cast<std::size_t>(r) * out_stride;
    alignas(32) float lanes[PackedMatrix::kPanelWidth];
    _mm256_store_ps(lanes, acc[r][0]);
    _mm256_store_ps(lanes + 8, acc[r][1]);
    for (int i = 0; i < out_valid; ++i) out_row[i] = mode == MatmulOutput::kAddTo ? out_row[i] + lanes[i] : lanes[i];
  }
}

// Output panels [panel_begin, panel_end) of out = xq · weightᵀ.
template <WeightType kType>
void quantized_panel_range(float* out, const QuantizedRows& xq, const PackedMatrix& weight, int panel_begin,
                           int panel_end, MatmulOutput mode) {
  const int out_features = weight.out_features();
  walk_quantized_tiles<kTileRows, kRowBlock, 1>(
      xq.rows, out_features, panel_begin, panel_end, [&](auto rows, auto, int first_row, int panel, int out_valid) {
        quantized_tile<decltype(rows)::value, kType>(
            xq, first_row, weight.quant_panel(panel), weight.blocks(), weight.group_bytes(),
            out + static_cast<std::size_t>(first_row) * out_features + panel * PackedMatrix::kPanelWidth, out_features,
            out_valid, mode);
      });
}

inline void quantized_panels_256(float* out, const QuantizedRows& xq, const PackedMatrix& weight, int panel_begin,
                                 int panel_end, MatmulOutput mode) {
  if (weight.type() == WeightType::kQ8) {
    quantized_panel_range<WeightType::kQ8>(out, xq, weight, panel_begin, panel_end, mode);
  } else {
    quantized_panel_range<WeightType::kQ4>(out, xq, weight, panel_begin, panel_end, mode);
  }
}
