// Sparse matmul support: reading the strip encoding (a RawUInt32 input,
// docs/golden-special-ops.md "sparse matmul") straight from its L1 buffer on
// all three threads. Include after hlk_api.h.
//
// Every thread walks the same encoding to keep the same control flow (how
// many MATMULs go into a dest half, which ublocks leave as output). Only the
// unpack thread pops, and it pops an encoding tile only once math and pack
// have finished reading it: each of them posts its own semaphore per tile,
// and unpack takes both before the pop. Math and pack never wait for unpack
// here, so the order cannot deadlock (unpack has issued every UNPACK of a
// tile before it waits).
#pragma once
#include "hlk_api.h"

namespace hlk {

// Semaphores 2 and 3 (start at 0): one post per encoding tile math / pack
// has finished with.
inline constexpr Semaphore kSemSparseMathDone = static_cast<Semaphore>(2);
inline constexpr Semaphore kSemSparsePackDone = static_cast<Semaphore>(3);

// One thread's position in an encoding operand. `taken` counts the tiles
// this thread has finished since the epoch started, like the operand's
// RECEIVED counter, so tile `taken` is in L1 once RECEIVED > taken.
struct SparseEncoding {
  uint32_t taken;
  uint32_t slot;  // slot of tile `taken` in the operand's buffer
  uint32_t data;  // L1 address of the current tile's first value (after its header)
};

inline constexpr uint32_t kSparseTileHeaderBytes = 16;

// Waits until the next encoding tile has arrived and points `e` at it.
inline void hlk_sparse_wait_encoding(int operand, SparseEncoding& e) {
  // Math and pack may count skipped tiles before unpack has even received
  // them: the counters are free-running, so compare their difference.
  while (static_cast<int32_t>(llk::tiles_received(operand) - e.taken) <= 0) llk::spin();
  e.data = llk::slot_address(llk::operand_entry(operand), e.slot) + kSparseTileHeaderBytes;
}

// 16-bit field `i` of the current tile (little-endian halves of its words).
inline uint32_t hlk_sparse_half(const SparseEncoding& e, uint32_t i) {
  return *static_cast<const volatile uint16_t*>(llk::l1_pointer(e.data + 2u * i));
}

inline void sparse_advance(int operand, SparseEncoding& e) {
  ++e.taken;
  const uint32_t capacity = llk::operand_entry(operand).capacityTiles;
  e.slot = e.slot + 1 >= capacity ? 0 : e.slot + 1;
}

// This thread is done with the current tile: math and pack say so, unpack
// waits until both have and pops it.
inline void hlk_sparse_release_encoding(int operand, SparseEncoding& e) {
  if constexpr (llk::kMath) llk::semaphore_post(kSemSparseMathDone);
  if constexpr (llk::kPack) llk::semaphore_post(kSemSparsePackDone);
  if constexpr (llk::kUnpack) {
    llk::semaphore_wait(kSemSparseMathDone);
    llk::semaphore_wait(kSemSparsePackDone);
    llk::unpack_pop_tiles(operand, 1);
  }
  sparse_advance(operand, e);
}

// Tiles no thread reads (the entry's encoding ended before them): unpack
// waits for each and pops it, math and pack only count them.
inline void hlk_sparse_skip_encoding(int operand, SparseEncoding& e, int count) {
  for (int i = 0; i < count; ++i) {
    if constexpr (llk::kUnpack) {
      llk::unpack_wait_tiles(operand, 1);
      llk::unpack_pop_tiles(operand, 1);
    }
    sparse_advance(operand, e);
  }
}

} // namespace hlk
