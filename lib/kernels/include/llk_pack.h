// LLK layer, pack thread (TRISC2): waits for free output slots, packs dest
// tiles to L1 at write pointer + slot, pushes tiles, and the dest half
// handshake with math. Compiled only into pack.elf.
#pragma once
#include "llk_common.h"

namespace llk {

// Spins until `count` slots are free: capacity - (received - acked) >= count.
inline void pack_wait_free(int operand, uint32_t count) {
  uint32_t capacity = operand_entry(operand).capacityTiles;
  while (capacity - tiles_present(operand) < count) {
  }
}

// Publishes `count` tiles: RECEIVED adds `count`, the write pointer advances
// modulo the capacity, and as many implicit slots are consumed.
inline void pack_push_tiles(int operand, uint32_t count) {
  mmio_write(counter_address(operand, kTilesReceived), count);
  const OperandEntry& e = operand_entry(operand);
  g_pack.writeSlot[operand] = static_cast<uint16_t>(wrap_slot(g_pack.writeSlot[operand] + count, e.capacityTiles));
  uint32_t packed = g_pack.packedSincePush[operand];
  g_pack.packedSincePush[operand] = static_cast<uint16_t>(packed > count ? packed - count : 0u);
}

// Waits for a filled dest half (semaphore MathPack).
inline void pack_acquire_dst() { semaphore_wait(kSemMathPack); }
// Gives the half back to math (post PackMath); the next acquire gets the other half.
inline void pack_release_dst() {
  semaphore_post(kSemPackMath);
  g_dest.half ^= 1u;
}

inline uint32_t pack_fields(int dst, int operand, const OperandEntry& e) {
  return dest_fields(dst) | ((e.dataFormat & kFormatMask) << kFormatShift) |
         tile_shape_fields(operand);
}

// PACK dest[dst] into slot `slot` counted from the write pointer.
inline void pack_tile_at(int dst, int operand, uint32_t slot, bool l1Accumulate) {
  const OperandEntry& e = operand_entry(operand);
  uint32_t address = slot_address(e, wrap_slot(g_pack.writeSlot[operand] + slot, e.capacityTiles));
  issue(kOpPack, pack_fields(dst, operand, e) | (l1Accumulate ? kPackL1Accumulate : 0u), address);
}

// PACK dest[dst] into the next implicit slot (write pointer + tiles packed
// since the last push).
inline void pack_tile_next(int dst, int operand) {
  uint32_t slot = g_pack.packedSincePush[operand];
  pack_tile_at(dst, operand, slot, false);
  g_pack.packedSincePush[operand] = static_cast<uint16_t>(slot + 1);
}

// PACK with untilize: 32 rows of dest[dst] at
//   base + writeSlot * tileSizeBytes            (start of the current block)
//        + tileRow * 32 * rowStrideBytes        (row block)
//        + tileCol * 32 * elementBytes(format)  (tile column)
// with row r at + r * rowStrideBytes (SETCONFIG UntilizeStride, set when it
// changes).
inline void pack_tile_untilized(int dst, int operand, uint32_t tileRow, uint32_t tileCol) {
  const OperandEntry& e = operand_entry(operand);
  uint32_t stride = e.rowStrideBytes;
  if (stride != g_pack.untilizeStride) {
    set_config(kCfgUntilizeStride, stride);
    g_pack.untilizeStride = stride;
  }
  uint32_t address = slot_address(e, g_pack.writeSlot[operand]) + tileRow * tile_rows(operand) * stride +
                     tileCol * tile_cols(operand) * element_bytes(e.dataFormat);
  issue(kOpPack, pack_fields(dst, operand, e) | kPackUntilize, address);
}

} // namespace llk
