// A datacopy op driven straight through the coprocessor instruction port
// (no HLK library): unpack UNPACKs each tile of operand 0 into srcA, math
// DATACOPYs srcA into a dest half, pack PACKs that half into operand 16.
// Math and pack hand dest halves over with the MathPack/PackMath semaphores.
// Compiled once per thread with -DTHREAD_UNPACK, -DTHREAD_MATH or -DTHREAD_PACK.
#include "kernel.h"

using namespace k;

namespace {
void cop(uint32_t word) { reg(kCopInstrPort) = word; }
void semWait(uint32_t s) { reg(kSemaphoreBase + s * kSemaphoreStride + kSemWait) = 1; }
void semPost(uint32_t s) { reg(kSemaphoreBase + s * kSemaphoreStride + kSemValue) = 1; }
constexpr uint32_t kHalfTiles = kDestTiles32 / 2;  // dest stays in its Float32 reset mode
} // namespace

KERNEL_MAIN {
  const uint32_t n = epoch().inputCount;
#if defined(THREAD_UNPACK)
  const OperandEntry& in = operand(0);
  uint32_t slot = 0;
  for (uint32_t i = 0; i < n; ++i) {
    while (counter(0, kTilesReceived) == counter(0, kTilesAcked)) {
    }
    cop(encode(kOpUnpack, in.dataFormat << kFormatShift));  // into srcA
    cop(in.baseAddress + slot * in.tileSizeBytes);
    counter(0, kTilesAcked) = 1;  // the UNPACK has read the tile
    slot = slot + 1 == in.capacityTiles ? 0 : slot + 1;
  }
#elif defined(THREAD_MATH)
  for (uint32_t i = 0; i < n; ++i) {
    semWait(kSemPackMath);
    cop(encode(kOpDatacopy, (i % 2) * kHalfTiles));
    semPost(kSemMathPack);
  }
#elif defined(THREAD_PACK)
  const OperandEntry& out = operand(16);
  uint32_t slot = 0;
  for (uint32_t i = 0; i < n; ++i) {
    semWait(kSemMathPack);
    while (counter(16, kTilesReceived) - counter(16, kTilesAcked) >= out.capacityTiles) {
    }
    cop(encode(kOpPack, (i % 2) * kHalfTiles | out.dataFormat << kFormatShift));
    cop(out.baseAddress + slot * out.tileSizeBytes);
    counter(16, kTilesReceived) = 1;
    semPost(kSemPackMath);
    slot = slot + 1 == out.capacityTiles ? 0 : slot + 1;
  }
#else
#error "define THREAD_UNPACK, THREAD_MATH or THREAD_PACK"
#endif
  done(0);
}
