// LLK layer, common part: which thread this compile is for, the memory-mapped
// registers of device_contract.h, the one function that writes the
// coprocessor instruction port, the operand table and the per-thread state.
//
// Device-side only: compiled by clang for riscv32 (rv32im, freestanding, no
// FPU, no libc) by hlkc, once per thread. Nothing here uses floating point or
// 64-bit division.
#pragma once
#include <stdint.h>
#include "device/device_contract.h"

#if (defined(TESSERA_THREAD_UNPACK) + defined(TESSERA_THREAD_MATH) + defined(TESSERA_THREAD_PACK)) != 1
#error "define exactly one of TESSERA_THREAD_UNPACK, TESSERA_THREAD_MATH, TESSERA_THREAD_PACK (hlkc does)"
#endif

namespace llk {
using namespace tessera::contract;

// The thread this translation unit is compiled for. Every HLK call tests it
// with `if constexpr`, so the other threads' parts are never emitted.
#if defined(TESSERA_THREAD_UNPACK)
inline constexpr Thread kThread = kUnpackThread;
#elif defined(TESSERA_THREAD_MATH)
inline constexpr Thread kThread = kMathThread;
#else
inline constexpr Thread kThread = kPackThread;
#endif
inline constexpr bool kUnpack = kThread == kUnpackThread;
inline constexpr bool kMath = kThread == kMathThread;
inline constexpr bool kPack = kThread == kPackThread;

// Exit codes stored to kMailboxDone (0 = ok).
inline constexpr uint32_t kExitOk = 0;
inline constexpr uint32_t kExitWrongThread = 2;  // this ELF was loaded on another thread's hart

// --- Memory-mapped registers and L1 ----------------------------------------
#if defined(TESSERA_LLK_HOST_TRACE)
// Host-side test build (test/lit/hlkc/trace-*.test): the kernel runs as a
// host program and every access goes to functions the test harness defines.
}  // namespace llk
uint32_t tessera_trace_read(uint32_t address);
void tessera_trace_write(uint32_t address, uint32_t value);
const void* tessera_trace_l1(uint32_t address);
namespace llk {
inline uint32_t mmio_read(uint32_t address) { return tessera_trace_read(address); }
inline void mmio_write(uint32_t address, uint32_t value) { tessera_trace_write(address, value); }
inline const void* l1_pointer(uint32_t address) { return tessera_trace_l1(address); }
#else
inline uint32_t mmio_read(uint32_t address) { return *reinterpret_cast<volatile uint32_t*>(address); }
inline void mmio_write(uint32_t address, uint32_t value) { *reinterpret_cast<volatile uint32_t*>(address) = value; }
// L1 data the firmware wrote before the threads started (operand table,
// epoch info): constant while they run, so plain loads the compiler may reuse.
inline const void* l1_pointer(uint32_t address) { return reinterpret_cast<const void*>(address); }
#endif

// The coprocessor instruction port. EVERY coprocessor instruction is issued
// here: word 0 = opcode << 24 | fields, then its argument words (0 or 1 in
// the current instruction set), each a separate store to the same port. The
// store stalls the hart while the instruction cannot issue.
template <typename... Args>
inline void issue(uint32_t opcode, uint32_t fields, Args... args) {
  mmio_write(kCopInstrPort, encode(opcode, fields));
  (mmio_write(kCopInstrPort, static_cast<uint32_t>(args)), ...);
}

// An empty loop body the optimiser may not delete (C++ lets it assume that
// loops without side effects end).
inline void spin() { asm volatile(""); }

inline void set_config(ConfigReg reg, uint32_t value) { issue(kOpSetConfig, reg, value); }

// --- Tile counters and semaphores ------------------------------------------
inline uint32_t counter_address(int operand, uint32_t which) {
  return kTileCounterBase + static_cast<uint32_t>(operand) * kTileCounterStride + which;
}
inline uint32_t tiles_received(int operand) { return mmio_read(counter_address(operand, kTilesReceived)); }
inline uint32_t tiles_acked(int operand) { return mmio_read(counter_address(operand, kTilesAcked)); }
// Tiles in the buffer: free-running counters, so the difference is mod 2^32.
inline uint32_t tiles_present(int operand) { return tiles_received(operand) - tiles_acked(operand); }

inline void semaphore_post(Semaphore s) { mmio_write(kSemaphoreBase + s * kSemaphoreStride + kSemValue, 1); }
// The store stalls until the semaphore is > 0, then decrements it.
inline void semaphore_wait(Semaphore s) { mmio_write(kSemaphoreBase + s * kSemaphoreStride + kSemWait, 1); }

// --- Operand table and epoch info ---------------------------------------------
inline const OperandEntry& operand_entry(int operand) {
  return static_cast<const OperandEntry*>(l1_pointer(kOperandTableBase))[operand];
}
inline const EpochInfo& epoch_info() { return *static_cast<const EpochInfo*>(l1_pointer(kEpochInfoBase)); }

// (slot + offset) mod capacity for slot < capacity, without a division:
// offset is a tile count, at most a few capacities in practice.
inline uint32_t wrap_slot(uint32_t slot, uint32_t capacity) {
  while (slot >= capacity && capacity != 0) slot -= capacity;
  return slot;
}

// L1 address of slot `slot` (0 .. capacity-1) of an operand's buffer.
inline uint32_t slot_address(const OperandEntry& e, uint32_t slot) { return e.baseAddress + slot * e.tileSizeBytes; }

// Bytes per element of a row-major (untilized) tile row; block formats are
// never untilized (the netlist validator rejects them).
inline uint32_t element_bytes(uint32_t format) {
  switch (format) {
  case kFloat32: case kInt32: case kRawUInt32: return 4;
  case kFloat16: case kFloat16_b: case kUInt16: case kRawUInt16: return 2;
  default: return 1;
  }
}

// --- Tile shapes (tile_dim) ------------------------------------------------------
// net2hlks defines TESSERA_OPERAND_TILE_SHAPES (one TileShapeCode per
// operand) at the top of hlks.cpp when an operand's tiles are not 32x32;
// UNPACK and PACK carry the operand's code. Without it every code is 0
// (32x32) and the field folds away.
#if defined(TESSERA_OPERAND_TILE_SHAPES)
inline constexpr uint8_t kOperandTileShape[kOperandCount] = {TESSERA_OPERAND_TILE_SHAPES};
inline uint32_t tile_shape_fields(int operand) {
  return (static_cast<uint32_t>(kOperandTileShape[operand]) & kTileShapeMask) << kTileShapeShift;
}
inline uint32_t tile_rows(int operand) {
  switch (kOperandTileShape[operand]) {
  case kTile16x32: return 16;
  case kTile8x32: return 8;
  case kTile4x32: return 4;
  case kTile2x32: return 2;
  case kTile1x32: return 1;
  default: return 32;
  }
}
inline uint32_t tile_cols(int operand) { return kOperandTileShape[operand] == kTile32x16 ? 16u : 32u; }
#else
inline uint32_t tile_shape_fields(int) { return 0; }
inline uint32_t tile_rows(int) { return 32; }
inline uint32_t tile_cols(int) { return 32; }
#endif

// --- Per-thread state (in .bss of the thread's local memory) -----------------
// Unpack: read pointer (slot of the oldest unpopped tile) of every operand.
struct UnpackState {
  uint16_t readSlot[kOperandCount];
};
// Pack: write pointer (first unpublished slot) of every operand, tiles packed
// by hlk_pack_tile_to_stream since the last push, last untilize stride set.
struct PackState {
  uint16_t writeSlot[kOperandCount];
  uint16_t packedSincePush[kOperandCount];
  uint32_t untilizeStride;
};
// Math and pack: which dest half this thread holds and the half size.
struct DestState {
  uint32_t half;       // 0 or 1; flips at every hlk_release_dst
  uint32_t halfTiles;  // 8, or 4 with a 32-bit dest format (wormhole A0: 32 or 16)
};

inline UnpackState g_unpack;
inline PackState g_pack;
inline DestState g_dest;

// Absolute dest index of tile `dst` of the half this thread holds.
inline uint32_t dest_index(int dst) {
  return (g_dest.half != 0 ? g_dest.halfTiles : 0) + static_cast<uint32_t>(dst);
}

// net2hlks defines TESSERA_DEST_TILES16 (the dest size in 16-bit tiles) at the
// top of hlks.cpp when the arch's dest is not the contract's 16 tiles
// (wormhole A0: 64). Only then can an index need the high field bits.
#if defined(TESSERA_DEST_TILES16)
inline constexpr uint32_t kDestTiles16Arch = TESSERA_DEST_TILES16;
#else
inline constexpr uint32_t kDestTiles16Arch = kDestTiles16;
#endif

// The dest index fields of a math or PACK instruction for tile `dst`.
inline uint32_t dest_fields(int dst) {
  if constexpr (kDestTiles16Arch > kDestTiles16) return destIndexFields(dest_index(dst));
  else return dest_index(dst) & kFieldDestIndexMask;
}

} // namespace llk
