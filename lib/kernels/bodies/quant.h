
// Inputs 0 (value) and 1 (scale) and the output carry the op's blocking.
// quantization/requantization: dest = x * scale, then + zero_point (rounded
// to Int8 in dest for an Int8 output); dequantization: dest = x, then
// + (-zero_point), then * scale. Float32 dest, HiFi4: plain float32 math.
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
          if constexpr (kDequant) {
            hlk_copy_tile_to_dst(0, d, d);
            hlk_sfpu(kSfpuAddScalar, d, kZeroPoint);
            hlk_binary_tile_dest_a(kEltMul, 1, d, d);
          } else {
            hlk_binary_tile(kEltMul, 0, 1, d, d, d);
            hlk_sfpu(kRoundInt8 ? kSfpuQuantInt8 : kSfpuAddScalar, d, kZeroPoint);
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
