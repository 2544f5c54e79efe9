// Unpack thread: copies EpochInfo.inputCount tiles of operand 0 to operand
// 16 with loads and stores, through both circular buffers.
#include "kernel.h"

KERNEL_MAIN {
  using namespace k;
  const OperandEntry& in = operand(0);
  const OperandEntry& out = operand(16);
  uint32_t readSlot = 0, writeSlot = 0;
  for (uint32_t i = 0; i < epoch().inputCount; ++i) {
    while (counter(0, kTilesReceived) == counter(0, kTilesAcked)) {
    }
    while (counter(16, kTilesReceived) - counter(16, kTilesAcked) >= out.capacityTiles) {
    }
    const uint32_t* src = reinterpret_cast<const uint32_t*>(in.baseAddress + readSlot * in.tileSizeBytes);
    uint32_t* dst = reinterpret_cast<uint32_t*>(out.baseAddress + writeSlot * out.tileSizeBytes);
    for (uint32_t w = 0; w < in.tileSizeBytes / 4; ++w) dst[w] = src[w];
    counter(0, kTilesAcked) = 1;
    counter(16, kTilesReceived) = 1;
    readSlot = readSlot + 1 == in.capacityTiles ? 0 : readSlot + 1;
    writeSlot = writeSlot + 1 == out.capacityTiles ? 0 : writeSlot + 1;
  }
  done(0);
}
