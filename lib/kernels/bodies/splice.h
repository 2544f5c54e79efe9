
// Per pass (each t with granularity ublock; once per entry with granularity
// t) kSpliceRounds rounds; in each, input i drops kSpliceIndex[i] units,
// copies kSpliceLength[i] units to the output and drops
// kSpliceStride[i] - kSpliceLength[i] more. A unit is kSpliceUnitUblocks
// ublocks of the op's ublock shape; inputs arrive in the op's ublock order,
// the output leaves in the op's blocking.
inline void splice_drop(int operand, int ublocks) {
  for (int u = 0; u < ublocks; ++u) {
    hlk_wait_tiles(operand, kUblockTiles);
    hlk_pop_tiles(operand, kUblockTiles);
  }
}

void hlk_main() {
  configure();
  const uint32_t entries = hlk_input_count(kInputCount);
  for (uint32_t entry = 0; entry < entries; ++entry) {
    for (int pass = 0; pass < kSplicePasses; ++pass) {
      int out = 0; // output ublocks written in this pass
      for (int round = 0; round < kSpliceRounds; ++round) {
        for (int i = 0; i < kInputOperands; ++i) {
          splice_drop(i, kSpliceIndex[i] * kSpliceUnitUblocks);
          for (int u = 0; u < kSpliceLength[i] * kSpliceUnitUblocks; ++u, ++out) {
            const int ub = out % kMblockUblocks;
            hlk_wait_tiles(i, kUblockTiles);
            hlk_acquire_dst();
            for (int d = 0; d < kUblockTiles; ++d) hlk_copy_tile_to_dst(i, d, d);
            hlk_pop_tiles(i, kUblockTiles);
            pack_output_ublock<kUblockR, kUblockC, kMblockUblocks>(ub, ublock_row<kMblockR, kMblockC, kUblockOrderR>(ub),
                                                                   ublock_col<kMblockR, kMblockC, kUblockOrderR>(ub));
            hlk_release_dst();
          }
          splice_drop(i, (kSpliceStride[i] - kSpliceLength[i]) * kSpliceUnitUblocks);
        }
      }
    }
  }
}
