
// Input 0 and the output carry the op's blocking: per t, the ublocks of the
// mblock in ublock order, tiles row-major inside a ublock. Each ublock is
// copied to dest (transposed per tile for a transpose TM), the SFPU function
// applied, and packed.
void hlk_main() {
  configure();
  const uint32_t entries = hlk_input_count(kInputCount);
  for (uint32_t entry = 0; entry < entries; ++entry) {
    for (int t = 0; t < kT; ++t) {
      for (int ub = 0; ub < kMblockUblocks; ++ub) {
        hlk_wait_tiles(0, kUblockTiles);
        hlk_acquire_dst();
        for (int d = 0; d < kUblockTiles; ++d) {
          hlk_copy_tile_to_dst(0, d, d, kTransposeIn0);
          if constexpr (kHasSfpu) hlk_sfpu(kSfpuFunc, d, kSfpuParam);
        }
        hlk_pop_tiles(0, kUblockTiles);
        pack_output_ublock<kUblockR, kUblockC, kMblockUblocks>(ub, ublock_row<kMblockR, kMblockC, kUblockOrderR>(ub),
                                                               ublock_col<kMblockR, kMblockC, kUblockOrderR>(ub));
        hlk_release_dst();
      }
    }
  }
}
