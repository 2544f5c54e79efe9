
// Per output t, kAccumulateZ input t slices of kMK blocks each. Per block:
//   input 0: kMblockR ublocks of [kUblockR x kUKt] tiles (the block's column
//            of the in0 mblock), one after the other, tiles row-major;
//   input 1: kMblockC ublocks of [kUKt x kUblockC] tiles (the block's row of
//            the in1 mblock), one after the other, tiles row-major.
// Output ublocks are computed in the op's ublock order; between blocks their
// partial sums go to the spill operand (intermed_df) and come back in the
// same order (a gradient op without a spill operand adds them into its
// gradient block instead: kPartialsInPlace). Each input-0 tile is unpacked once per ublock row and kept in
// srcB for the row's kUblockC products. Bias (input 2, the output's blocking) and sfpu_op are applied
// after the last block; the output leaves in the op's blocking.
constexpr bool kPartialsInPlace = kGradientOp && !kSpill;

void hlk_main() {
  configure();
  const uint32_t entries = hlk_input_count(kInputCount);
  for (uint32_t entry = 0; entry < entries; ++entry) {
    for (int t = 0; t < kT; ++t) {
      for (int z = 0; z < kAccumulateZ; ++z) {
        for (int kb = 0; kb < kMK; ++kb) {
          const bool first = z == 0 && kb == 0;
          const bool last = z == kAccumulateZ - 1 && kb == kMK - 1;
          hlk_wait_tiles(0, kIn0BlockTiles);
          hlk_wait_tiles(1, kIn1BlockTiles);
          for (int ub = 0; ub < kMblockUblocks; ++ub) {
            const int ubR = ublock_row<kMblockR, kMblockC, kUblockOrderR>(ub);
            const int ubC = ublock_col<kMblockR, kMblockC, kUblockOrderR>(ub);
            hlk_acquire_dst();
            begin_sum<kUblockTiles>(first || kPartialsInPlace, kSpillOperand);
            for (int k = 0; k < kUKt; ++k)
              for (int h = 0; h < kUblockR; ++h)
                for (int w = 0; w < kUblockC; ++w)
                  hlk_mm_tile(0, 1, (ubR * kUblockR + h) * kUKt + k, (ubC * kUKt + k) * kUblockC + w,
                              h * kUblockC + w, kTransposeIn1, w == 0, w + 1 < kUblockC);
            if (last) {
              if constexpr (kBias) {
                hlk_wait_tiles(2, kUblockTiles);
                for (int d = 0; d < kUblockTiles; ++d) hlk_binary_tile_dest_a(kEltAdd, 2, d, d, kBiasBroadcast);
                hlk_pop_tiles(2, kUblockTiles);
              }
              if constexpr (kQuant != 0) {
                hlk_wait_tiles(kScaleOperand, kUblockTiles);
                for (int d = 0; d < kUblockTiles; ++d) {
                  if constexpr (kQuant == 2) hlk_sfpu(kSfpuAddScalar, d, kZeroPoint);
                  hlk_binary_tile_dest_a(kEltMul, kScaleOperand, d, d);
                  if constexpr (kQuant == 1) hlk_sfpu(kSfpuQuantInt8, d, kZeroPoint);
                }
                hlk_pop_tiles(kScaleOperand, kUblockTiles);
              }
              if constexpr (kHasSfpu)
                for (int d = 0; d < kUblockTiles; ++d) hlk_sfpu(kSfpuFunc, d, kSfpuParam);
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
}
