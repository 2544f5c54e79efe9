// The device contract: what the kernels (RV32, freestanding, lib/kernels) and
// the simulator (host, lib/sim) agree on. One header for both sides so the
// numbers cannot drift; docs/device-model.md explains every item.
//
// Only <stdint.h> and constexpr: this file is compiled by clang for
// riscv32 -ffreestanding as well as by the host compiler.
#pragma once
#include <stdint.h>

namespace tessera::contract {

// ---------------------------------------------------------------------------
// L1 map of a worker core (byte addresses; L1 starts at 0).
// Grayskull L1 is 1 MiB, wormhole_b0 1464 KiB; everything below
// kDataBufferBase is the same on both, data buffers use the rest.
// ---------------------------------------------------------------------------
constexpr uint32_t kFirmwareBase = 0x00000;      // firmware reserve [0, 0x4000)
constexpr uint32_t kFirmwareSize = 0x04000;
constexpr uint32_t kOperandTableBase = 0x01000;  // inside the reserve: kOperandCount x OperandEntry
constexpr uint32_t kEpochInfoBase = 0x01400;     // inside the reserve: EpochInfo
constexpr uint32_t kTrisc0CodeBase = 0x04000;    // unpack thread code (.text/.rodata)
constexpr uint32_t kTrisc0CodeSize = 0x05000;    // 20 KiB
constexpr uint32_t kTrisc1CodeBase = 0x09000;    // math thread code
constexpr uint32_t kTrisc1CodeSize = 0x04000;    // 16 KiB
constexpr uint32_t kTrisc2CodeBase = 0x0D000;    // pack thread code
constexpr uint32_t kTrisc2CodeSize = 0x05000;    // 20 KiB
constexpr uint32_t kOverlayBlobBase = 0x12000;   // overlay blob (lib/blob), read by the stream engine
constexpr uint32_t kOverlayBlobSize = 0x0E000;   // 56 KiB
constexpr uint32_t kDataBufferBase = 0x20000;    // operand buffers, allocated by pipegen, to end of L1
constexpr uint32_t kGrayskullL1Size = 1024 * 1024;
constexpr uint32_t kWormholeB0L1Size = 1464 * 1024;

// ---------------------------------------------------------------------------
// Ethernet cores (wormhole_b0, blackhole; docs/device-model.md "Ethernet
// cores"): no Tensix and no kernels, only streams that relay tiles between
// chips. L1 is the SoC descriptor's eth_l1_size (wormhole_b0 256 KiB). The
// overlay blob sits where a worker's does (kOverlayBlobBase, at most
// kOverlayBlobSize); the relay rings pipegen allocates run from
// kEthDataBufferBase to the top of L1: BUDA's DATA_BUFFER_SPACE_BASE in
// tt-budabackend src/firmware/riscv/wormhole/eth_l1_address_map.h (below
// it: the ethernet firmware, its command queue and buffers, the blob).
// Streams: 32 (pipegen2's ethernet_core_num_noc_streams), every one able to
// send or receive over the core's link: 0-3 and 8-11 in hardware, 4-7 and
// 12-31 through the ethernet firmware (stream_io_map.h: "HW ethernet
// streams are: 0 - 3, 8 - 11", "FW managed streams are: 4 - 7, 12 - 31").
// The simulator moves both kinds alike.
// ---------------------------------------------------------------------------
constexpr uint32_t kEthDataBufferBase = 0x28000;
constexpr uint32_t kEthStreamsPerCore = 32;
constexpr bool isEthernetCapableStream(uint32_t streamId) { return streamId < kEthStreamsPerCore; }
constexpr bool isEthernetHardwareStream(uint32_t streamId) {
  return streamId <= 3 || (streamId >= 8 && streamId <= 11);
}

// Per-hart local memory: private to each of the three threads (.data, .bss,
// stack). The same addresses on every hart; each sees its own copy.
constexpr uint32_t kLocalMemBase = 0xFFB00000;
constexpr uint32_t kLocalMemSize = 0x01000;      // 4 KiB

enum Thread : uint32_t { kUnpackThread = 0, kMathThread = 1, kPackThread = 2, kThreadCount = 3 };

// ---------------------------------------------------------------------------
// Operands. BUDA's numbering: 0-7 op inputs (8-15 for the inputs 8-15 of a
// fused op with more than 8), 16-23 outputs, 24-31 intermediates. Each
// operand is a circular buffer of whole tiles in L1.
// ---------------------------------------------------------------------------
constexpr uint32_t kOperandCount = 32;
constexpr uint32_t kFirstInputOperand = 0;
constexpr uint32_t kFirstOutputOperand = 16;
constexpr uint32_t kFirstIntermediateOperand = 24;

// One entry of the operand table at kOperandTableBase, written by the
// firmware (simulator-native) before the threads start. capacityTiles == 0
// means the operand is not used on this core.
struct OperandEntry {
  uint32_t baseAddress;    // L1 byte address of tile slot 0
  uint32_t tileSizeBytes;  // bytes per slot (netlist::tileSizeBytes of the format)
  uint16_t capacityTiles;  // slots in the circular buffer
  uint8_t dataFormat;      // DataFormatCode
  uint8_t flags;           // OperandFlags
  uint32_t rowStrideBytes; // untilized outputs: bytes between rows (0 = tiled)
};
static_assert(sizeof(OperandEntry) == 16, "operand table entries are 16 bytes");

enum OperandFlags : uint8_t {
  kOperandUntilized = 1u << 0,  // output written row-major by PACK with untilize
};

// Written by the firmware with the operand table; the kernels read it once.
struct EpochInfo {
  uint32_t epochId;
  uint32_t inputCount;   // inputs (microbatch entries) this run processes; 0 = use the args header
  uint32_t reserved[2];
};

// ---------------------------------------------------------------------------
// Binaries cache and epoch command queue (docs/device-model.md, "Binaries
// cache and epoch commands"). Per worker core, in DRAM: a queue of epoch
// commands (a 32-byte queue header, BUDA's rd/wr pointer layout, then
// kEpochCommandSlots commands) and a binaries cache of kBinariesCacheSlots
// slots of kBinariesSlotBytes, each holding one binaries image (the three
// kernels' loadable segments and entry points, and the overlay blob).
// A slot holds the largest valid image: 3 code regions (56 KiB), 3 local
// memories (12 KiB) and a full overlay blob (56 KiB), with their records.
// ---------------------------------------------------------------------------
constexpr uint32_t kEpochCommandSlots = 32;
constexpr uint32_t kEpochCommandBytes = 32;
constexpr uint32_t kBinariesCacheSlots = 32;
constexpr uint32_t kBinariesSlotBytes = 0x20000;     // 128 KiB
constexpr uint32_t kBinariesMagic = 0x4E494254;      // "TBIN"
constexpr uint32_t kBinariesVersion = 1;
constexpr uint32_t kEpochCommandMagic = 0x444D4345;  // "ECMD"

// One epoch command: what the NCRISC firmware reads before it starts an epoch.
struct EpochCommand {
  uint32_t magic;               // kEpochCommandMagic
  uint32_t epochId;             // temporal epoch (EpochInfo::epochId)
  uint32_t inputCount;          // EpochInfo::inputCount
  uint32_t binariesChannel;     // DRAM channel of the binaries slot
  uint32_t binariesAddressLo;   // byte address of the slot in the channel
  uint32_t binariesAddressHi;
  uint32_t binariesBytes;       // the image's size (<= kBinariesSlotBytes)
  uint32_t binariesSlot;        // the slot's index in the core's cache (reports)
};
static_assert(sizeof(EpochCommand) == kEpochCommandBytes, "epoch commands are 32 bytes");

// Data formats as encoded in instructions and the operand table. Same order
// as netlist::DataFormat (the host side static_asserts it).
enum DataFormatCode : uint32_t {
  kFloat32 = 0, kFloat16, kFloat16_b,
  kBfp8, kBfp8_b, kBfp4, kBfp4_b, kBfp2, kBfp2_b,
  kLf8, kFp8_e4m3,
  kInt8, kInt32, kUInt8, kUInt16,
  kRawUInt8, kRawUInt16, kRawUInt32,
  kDataFormatCount
};

// Same order as netlist::MathFidelity.
enum FidelityCode : uint32_t { kLoFi = 0, kHiFi2, kHiFi2_A, kHiFi2_B, kHiFi3, kHiFi4 };

// ---------------------------------------------------------------------------
// Memory-mapped registers (each hart sees the same map; "this thread" below
// means the hart doing the access).
// ---------------------------------------------------------------------------
constexpr uint32_t kMmioBase = 0xFFE00000;
constexpr uint32_t kMmioSize = 0x00010000;

// Coprocessor instruction port: a store pushes one 32-bit word of this
// thread's instruction stream. The store does not complete while the
// instruction cannot issue (e.g. UNPACK into a full source register), which
// is how the threads stay in step without software handshakes.
constexpr uint32_t kCopInstrPort = kMmioBase + 0x0000;   // W
constexpr uint32_t kCopStatus = kMmioBase + 0x0004;      // R: 0, or the fault code of this thread's last instruction

// Tile counters of operand o at kTileCounterBase + o * kTileCounterStride.
// Free-running 32-bit counts: occupancy = received - acked (mod 2^32).
// A store ADDS the stored value to the counter.
//   input operands:  the stream engine adds to RECEIVED, unpack adds to ACKED (pop)
//   output operands: pack adds to RECEIVED (push), the stream engine to ACKED
//   intermediates:   pack pushes, unpack pops, on the same core
constexpr uint32_t kTileCounterBase = kMmioBase + 0x1000;
constexpr uint32_t kTileCounterStride = 16;
constexpr uint32_t kTilesReceived = 0;   // R, W adds (push)
constexpr uint32_t kTilesAcked = 4;      // R, W adds (pop)
constexpr uint32_t kTilesCapacity = 8;   // R: capacityTiles of the operand table

// Semaphores between the threads of a core, at kSemaphoreBase + s * 8.
constexpr uint32_t kSemaphoreBase = kMmioBase + 0x2000;
constexpr uint32_t kSemaphoreStride = 8;
constexpr uint32_t kSemValue = 0;   // R: value; W: post (adds the stored value)
constexpr uint32_t kSemWait = 4;    // W: wait until value > 0, then decrement (the store stalls meanwhile)
constexpr uint32_t kSemaphoreCount = 8;
enum Semaphore : uint32_t {
  kSemMathPack = 0,   // dest halves math has filled and pack has not taken; starts 0
  kSemPackMath = 1,   // dest halves free for math; starts 2 (double-buffered dest)
};

// Mailbox and debug port.
constexpr uint32_t kMailboxBase = kMmioBase + 0x3000;
constexpr uint32_t kMailboxDone = kMailboxBase + 0x0;     // W: thread finished with this exit code (0 = ok); the hart halts
constexpr uint32_t kDebugPutChar = kMailboxBase + 0x4;    // W: one byte to the core's debug log
constexpr uint32_t kDebugPutWord = kMailboxBase + 0x8;    // W: a 32-bit word to the debug log, printed as hex
constexpr uint32_t kCycleCounterLo = kMailboxBase + 0xC;  // R: the core's cycle count (low word)
constexpr uint32_t kThreadId = kMailboxBase + 0x10;       // R: Thread of the reading hart

// ---------------------------------------------------------------------------
// Coprocessor instructions. Word 0: opcode in [31:24], fields in [23:0].
// Opcodes marked "+1" are followed by one argument word on the same port.
// Instructions of one thread execute in order; a math instruction waits for
// the source registers it reads to be valid, an UNPACK for its source
// register to be free.
// ---------------------------------------------------------------------------
constexpr uint32_t kOpcodeShift = 24;
enum Opcode : uint32_t {
  kOpSetConfig = 0x01,  // +1: [7:0] ConfigReg; argument = value
  kOpUnpack = 0x10,     // +1: argument = L1 address of the tile (its header); fields below
  kOpDatacopy = 0x20,   // dest[d] (=|+=) srcA
  kOpEltwise = 0x21,    // dest[d] (=|+=) A op B; [9:8] EltwiseOp; [10] A is dest[d]; [11] B is dest[d]
  kOpMatmul = 0x22,     // dest[d] (=|+=) srcB x srcA (srcB: rows of in0's tile, srcA: in1's tile)
  kOpReduce = 0x23,     // +1: dest[d] (=|op=) reduce(srcA) * scale; [9:8] ReduceDim; [11:10] ReduceType; argument = scale (float32 bits)
  kOpSfpu = 0x24,       // +1: dest[d] = f(dest[d]); [15:8] SfpuFunc; [16] approximate; argument = parameter (float32 bits or integer, per function)
  kOpZeroDest = 0x25,   // dest[d] = 0
  kOpTopk = 0x26,       // +1: one step of the topk sort network on dest[d..d+3]; [9:8] TopkStep; [10] two tiles; argument below
  kOpRowCopy = 0x27,    // row [20:16] of dest[d] = row [12:8] of srcA (the other rows unchanged); [5] keep srcA
  kOpPack = 0x30,       // +1: dest[d] -> L1 at argument; fields below
};

// Fields shared by math instructions (datacopy, eltwise, matmul, reduce, sfpu, zero).
constexpr uint32_t kFieldDestIndexMask = 0xF;   // [3:0] dest tile index (absolute, 0..15)
// [23:22] bits 5:4 of the dest index, for a dest of more than 16 tiles
// (wormhole A0: 64; docs/device-model.md "Dest"). Math instructions and PACK.
constexpr uint32_t kFieldDestIndexHiShift = 22;
constexpr uint32_t kFieldDestIndexHiMask = 0x3u << kFieldDestIndexHiShift;
constexpr uint32_t destIndexFields(uint32_t index) {
  return (index & kFieldDestIndexMask) | ((index >> 4) << kFieldDestIndexHiShift & kFieldDestIndexHiMask);
}
constexpr uint32_t destIndexOf(uint32_t fields) {
  return (fields & kFieldDestIndexMask) | ((fields & kFieldDestIndexHiMask) >> kFieldDestIndexHiShift << 4);
}
constexpr uint32_t kFieldAccumulate = 1u << 4;  // [4] add to dest instead of overwrite (max for reduce max)
constexpr uint32_t kFieldKeepSrcA = 1u << 5;    // [5] leave srcA valid (reused by the next instruction)
constexpr uint32_t kFieldKeepSrcB = 1u << 6;    // [6] leave srcB valid

enum EltwiseOp : uint32_t { kEltAdd = 0, kEltSub = 1, kEltMul = 2, kEltMax = 3 };
constexpr uint32_t kEltwiseOpShift = 8;
constexpr uint32_t kEltwiseAFromDest = 1u << 10;
constexpr uint32_t kEltwiseBFromDest = 1u << 11;

enum ReduceDim : uint32_t {
  kReduceRows = 0,    // over the rows of the tile: result in row 0 (BUDA dim r)
  kReduceCols = 1,    // over the columns: result in column 0 (BUDA dim c)
  kReduceScalar = 2,  // over the whole tile: result at [0][0]
};
enum ReduceType : uint32_t { kReduceSum = 0, kReduceMax = 1 };
constexpr uint32_t kReduceDimShift = 8;
constexpr uint32_t kReduceTypeShift = 10;

enum SfpuFunc : uint32_t {
  kSfpuExp = 0, kSfpuLog, kSfpuSqrt, kSfpuReciprocal, kSfpuGelu, kSfpuGeluDerivative,
  kSfpuSigmoid, kSfpuTanh, kSfpuAbs, kSfpuSine, kSfpuCosine, kSfpuSquare,
  kSfpuPower,      // parameter: integer exponent 0..65535 (larger: kCopIllegalInstruction)
  kSfpuLrelu,      // parameter: slope (float32 bits)
  kSfpuRelu,       // x > 0 ? x : 0
  kSfpuReluMin,    // parameter: threshold (float32 bits): x >= threshold ? x : 0
  kSfpuReluMax,    // parameter: threshold: clamp to [0, threshold]
  kSfpuAddScalar,  // parameter: s (float32 bits): x + s (dequantization's zero point)
  kSfpuQuantInt8,  // parameter: zero point (float32 bits): x + zp rounded ties away, saturated to [-127, 127]
  kSfpuFuncCount
};
constexpr uint32_t kSfpuFuncShift = 8;
// SFPU [16]: approximate mode (BUDA's approximate_mode). Same results here
// (the model computes every function exactly), a cheaper cost. A kernel ORs
// kSfpuApproximate into the function it passes (bit 8 of the value, field [16]).
constexpr uint32_t kFieldSfpuApproximate = 1u << 16;
constexpr uint32_t kSfpuApproximate = kFieldSfpuApproximate >> kSfpuFuncShift;

// TOPK: a window of 32 ([10] = 0) or 64 ([10] = 1) columns of every row:
// values in dest[d] (and dest[d+1]), their indices in dest[d+2] (and
// dest[d+3]); position p of a row is column p % 32 of tile p / 32. The
// argument: [15:0] the window's first column in the whole row (directions
// and the k >= 64 reversals depend on it), [19:16] log2 a, [23:20] log2 b.
enum TopkStep : uint32_t {
  kTopkSort = 0,      // a = k: sort every k-run in alternating directions (network phase 1)
  kTopkCompare = 1,   // a = count, b = dist: per 2*dist block, positions j < count keep the larger of j, j + dist
  kTopkMerge = 2,     // a = len, b = stride: bitonic-merge the len-run at every multiple of stride
  kTopkZeroTail = 3,  // a = k: positions >= k become 0 (values and indices)
};
constexpr uint32_t kTopkStepShift = 8;
constexpr uint32_t kTopkTwoTiles = 1u << 10;
constexpr uint32_t kTopkLogAShift = 16;
constexpr uint32_t kTopkLogBShift = 20;

// ROWCOPY fields (embedding's row gather).
constexpr uint32_t kRowCopySrcShift = 8;
constexpr uint32_t kRowCopyDstShift = 16;

// UNPACK fields.
constexpr uint32_t kUnpackToSrcB = 1u << 0;     // [0] 0 = srcA, 1 = srcB
constexpr uint32_t kUnpackTranspose = 1u << 1;  // [1] transpose the 32x32 tile (xy)
enum Broadcast : uint32_t {
  kBcastNone = 0,
  kBcastRow = 1,     // row 0 replicated to all rows
  kBcastCol = 2,     // column 0 replicated to all columns
  kBcastScalar = 3,  // [0][0] replicated everywhere
};
constexpr uint32_t kUnpackBcastShift = 2;       // [3:2] Broadcast
constexpr uint32_t kUnpackZero = 1u << 4;       // [4] load zeros (no L1 read; the argument is ignored)
constexpr uint32_t kFormatShift = 5;            // [9:5] DataFormatCode of the tile in L1 (UNPACK and PACK)
constexpr uint32_t kFormatMask = 0x1F;

// PACK fields: [3:0] dest index, [9:5] format, and:
constexpr uint32_t kPackUntilize = 1u << 4;     // [4] write 32 rows row-major at argument + r * UntilizeStride, no header
constexpr uint32_t kPackL1Accumulate = 1u << 10; // [10] add to the tile already at the address (l1_acc)

// UNPACK and PACK: [14:12] the tile's shape in L1 (tile_dim). UNPACK reads
// only the tile's values and zeros the rest of the 32x32 source register;
// PACK stores only the top-left corner of the dest tile (untilize: its rows
// and columns). docs/device-model.md "Tiny tiles".
enum TileShapeCode : uint32_t {
  kTile32x32 = 0, kTile16x32 = 1, kTile8x32 = 2, kTile4x32 = 3, kTile2x32 = 4, kTile1x32 = 5, kTile32x16 = 6,
  kTileShapeCount
};
constexpr uint32_t kTileShapeShift = 12;
constexpr uint32_t kTileShapeMask = 0x7;

enum ConfigReg : uint32_t {
  kCfgMathFidelity = 0,   // FidelityCode, for matmul and eltwise multiply
  kCfgDestFormat = 1,     // DataFormatCode dest values are rounded to on write: Float16, Float16_b, Float32 or Int32
  kCfgReluMode = 2,       // 0 off, 1 min (x >= threshold kept), 2 max (clamp to [0, threshold]); applied by PACK
  kCfgReluThreshold = 3,  // float32 bits
  kCfgUntilizeStride = 4, // bytes between rows for PACK with untilize
  kConfigRegCount
};

// Dest register file: 16 tiles with 16-bit values, 8 with Float32 or Int32
// (kCfgDestFormat). Math and pack use it in two halves (kSemPackMath).
// Wormhole (A0) has four times that (kDestTiles16WormholeA0: BUDA's
// wormhole_a0 tensix_types.h, DEST_REGISTER_FULL_SIZE = 256 * 16 rows).
constexpr uint32_t kDestTiles16 = 16;
constexpr uint32_t kDestTiles32 = 8;
constexpr uint32_t kDestTiles16WormholeA0 = 64;

// Fault codes (kCopStatus, and the simulator's fault reports).
enum CopFault : uint32_t {
  kCopOk = 0,
  kCopIllegalInstruction = 1,   // unknown opcode or field value
  kCopBadAddress = 2,           // tile outside L1 or overlapping the reserved area
  kCopBadDestIndex = 3,         // dest index beyond the dest capacity of the format
  kCopBadFormat = 4,            // format not valid for the unit (e.g. Bfp dest)
};

constexpr uint32_t encode(uint32_t opcode, uint32_t fields) { return (opcode << kOpcodeShift) | (fields & 0xFFFFFFu); }

} // namespace tessera::contract
