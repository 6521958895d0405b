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

// Calls tile(rows, panels, first_row, first_panel, out_valid_last) for every tile: `rows` a std::integral_constant
// in [1, kTileRows], `panels` one in [1, kTilePanels] (fewer only at the end of the range), and out_valid_last the
// real output features of the tile's last panel (fewer than 16 in the matrix's zero-padded last panel).
template <int kTileRows, int kRowBlock, int kTilePanels, class Tile>
void walk_quantized_tiles(int rows, int out_features, int panel_begin, int panel_end, Tile&& tile) {
  for (int row_block = 0; row_block < rows; row_block += kRowBlock) {
    const int block_end = std::min(rows, row_block + kRowBlock);
    for (int p = panel_begin; p < panel_end; p += kTilePanels) {
      const int panels = std::min(kTilePanels, panel_end - p);
      const int last = p + panels - 1;
      const int out_valid_last = std::min(PackedMatrix::kPanelWidth, out_features - last * PackedMatrix::kPanelWidth);
      for (int r = row_block; r < block_end; r += kTileRows) {
        dispatch_count<kTileRows>(block_end - r, [&](auto tile_rows) {
          dispatch_count<kTilePanels>(panels,
                                      [&](auto tile_panels) { tile(tile_rows, tile_panels, r, p, out_valid_last); });
        });
      }
    }
  }
}

}  // namespace minigen
