// Runs one thread of a kernel on the host (hlk_api.h built with
// TESSERA_LLK_HOST_TRACE) and prints every memory-mapped access it makes,
// decoded: the instruction stream, counter updates and semaphores that the
// thread would send the simulated core. The operand table is fixed here:
//   operand  0: base 0x20000, 0x820-byte slots, 4 slots, Float16_b
//   operand  1: base 0x30000, 0x820-byte slots, 4 slots, Bfp8_b
//   operand 16: base 0x40000, 0x820-byte slots, 3 slots, Float16_b
//   operand 17: base 0x50000, 0x800-byte slots, 8 slots, Float32, untilized, row stride 0x200
// Inputs always look full (unpack) and outputs always empty (pack), so the
// waits return at once.
#include "device/device_contract.h"

#include <cstdio>
#include <cstdlib>

using namespace tessera::contract;

extern "C" void hlk_setup();
void hlk_main();

namespace {
OperandEntry table[kOperandCount];
EpochInfo epoch{};
uint32_t received[kOperandCount], acked[kOperandCount];
int pendingArgs = 0;   // argument words still to come for the last instruction
uint32_t pendingWord = 0;

#if defined(TESSERA_THREAD_UNPACK)
constexpr uint32_t kSelf = kUnpackThread;
#elif defined(TESSERA_THREAD_MATH)
constexpr uint32_t kSelf = kMathThread;
#else
constexpr uint32_t kSelf = kPackThread;
#endif

const char* formatName(uint32_t f) {
  static const char* names[] = {"Float32", "Float16", "Float16_b", "Bfp8", "Bfp8_b", "Bfp4", "Bfp4_b", "Bfp2",
                                "Bfp2_b", "Lf8", "Fp8_e4m3", "Int8", "Int32", "UInt8", "UInt16", "RawUInt8",
                                "RawUInt16", "RawUInt32"};
  return f < kDataFormatCount ? names[f] : "?";
}

void printInstruction(uint32_t w, uint32_t arg) {
  uint32_t op = w >> kOpcodeShift, dst = w & kFieldDestIndexMask;
  bool acc = w & kFieldAccumulate;
  switch (op) {
  case kOpSetConfig: std::printf("SETCONFIG reg=%u value=0x%x\n", w & 0xFF, arg); break;
  case kOpUnpack:
    std::printf("UNPACK src%c format=%s transpose=%d bcast=%u zero=%d addr=0x%x\n", (w & kUnpackToSrcB) ? 'B' : 'A',
                formatName((w >> kFormatShift) & kFormatMask), (w & kUnpackTranspose) ? 1 : 0,
                (w >> kUnpackBcastShift) & 3, (w & kUnpackZero) ? 1 : 0, arg);
    break;
  case kOpDatacopy: std::printf("DATACOPY dst=%u acc=%d\n", dst, acc); break;
  case kOpEltwise: {
    static const char* ops[] = {"add", "sub", "mul", "max"};
    std::printf("ELTWISE %s dst=%u a_from_dest=%d b_from_dest=%d\n", ops[(w >> kEltwiseOpShift) & 3], dst,
                (w & kEltwiseAFromDest) ? 1 : 0, (w & kEltwiseBFromDest) ? 1 : 0);
    break;
  }
  case kOpMatmul: std::printf("MATMUL dst=%u acc=%d\n", dst, acc); break;
  case kOpReduce:
    std::printf("REDUCE dim=%u type=%u dst=%u acc=%d scale=0x%08x\n", (w >> kReduceDimShift) & 3,
                (w >> kReduceTypeShift) & 3, dst, acc, arg);
    break;
  case kOpSfpu: std::printf("SFPU func=%u dst=%u param=0x%x\n", (w >> kSfpuFuncShift) & 0xFF, dst, arg); break;
  case kOpZeroDest: std::printf("ZERODEST dst=%u\n", dst); break;
  case kOpPack:
    std::printf("PACK dst=%u format=%s untilize=%d l1acc=%d addr=0x%x\n", dst,
                formatName((w >> kFormatShift) & kFormatMask), (w & kPackUntilize) ? 1 : 0,
                (w & kPackL1Accumulate) ? 1 : 0, arg);
    break;
  default: std::printf("UNKNOWN 0x%08x\n", w); break;
  }
}

int argWords(uint32_t opcode) {
  switch (opcode) {
  case kOpSetConfig: case kOpUnpack: case kOpReduce: case kOpSfpu: case kOpPack: return 1;
  default: return 0;
  }
}
} // namespace

const void* tessera_trace_l1(uint32_t address) {
  if (address == kOperandTableBase) return table;
  if (address == kEpochInfoBase) return &epoch;
  std::printf("BAD L1 READ 0x%x\n", address);
  std::exit(3);
}

uint32_t tessera_trace_read(uint32_t address) {
  if (address == kThreadId) return kSelf;
  if (address >= kTileCounterBase && address < kTileCounterBase + kOperandCount * kTileCounterStride) {
    uint32_t o = (address - kTileCounterBase) / kTileCounterStride, reg = address % kTileCounterStride;
    bool full = kSelf == kUnpackThread;
    if (reg == kTilesReceived) return full ? acked[o] + table[o].capacityTiles : received[o];
    if (reg == kTilesAcked) return full ? acked[o] : received[o];
    if (reg == kTilesCapacity) return table[o].capacityTiles;
  }
  std::printf("BAD READ 0x%x\n", address);
  std::exit(3);
}

void tessera_trace_write(uint32_t address, uint32_t value) {
  if (address == kCopInstrPort) {
    if (pendingArgs > 0) {
      --pendingArgs;
      printInstruction(pendingWord, value);
      return;
    }
    pendingWord = value;
    pendingArgs = argWords(value >> kOpcodeShift);
    if (pendingArgs == 0) printInstruction(value, 0);
    return;
  }
  if (address >= kTileCounterBase && address < kTileCounterBase + kOperandCount * kTileCounterStride) {
    uint32_t o = (address - kTileCounterBase) / kTileCounterStride, reg = address % kTileCounterStride;
    if (reg == kTilesReceived) {
      received[o] += value;
      std::printf("PUSH operand=%u tiles=%u\n", o, value);
      return;
    }
    if (reg == kTilesAcked) {
      acked[o] += value;
      std::printf("POP operand=%u tiles=%u\n", o, value);
      return;
    }
  }
  if (address >= kSemaphoreBase && address < kSemaphoreBase + kSemaphoreCount * kSemaphoreStride) {
    uint32_t s = (address - kSemaphoreBase) / kSemaphoreStride, reg = address % kSemaphoreStride;
    const char* name = s == kSemMathPack ? "MathPack" : s == kSemPackMath ? "PackMath" : "?";
    std::printf("%s %s\n", reg == kSemWait ? "SEM_WAIT" : "SEM_POST", name);
    return;
  }
  if (address == kDebugPutWord) {
    std::printf("DEBUG 0x%x\n", value);
    return;
  }
  if (address == kMailboxDone) {
    std::printf("DONE %u\n", value);
    std::exit(0);
  }
  std::printf("BAD WRITE 0x%x = 0x%x\n", address, value);
  std::exit(3);
}

int main() {
  table[0] = {0x20000, 0x820, 4, kFloat16_b, 0, 0};
  table[1] = {0x30000, 0x820, 4, kBfp8_b, 0, 0};
  table[16] = {0x40000, 0x820, 3, kFloat16_b, 0, 0};
  table[17] = {0x50000, 0x800, 8, kFloat32, kOperandUntilized, 0x200};
  hlk_setup();
  hlk_main();
  if (pendingArgs != 0) std::printf("INCOMPLETE INSTRUCTION 0x%08x\n", pendingWord);
  std::printf("END\n");
  return 0;
}
