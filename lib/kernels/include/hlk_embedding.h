// embedding on the coprocessor: a row gather by index words read at run time
// (docs/net2hlks.md "embedding"). Include after hlk_api.h.
//
// Input 0 (the table: every tile row of it, the core's share of the
// columns) stays resident for the entry; input 1 holds the core row's index
// words, which all three threads read from L1 (hlk_sparse.h's protocol:
// unpack pops the tile once math and pack are done with it) so they agree
// on which rows are copied. Output tile (r, c) row j is table row
// index[32 r + j] (of tile column c): the table tile holding that row is
// unpacked to srcA and ROWCOPY moves the row into dest. Positions past
// num_indices and the padding index 0xffffffff leave a zero row, as does an
// index past the table (the reference model refuses those).
#pragma once
#include "hlk_sparse.h"

namespace hlk {

// dest[dst] row dstRow = row srcRow of `operand`'s tile `tile`.
inline void hlk_copy_row_to_dst(int operand, int tile, uint32_t srcRow, int dst, uint32_t dstRow) {
  if constexpr (llk::kUnpack) llk::unpack_tile(operand, tile, false, 0u);
  if constexpr (llk::kMath)
    llk::issue(kOpRowCopy, llk::dest_fields(dst) | ((srcRow & 0x1Fu) << kRowCopySrcShift) |
                               ((dstRow & 0x1Fu) << kRowCopyDstShift));
}

} // namespace hlk

namespace embedding_kernel {
using namespace hlk;

// Word `i` of the index tile.
inline uint32_t index_word(const SparseEncoding& e, uint32_t i) {
  return hlk_sparse_half(e, 2 * i) | (hlk_sparse_half(e, 2 * i + 1) << 16);
}

// One entry: TABLE_ROWS tile rows of TABLE_COLS tile columns in input 0
// (row-major), the output block MB_R x MB_C ublocks of 1 x UB_C tiles.
template <int TABLE_ROWS, int TABLE_COLS, int NUM_INDICES, int MB_R, int MB_C, int UB_C, bool ORDER_R>
inline void embedding_entry(SparseEncoding& idx) {
  constexpr int kTableTiles = TABLE_ROWS * TABLE_COLS;
  hlk_wait_tiles(0, kTableTiles);
  hlk_sparse_wait_encoding(1, idx);
  for (int t = 0; t < kT; ++t)
    for (int ub = 0; ub < MB_R * MB_C; ++ub) {
      const int ubR = ORDER_R ? ub / MB_C : ub % MB_R;
      const int ubC = ORDER_R ? ub % MB_C : ub / MB_R;
      hlk_acquire_dst();
      for (int w = 0; w < UB_C; ++w) {
        const int col = ubC * UB_C + w;
        hlk_zero_dst(w);
        for (uint32_t j = 0; j < 32; ++j) {
          const uint32_t pos = static_cast<uint32_t>(ubR) * 32u + j;
          if (pos >= static_cast<uint32_t>(NUM_INDICES)) break;
          const uint32_t row = index_word(idx, pos);
          if (row >= static_cast<uint32_t>(TABLE_ROWS) * 32u) continue; // padding (0xffffffff) or past the table
          hlk_copy_row_to_dst(0, static_cast<int>(row / 32u) * TABLE_COLS + col, row % 32u, w, j);
        }
      }
      pack_output_ublock<1, UB_C, MB_R * MB_C>(ub, ubR, ubC);
      hlk_release_dst();
    }
  hlk_sparse_release_encoding(1, idx);
  hlk_pop_tiles(0, kTableTiles);
}

} // namespace embedding_kernel
