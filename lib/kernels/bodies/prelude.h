#include "hlk_api.h"
#include "hlk_args.h"

using namespace hlk;
using namespace hlk_args;

// Helpers of the generated kernels (a named namespace: inline functions a
// kernel does not call are then dropped without a warning).
namespace hlks_local {

inline void configure() {
  hlk_set_math_fidelity(kMathFidelity);
  hlk_set_dest_format(kDestFormat);
  hlk_set_relu(kReluMode, kReluThreshold);
}

// Row and column of ublock `ub` when an MB_R x MB_C mblock is walked in ublock order.
template <int MB_R, int MB_C, bool ORDER_R> inline int ublock_row(int ub) { return ORDER_R ? ub / MB_C : ub % MB_R; }
template <int MB_R, int MB_C, bool ORDER_R> inline int ublock_col(int ub) { return ORDER_R ? ub % MB_C : ub / MB_R; }

// Position of the tile at (row, col) of a block stored as MB_R x MB_C ublocks
// of UB_R x UB_C tiles, ublocks in ublock order, tiles row-major.
template <int MB_R, int MB_C, int UB_R, int UB_C, bool ORDER_R> inline int tile_index(int row, int col) {
  const int ubR = row / UB_R, ubC = col / UB_C;
  const int ub = ORDER_R ? ubR * MB_C + ubC : ubC * MB_R + ubR;
  return ub * (UB_R * UB_C) + (row % UB_R) * UB_C + col % UB_C;
}

// Starts a sum in dest tiles 0..TILES-1: zeros for its first block, else
// the partial sums the previous block spilled to `spill`.
template <int TILES> inline void begin_sum(bool first, int spill) {
  if (first) {
    for (int d = 0; d < TILES; ++d) hlk_zero_dst(d);
    return;
  }
  hlk_wait_tiles(spill, TILES);
  for (int d = 0; d < TILES; ++d) hlk_copy_tile_to_dst(spill, d, d);
  hlk_pop_tiles(spill, TILES);
}

// Packs dest tiles 0..count-1 to the next slots of `operand` and publishes them.
inline void pack_tiles(int operand, int count) {
  hlk_wait_for_free_tiles(operand, count);
  for (int d = 0; d < count; ++d) hlk_pack_tile_to_stream(d, operand);
  hlk_push_tiles(operand, count);
}

// gradient_op: the block slot the next output tile is added into (one
// counter for every caller: fused sub-ops may pack with other ublock shapes).
inline int gradient_next = 0;

// gradient_op without a spill operand (net2hlks drops it): a partial sum,
// an m_k block or accumulated slice before the last, is added into the
// gradient block in place (pack l1 accumulate), into the slots of the
// ub-th ublock of output t slice `t`; the last block then adds its part
// through pack_output_ublock, so each input adds its whole sum.
template <int TILES, int UBLOCKS> inline void pack_gradient_partial(int t, int ub) {
  const int slot = (t * UBLOCKS + ub) * TILES;
  for (int d = 0; d < TILES; ++d) hlk_pack_tile_to_stream_at(d, kOutputOperand, slot + d, true);
}

// Packs dest tiles 0..UB_R*UB_C-1: the output ublock at (ubR, ubC), the
// ub-th of the UBLOCKS ublocks of one t. Tiled outputs are published ublock
// by ublock. An untilized block is written in stripes of
// kUntilizeStripeUblocks ublocks (a row of ublocks in ublock order r, else
// the whole block), each one row-major region from the write pointer on:
// its free space is awaited before its first ublock, every ublock is
// written at its place, and the stripe is published after its last one.
template <int UB_R, int UB_C, int UBLOCKS> inline void pack_output_ublock(int ub, int ubR, int ubC) {
  if constexpr (kGradientOp) {
    // The output operand is one fixed block the firmware loaded from the ram
    // cell: output tiles arrive in block order, so the n-th tile of every
    // input is added (pack l1 accumulate) into slot n. Nothing is pushed:
    // the buffer never drains, the firmware stores it after the kernel.
    (void)ub;
    (void)ubR;
    (void)ubC;
    for (int d = 0; d < UB_R * UB_C; ++d) hlk_pack_tile_to_stream_at(d, kOutputOperand, gradient_next + d, true);
    gradient_next += UB_R * UB_C;
    if (gradient_next >= kGradientTiles) gradient_next = 0;
  } else if constexpr (kUntilizeOutput) {
    constexpr int kStripe = kUntilizeStripeUblocks;
    constexpr int kStripeTiles = kStripe * UB_R * UB_C;
    const int rowInStripe = kStripe == UBLOCKS ? ubR : 0;
    if (ub % kStripe == 0) hlk_wait_for_free_tiles(kOutputOperand, kStripeTiles);
    for (int d = 0; d < UB_R * UB_C; ++d)
      hlk_pack_tile_untilized(d, kOutputOperand, rowInStripe * UB_R + d / UB_C, ubC * UB_C + d % UB_C);
    if (ub % kStripe == kStripe - 1) hlk_push_tiles(kOutputOperand, kStripeTiles);
  } else {
    (void)ub;
    (void)ubR;
    (void)ubC;
    pack_tiles(kOutputOperand, UB_R * UB_C);
  }
}

} // namespace hlks_local
using namespace hlks_local;
