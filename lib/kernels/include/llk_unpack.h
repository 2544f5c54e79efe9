// LLK layer, unpack thread (TRISC0): waits for input tiles, issues UNPACK
// with the tile's L1 address, pops tiles. Compiled only into unpack.elf
// (hlk_impl.h calls it under `if constexpr (llk::kUnpack)`).
#pragma once
#include "llk_common.h"

namespace llk {

// Spins until `count` tiles are present in operand's buffer.
inline void unpack_wait_tiles(int operand, uint32_t count) {
  while (tiles_present(operand) < count) {
  }
}

// Releases the oldest `count` tiles: the ACKED counter adds `count`, and the
// read pointer advances modulo the capacity.
inline void unpack_pop_tiles(int operand, uint32_t count) {
  mmio_write(counter_address(operand, kTilesAcked), count);
  const OperandEntry& e = operand_entry(operand);
  g_unpack.readSlot[operand] = static_cast<uint16_t>(wrap_slot(g_unpack.readSlot[operand] + count, e.capacityTiles));
}

// L1 address of tile `tile` counted from the read pointer (0 = oldest).
inline uint32_t unpack_tile_address(int operand, int tile) {
  const OperandEntry& e = operand_entry(operand);
  return slot_address(e, wrap_slot(g_unpack.readSlot[operand] + static_cast<uint32_t>(tile), e.capacityTiles));
}

// UNPACK tile `tile` of `operand` into srcA (toSrcB false) or srcB.
// `fields` adds transpose / broadcast bits.
inline void unpack_tile(int operand, int tile, bool toSrcB, uint32_t fields) {
  const OperandEntry& e = operand_entry(operand);
  uint32_t f = fields | (toSrcB ? kUnpackToSrcB : 0u) | ((e.dataFormat & kFormatMask) << kFormatShift) |
               tile_shape_fields(operand);
  issue(kOpUnpack, f, unpack_tile_address(operand, tile));
}

inline uint32_t broadcast_fields(Broadcast b) { return (static_cast<uint32_t>(b) & 3u) << kUnpackBcastShift; }

} // namespace llk
