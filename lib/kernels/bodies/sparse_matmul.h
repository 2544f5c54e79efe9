
#include "hlk_sparse.h"

// Sparse matmul (docs/net2hlks.md "Sparse matmul"). Per entry:
//   input 0: kSparseTiles tiles, waited whole; tile k is sparse tile k;
//   input 1: kStrips activation strips, each kMblockC ublocks of
//            [kUKt x kUblockC] tiles (tiles row-major), waited one strip at
//            a time and popped once the encoding has moved past them;
//   input 2: kIndexTiles encoding tiles, read in L1 by all three threads
//            (hlk_sparse.h), unread ones popped at the end.
// Each strip of the encoding updates every output ublock of the current
// output t in ublock order: zero dest (first strip of the t) or reload the
// partial sums from the spill operand, one MATMUL per tile entry of the
// ublock's row and ublock column, then pack to the output (last strip of
// the t) or to the spill operand.
namespace hlks_local {

constexpr uint32_t kTileIndexMask = (1u << kTileIndexBits) - 1u;
constexpr uint32_t kUblockIdxMask = (1u << kUblockIdxBits) - 1u;
constexpr uint32_t kInnerDMask = (1u << kInnerDBits) - 1u;
constexpr uint32_t kNoUblock = 0xFFFFFFFFu;
constexpr int kSparseOperand = 0, kActOperand = 1, kEncodingOperand = 2;

// Tiles of a non-zero ublock: its header's count, 0 meaning 2^(16 - bits).
inline uint32_t ublock_tiles(uint32_t header) {
  const uint32_t count = header >> kUblockIdxBits;
  return count != 0 ? count : 1u << (16 - kUblockIdxBits);
}

// The tile entries of one non-zero ublock from field `at`, read as the
// reference reads them: positions (row, inner d) in order, an entry taken
// when its position is the current one, at most `tiles` entries. Calls
// f(sparse tile, row, inner d) per entry; returns the field after the last.
template <typename F> inline uint32_t walk_entries(const SparseEncoding& enc, uint32_t at, uint32_t tiles, F&& f) {
  uint32_t taken = 0;
  for (uint32_t r = 0; r < static_cast<uint32_t>(kUblockR); ++r)
    for (uint32_t d = 0; d < static_cast<uint32_t>(kUKt); ++d) {
      if (taken == tiles) return at;
      const uint32_t entry = hlk_sparse_half(enc, at);
      const uint32_t local = entry & kTileIndexMask;
      if ((local >> kInnerDBits) * kUKt + (local & kInnerDMask) != r * kUKt + d) continue;
      ++at;
      ++taken;
      f(entry >> kTileIndexBits, r, d);
    }
  return at;
}

// Field (from the strip's first ublock header) where each ublock row's
// entries start in the current strip, or kNoUblock for a zero row.
inline uint32_t g_row_start[kMblockR];

} // namespace hlks_local

void hlk_main() {
  configure();
  constexpr bool kWalk = !llk::kPack; // pack only needs where each output t ends
  SparseEncoding enc{0, 0, 0};
  const uint32_t entries = hlk_input_count(kInputCount);
  for (uint32_t entry = 0; entry < entries; ++entry) {
    hlk_wait_tiles(kSparseOperand, kSparseTiles);
    hlk_wait_tiles(kActOperand, kIn1BlockTiles);
    uint32_t strip = 0;  // the activation strip at the front of input 1
    int used = 0;        // encoding tiles of this entry taken
    bool open = false;   // an encoding tile is held
    uint32_t at = 0;     // field of the current strip in that tile
    bool first = true;   // the strip starts an output t
    for (int t = 0; t < kT;) {
      if (!open) {
        if (used == kIndexTiles) break; // the encoding ends early (malformed)
        hlk_sparse_wait_encoding(kEncodingOperand, enc);
        open = true;
        at = 0;
      }
      const uint32_t enc0 = hlk_sparse_half(enc, at), enc1 = hlk_sparse_half(enc, at + 1);
      const uint32_t nz = hlk_sparse_half(enc, at + 2);
      const uint32_t index = ((enc1 << 16) | enc0) & 0x3FFFFFFFu;
      const bool last = (enc1 & 0x4000u) != 0, lastInTile = (enc1 & 0x8000u) != 0;
      const uint32_t base = at + 3;
      // Strips before this one are not read again.
      while (strip < index && strip + 1 < static_cast<uint32_t>(kStrips)) {
        hlk_pop_tiles(kActOperand, kIn1BlockTiles);
        hlk_wait_tiles(kActOperand, kIn1BlockTiles);
        ++strip;
      }
      if constexpr (kWalk) {
        uint32_t cur = 0, seen = 0;
        for (int R = 0; R < kMblockR; ++R) {
          g_row_start[R] = kNoUblock;
          if (seen >= nz) continue;
          const uint32_t header = hlk_sparse_half(enc, base + cur);
          if ((header & kUblockIdxMask) != static_cast<uint32_t>(R)) continue;
          ++seen;
          g_row_start[R] = cur;
          cur = walk_entries(enc, base + cur + 1, ublock_tiles(header), [](uint32_t, uint32_t, uint32_t) {}) - base;
        }
      }
      for (int ub = 0; ub < kMblockUblocks; ++ub) {
        const int ubR = ublock_row<kMblockR, kMblockC, kUblockOrderR>(ub);
        const int ubC = ublock_col<kMblockR, kMblockC, kUblockOrderR>(ub);
        hlk_acquire_dst();
        begin_sum<kUblockTiles>(first, kSpillOperand);
        if constexpr (kWalk) {
          const uint32_t start = g_row_start[ubR];
          if (start != kNoUblock)
            walk_entries(enc, base + start + 1, ublock_tiles(hlk_sparse_half(enc, base + start)),
                         [ubC](uint32_t sparse, uint32_t r, uint32_t d) {
                           for (int w = 0; w < kUblockC; ++w)
                             hlk_mm_tile(kSparseOperand, kActOperand, static_cast<int>(sparse),
                                         (ubC * kUKt + static_cast<int>(d)) * kUblockC + w,
                                         static_cast<int>(r) * kUblockC + w, kTransposeIn1);
                         });
        }
        if (last) {
          if constexpr (kReluMode != 0) hlk_set_relu(kReluMode, kReluThreshold);
          pack_output_ublock<kUblockR, kUblockC, kMblockUblocks>(ub, ubR, ubC);
        } else {
          if constexpr (kReluMode != 0) hlk_set_relu(0, 0); // partial sums are packed without relu
          pack_tiles(kSpillOperand, kUblockTiles);
        }
        hlk_release_dst();
      }
      if (lastInTile) {
        hlk_sparse_release_encoding(kEncodingOperand, enc);
        ++used;
        open = false;
      } else {
        uint32_t next = base;
        for (uint32_t u = 0; u < nz; ++u) next += ublock_tiles(hlk_sparse_half(enc, next)) + 1;
        at = next;
      }
      first = last;
      if (last) ++t;
    }
    if (open) {
      hlk_sparse_release_encoding(kEncodingOperand, enc);
      ++used;
    }
    hlk_sparse_skip_encoding(kEncodingOperand, enc, kIndexTiles - used);
    hlk_pop_tiles(kActOperand, kIn1BlockTiles);
    for (uint32_t s = strip + 1; s < static_cast<uint32_t>(kStrips); ++s) {
      hlk_wait_tiles(kActOperand, kIn1BlockTiles);
      hlk_pop_tiles(kActOperand, kIn1BlockTiles);
    }
    hlk_pop_tiles(kSparseOperand, kSparseTiles);
  }
}
