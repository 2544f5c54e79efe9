// Helpers of the tensix-run test kernels (freestanding rv32im C++).
#pragma once
#include "device/device_contract.h"

namespace k {
using namespace tessera::contract;

inline volatile uint32_t& reg(uint32_t address) { return *reinterpret_cast<volatile uint32_t*>(address); }
inline volatile uint32_t& counter(uint32_t operand, uint32_t which) {
  return reg(kTileCounterBase + operand * kTileCounterStride + which);
}
inline const OperandEntry& operand(uint32_t o) { return reinterpret_cast<const OperandEntry*>(kOperandTableBase)[o]; }
inline const EpochInfo& epoch() { return *reinterpret_cast<const EpochInfo*>(kEpochInfoBase); }
[[noreturn]] inline void done(uint32_t code) {
  reg(kMailboxDone) = code;
  for (;;) {
  }
}
inline void print(const char* s) {
  while (*s) reg(kDebugPutChar) = static_cast<uint8_t>(*s++);
}
} // namespace k

#define KERNEL_MAIN extern "C" __attribute__((section(".text.start"))) void _start()
