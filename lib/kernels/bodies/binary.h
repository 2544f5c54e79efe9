
// Inputs 0 and 1 and the output carry the op's blocking: per t, the ublocks
// of the mblock in ublock order, tiles row-major inside a ublock.
void hlk_main() {
  configure();
  const uint32_t entries = hlk_input_count(kInputCount);
  for (uint32_t entry = 0; entry < entries; ++entry) {
    for (int t = 0; t < kT; ++t) {
      for (int ub = 0; ub < kMblockUblocks; ++ub) {
        hlk_wait_tiles(0, kUblockTiles);
        hlk_wait_tiles(1, kUblockTiles);
        hlk_acquire_dst();
        for (int d = 0; d < kUblockTiles; ++d) {
          if constexpr (kTransposeIn0) {
            // The unpacker transposes only on a copy: input 0 goes to dest first.
            hlk_copy_tile_to_dst(0, d, d, true);
            hlk_binary_tile_dest_a(kEltwiseOp, 1, d, d, kBcastIn1);
          } else {
            hlk_binary_tile(kEltwiseOp, 0, 1, d, d, d, kBcastIn1);
          }
        }
        hlk_pop_tiles(0, kUblockTiles);
        hlk_pop_tiles(1, kUblockTiles);
        pack_output_ublock<kUblockR, kUblockC, kMblockUblocks>(ub, ublock_row<kMblockR, kMblockC, kUblockOrderR>(ub),
                                                               ublock_col<kMblockR, kMblockC, kUblockOrderR>(ub));
        hlk_release_dst();
      }
    }
  }
}
