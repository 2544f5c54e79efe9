
// dim r: per output ublock column, input 0 brings kMK ublocks of
//        [kUKt x kUblockC] tiles going down the column (tiles row-major);
// dim c: per output ublock row, kMK ublocks of [kUblockR x kUKt] tiles going
//        along the row. Both accumulate in dest and pack one output ublock.
// dim z: input 0 has the output's blocking and kReduceZ t slices per output
//        t; partial results go through the spill operand between slices.
void hlk_main() {
  configure();
  const uint32_t entries = hlk_input_count(kInputCount);
  for (uint32_t entry = 0; entry < entries; ++entry) {
    for (int t = 0; t < kT; ++t) {
      if constexpr (kReduceOverZ) {
        for (int z = 0; z < kReduceZ; ++z) {
          for (int ub = 0; ub < kMblockUblocks; ++ub) {
            hlk_wait_tiles(0, kUblockTiles);
            if (z > 0) hlk_wait_tiles(kSpillOperand, kUblockTiles);
            hlk_acquire_dst();
            for (int d = 0; d < kUblockTiles; ++d) {
              if (z == 0)
                hlk_copy_tile_to_dst(0, d, d);
              else
                hlk_binary_tile(kReduceZOp, kSpillOperand, 0, d, d, d);
            }
            hlk_pop_tiles(0, kUblockTiles);
            if (z > 0) hlk_pop_tiles(kSpillOperand, kUblockTiles);
            if (z == kReduceZ - 1) {
              if constexpr (kSpill && kReluMode != 0) hlk_set_relu(kReluMode, kReluThreshold);
              pack_output_ublock<kUblockR, kUblockC, kMblockUblocks>(ub, ublock_row<kMblockR, kMblockC, kUblockOrderR>(ub),
                                                                     ublock_col<kMblockR, kMblockC, kUblockOrderR>(ub));
            } else {
              if constexpr (kReluMode != 0) hlk_set_relu(0, 0); // partial results are packed without relu
              pack_tiles(kSpillOperand, kUblockTiles);
            }
            hlk_release_dst();
          }
        }
      } else {
        constexpr bool kOverCols = kReduceDim == kReduceCols;
        for (int ub = 0; ub < kMblockUblocks; ++ub) {
          hlk_acquire_dst();
          for (int kb = 0; kb < kMK; ++kb) {
            hlk_wait_tiles(0, kInUblockTiles);
            for (int i = 0; i < kInUblockTiles; ++i) {
              const int d = kOverCols ? i / kUKt : i % kUblockC; // the output tile it reduces into
              const int k = kOverCols ? i % kUKt : i / kUblockC; // its place along the reduced dimension
              hlk_reduce_tile(kReduceType, kReduceDim, 0, i, d, kReduceScale, kb != 0 || k != 0);
            }
            hlk_pop_tiles(0, kInUblockTiles);
          }
          pack_output_ublock<kUblockR, kUblockC, kMblockUblocks>(ub, ublock_row<kMblockR, kMblockC, kUblockOrderR>(ub),
                                                                 ublock_col<kMblockR, kMblockC, kUblockOrderR>(ub));
          hlk_release_dst();
        }
      }
    }
  }
}
