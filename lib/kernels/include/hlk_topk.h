// topk on the coprocessor: the TOPK instruction (docs/device-model.md) and
// the schedule of BUDA's sort network over one core's rows, as the generated
// topk kernel runs it (docs/net2hlks.md, "topk"). Include after hlk_api.h.
//
// Per tile row the core holds n = 32 * TILES values in every row. The
// network (lib/golden special_ops, topkNetwork) is run in passes over two
// scratch intermediates, VALUES (operand 24) and INDICES (operand 25), each
// TILES tiles with capacity exactly TILES, rewritten in place:
//   1. sort pass: input windows of W tiles (2, or 1 when the row is one
//      tile) are sorted into k-runs (kreduce: each k-run re-merged) and
//      written to the intermediates;
//   2. one pass per merge level (two for k = 64 when the runs are in
//      different windows): the surviving k-runs are compared pairwise and
//      bitonic-merged;
//   3. the first ceil(k/32) tiles of VALUES (sort max) or INDICES (argmax)
//      are packed to the output with the positions >= k zeroed.
// Between passes the unpack thread pops all TILES tiles and the pack thread
// waits until they are free, then republishes them: a barrier that makes a
// pass's writes visible to the next pass's reads. Within a pass no tile is
// read after it was written, so writing in place is safe.
#pragma once

namespace hlk {

// dest[dst..dst+3] = values, values, indices, indices (the second of each
// only with twoTiles). `position` places the window for the directions:
// a run at window position b sorts descending when (position + b) / stride
// (sort: / run length) is even.
inline void hlk_topk(TopkStep step, int dst, bool twoTiles, uint32_t position, uint32_t logA, uint32_t logB) {
  if constexpr (llk::kMath)
    llk::issue(kOpTopk,
               llk::dest_fields(dst) | (static_cast<uint32_t>(step) << kTopkStepShift) |
                   (twoTiles ? kTopkTwoTiles : 0u),
               (position & 0xFFFFu) | (logA << kTopkLogAShift) | (logB << kTopkLogBShift));
}

} // namespace hlk

namespace topk_kernel {
using namespace hlk;

constexpr int kValues = 24, kIndices = 25;

constexpr uint32_t log2_of(uint32_t v) {
  uint32_t n = 0;
  while ((1u << n) < v) ++n;
  return n;
}

// Loads tiles a (and b) of both intermediates into dest 0 (1) and 2 (3).
inline void load_pair(int a, int b, bool two) {
  hlk_copy_tile_to_dst(kValues, a, 0);
  if (two) hlk_copy_tile_to_dst(kValues, b, 1);
  hlk_copy_tile_to_dst(kIndices, a, 2);
  if (two) hlk_copy_tile_to_dst(kIndices, b, 3);
}

// Packs dest 0 (and 1) and 2 (3) back to tiles a (and b) of the intermediates.
inline void store_pair(int a, int b, bool two) {
  hlk_pack_tile_to_stream_at(0, kValues, a);
  if (two) hlk_pack_tile_to_stream_at(1, kValues, b);
  hlk_pack_tile_to_stream_at(2, kIndices, a);
  if (two) hlk_pack_tile_to_stream_at(3, kIndices, b);
}

// The barrier between passes (see the file comment).
template <int TILES> inline void end_pass() {
  hlk_pop_tiles(kValues, TILES);
  hlk_pop_tiles(kIndices, TILES);
  hlk_wait_for_free_tiles(kValues, TILES);
  hlk_wait_for_free_tiles(kIndices, TILES);
  hlk_push_tiles(kValues, TILES);
  hlk_push_tiles(kIndices, TILES);
}

// One tile row: TILES tiles of input 0 (values) and input 1 (indices), then
// OUT_TILES output tiles packed to `output`.
template <int K, int TILES, bool KREDUCE, bool VALUES_OUT, int OUT_TILES> inline void topk_row(int output) {
  constexpr int W = TILES >= 2 ? 2 : 1;  // window tiles
  constexpr bool kTwo = W == 2;
  constexpr uint32_t kWidth = 32u * W;
  constexpr uint32_t kLogK = log2_of(K);
  constexpr uint32_t kN = 32u * TILES;

  // 1. sort pass, from the inputs into the (empty) intermediates.
  hlk_wait_for_free_tiles(kValues, TILES);
  hlk_wait_for_free_tiles(kIndices, TILES);
  for (int w = 0; w < TILES / W; ++w) {
    hlk_acquire_dst();
    hlk_wait_tiles(0, W);
    hlk_wait_tiles(1, W);
    for (int i = 0; i < W; ++i) hlk_copy_tile_to_dst(0, i, i);
    for (int i = 0; i < W; ++i) hlk_copy_tile_to_dst(1, i, 2 + i);
    hlk_pop_tiles(0, W);
    hlk_pop_tiles(1, W);
    const uint32_t position = static_cast<uint32_t>(w) * kWidth;
    if constexpr (!KREDUCE && K >= 2) hlk_topk(kTopkSort, 0, kTwo, position, kLogK, 0);
    if constexpr (KREDUCE && K > 16) hlk_topk(kTopkMerge, 0, kTwo, position, kLogK, kLogK);
    store_pair(W * w, W * w + 1, kTwo);
    hlk_release_dst();
  }
  hlk_push_tiles(kValues, TILES);
  hlk_push_tiles(kIndices, TILES);

  // 2. merge levels: runs at i * 2 * dist keep the larger values of the run
  // dist later, then each survivor is bitonic-merged.
  uint32_t dist = K;
  for (uint32_t seqs = kN / K; seqs > 1; seqs /= 2, dist *= 2) {
    hlk_wait_tiles(kValues, TILES);
    hlk_wait_tiles(kIndices, TILES);
    const uint32_t logDist = log2_of(dist);
    if (2 * dist <= kWidth) {
      // Pairs inside one window.
      for (int w = 0; w < TILES / W; ++w) {
        hlk_acquire_dst();
        load_pair(W * w, W * w + 1, kTwo);
        hlk_topk(kTopkCompare, 0, kTwo, 0, kLogK, logDist);
        if constexpr (K >= 2) hlk_topk(kTopkMerge, 0, kTwo, static_cast<uint32_t>(w) * kWidth, kLogK, logDist + 1);
        store_pair(W * w, W * w + 1, kTwo);
        hlk_release_dst();
      }
    } else {
      // The runs start at tiles lt and lt + dist/32. Window (left tile,
      // right tile): the left one keeps the larger values. For k <= 32 the
      // survivor is merged in the same window; for k = 64 it spans two
      // tiles and is merged in a second pass.
      const int pairs = static_cast<int>(seqs / 2);
      for (int i = 0; i < pairs; ++i) {
        const int lt = static_cast<int>(static_cast<uint32_t>(i) * 2 * dist / 32);
        const int rt = lt + static_cast<int>(dist / 32);
        for (int h = 0; h < (K + 31) / 32; ++h) {
          hlk_acquire_dst();
          load_pair(lt + h, rt + h, true);
          hlk_topk(kTopkCompare, 0, true, 0, K < 32 ? kLogK : 5, 5);
          if constexpr (K >= 2 && K <= 32) hlk_topk(kTopkMerge, 0, true, static_cast<uint32_t>(i) * 64, kLogK, 6);
          store_pair(lt + h, rt + h, false);
          hlk_release_dst();
        }
      }
      if constexpr (K == 64) {
        end_pass<TILES>();
        hlk_wait_tiles(kValues, TILES);
        hlk_wait_tiles(kIndices, TILES);
        for (int i = 0; i < pairs; ++i) {
          const int lt = static_cast<int>(static_cast<uint32_t>(i) * 2 * dist / 32);
          hlk_acquire_dst();
          load_pair(lt, lt + 1, true);
          hlk_topk(kTopkMerge, 0, true, static_cast<uint32_t>(i) * 64, kLogK, 6);
          store_pair(lt, lt + 1, true);
          hlk_release_dst();
        }
      }
    }
    end_pass<TILES>();
  }

  // 3. the first k positions of the surviving run.
  hlk_wait_tiles(kValues, TILES);
  hlk_wait_tiles(kIndices, TILES);
  hlk_acquire_dst();
  for (int i = 0; i < OUT_TILES; ++i) hlk_copy_tile_to_dst(VALUES_OUT ? kValues : kIndices, i, i);
  if constexpr (K < 32) hlk_topk(kTopkZeroTail, 0, false, 0, kLogK, 0);
  hlk_wait_for_free_tiles(output, OUT_TILES);
  for (int i = 0; i < OUT_TILES; ++i) hlk_pack_tile_to_stream(i, output);
  hlk_push_tiles(output, OUT_TILES);
  hlk_release_dst();
  hlk_pop_tiles(kValues, TILES);
  hlk_pop_tiles(kIndices, TILES);
}

} // namespace topk_kernel
