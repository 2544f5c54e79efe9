
// Per output t, kMK blocks. Block b: input 0 brings the b-th output-shaped
// block (ublocks column by column, tiles row-major), input 1 row b of the
// output's tile columns. Output tile (row, col) accumulates in0 (row, col) x
// in1 (col) of every block; between blocks the partial sums go to the spill
// operand (intermed_df). Bias (input 2, the output's blocking, row 0 of each
// tile) is added after the last block. A gradient op without a spill
// operand adds the partial sums into its gradient block (kPartialsInPlace).
constexpr bool kPartialsInPlace = kGradientOp && !kSpill;

void hlk_main() {
  configure();
  const uint32_t entries = hlk_input_count(kInputCount);
  for (uint32_t entry = 0; entry < entries; ++entry) {
    for (int t = 0; t < kT; ++t) {
      for (int kb = 0; kb < kMK; ++kb) {
        hlk_wait_tiles(0, kIn0BlockTiles);
        hlk_wait_tiles(1, kIn1BlockTiles);
        for (int ub = 0; ub < kMblockUblocks; ++ub) {
          const int ubR = ublock_row<kMblockR, kMblockC, kUblockOrderR>(ub);
          const int ubC = ublock_col<kMblockR, kMblockC, kUblockOrderR>(ub);
          hlk_acquire_dst();
          begin_sum<kUblockTiles>(kb == 0 || kPartialsInPlace, kSpillOperand);
          for (int h = 0; h < kUblockR; ++h)
            for (int w = 0; w < kUblockC; ++w) {
              const int row = ubR * kUblockR + h, col = ubC * kUblockC + w;
              hlk_mm_tile(0, 1, tile_index<kMblockR, kMblockC, kUblockR, kUblockC, false>(row, col), col,
                          h * kUblockC + w);
            }
          if (kb == kMK - 1) {
            if constexpr (kBias) {
              hlk_wait_tiles(2, kUblockTiles);
              for (int d = 0; d < kUblockTiles; ++d) hlk_binary_tile_dest_a(kEltAdd, 2, d, d, kBcastRow);
              hlk_pop_tiles(2, kUblockTiles);
            }
            if constexpr (kSpill && kReluMode != 0) hlk_set_relu(kReluMode, kReluThreshold);
            pack_output_ublock<kUblockR, kUblockC, kMblockUblocks>(ub, ubR, ubC);
          } else if constexpr (kPartialsInPlace) {
            pack_gradient_partial<kUblockTiles, kMblockUblocks>(t, ub);
          } else {
            if constexpr (kReluMode != 0) hlk_set_relu(0, 0); // partial sums are packed without relu
            pack_tiles(kSpillOperand, kUblockTiles);
          }
          hlk_release_dst();
        }
        hlk_pop_tiles(0, kIn0BlockTiles);
        hlk_pop_tiles(1, kIn1BlockTiles);
      }
    }
  }
}
