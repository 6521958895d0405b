#pragma once
// The order in which the q8/q4 kernels (the AVX2 and AVX-VNNI ones of ops/quantized_tile_avx2-inl.h,
// ops/matmul_quantized_vnni.cpp's AVX-512 VNNI one) visit their register tiles: rows in blocks of kRowBlock, so that a
// block's quantized activations stay in L1 while each output panel's weights stream past, the panels of [panel_begin,
// panel_end) inside, and tiles of up to kTileRows rows within a block. The walk decides nothing about the numbers: each
// output element is summed whole inside one tile call.
#include <algorithm>

#include "ops/count_dispatch.h"
#include "ops/packed_matrix.h"

namespace minigen {

// Calls tile(rows, first_row, panel, out_valid) for every tile, `rows` a std::integral_constant in [1, kTileRows]
// and out_valid the panel's real output features (fewer than 16 in the zero-padded last panel).
template <int kTileRows, int kRowBlock, class Tile>
void walk_quantized_tiles(int rows, int out_features, int panel_begin, int panel_end, Tile&& tile) {
  for (int row_block = 0; row_block < rows; row_block += kRowBlock) {
    const int block_end = std::min(rows, row_block + kRowBlock);
    for (int p = panel_begin; p < panel_end; ++p) {
      const int out_valid = std::min(PackedMatrix::kPanelWidth, out_features - p * PackedMatrix::kPanelWidth);
      for (int r = row_block; r < block_end; r += kTileRows) {
        dispatch_count<kTileRows>(block_end - r, [&](auto tile_rows) { tile(tile_rows, r, p, out_valid); });
      }
    }
  }
}

}  // namespace minigen
