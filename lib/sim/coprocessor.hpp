// The Tensix coprocessor of one simulated worker core: the unit the three
// harts (unpack, math, pack) drive through the instruction port
// (contract::kCopInstrPort). It owns the source registers (srcA, srcB, each
// double-banked), the dest register file, the config registers and one
// instruction decoder per thread, and reads/writes the core's L1.
//
// Semantics: docs/device-model.md, "Coprocessor instruction set"; numerics
// match lib/golden op by op (docs/golden-model.md), using lib/formats for
// every L1 <-> register conversion. Cycle costs: docs/device-model.md,
// "Coprocessor cycle model" (CopCycleModel below holds the numbers).
//
// How the core model uses it:
//
//   Coprocessor cop(l1Span);                       // L1 of the core, must outlive cop
//   CopResult r = cop.push(contract::kMathThread, word);   // a hart's store to kCopInstrPort
//   switch (r.kind) {
//   case CopResult::Kind::Accepted: charge r.cycles to r.unit ...; break;
//   case CopResult::Kind::Stall:    the store does not complete; retry the SAME word later
//                                   (a stalled push changed nothing); cop.describeWait(t)
//                                   says why, for hang reports; break;
//   case CopResult::Kind::Fault:    stop the run: r.fault is the CopFault code; break;
//   }
//   cop.status(t)                  // the value of kCopStatus for thread t
//
// Instruction words: each thread has its own decoder, so the argument word of
// a "+1" instruction is simply the thread's next push, whatever the other
// threads push in between. The first word of a +1 instruction is always
// Accepted (0 cycles, unit None); the instruction is validated, checked for
// stalls and executed when its argument arrives, so Stall and Fault are
// returned for the argument push. An unknown opcode faults on its first word.
//
// Not thread safe: the core model calls it from one host thread.
#pragma once
#include "device/arch.hpp"
#include "device/device_contract.h"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tessera::sim {

// The unit an instruction occupies (for the core's timing and the perf report).
enum class CopUnit : uint8_t {
  None,    // first word of a +1 instruction, a stall or a fault: nothing ran
  Config,  // SETCONFIG
  Unpack,  // UNPACK
  Math,    // DATACOPY, ELTWISE, MATMUL, REDUCE, SFPU, ZERODEST, TOPK, ROWCOPY
  Pack,    // PACK
};
const char* copUnitName(CopUnit unit);  // "none", "config", "unpack", "math", "pack"
// "ok", "illegal-instruction", "bad-address", "bad-dest-index", "bad-format" (else "unknown").
const char* copFaultName(uint32_t fault);

struct CopResult {
  enum class Kind : uint8_t { Accepted, Stall, Fault };
  Kind kind = Kind::Accepted;
  uint32_t fault = contract::kCopOk;  // Kind::Fault: a contract::CopFault
  uint32_t cycles = 0;                // Kind::Accepted: cycles the instruction keeps `unit` busy
  CopUnit unit = CopUnit::None;
  uint32_t hartCycles = 0;            // Kind::Accepted: cycles the pushing hart waits (synchronous: `cycles`; FIFO: while full)
  uint64_t start = 0;                 // Kind::Accepted: the cycle the instruction starts in `unit` (synchronous: the push)

  bool accepted() const { return kind == Kind::Accepted; }
  bool stalled() const { return kind == Kind::Stall; }
  bool faulted() const { return kind == Kind::Fault; }
};

// Cycles per instruction. The defaults and where they come from are in
// docs/device-model.md ("Coprocessor cycle model"); a different model can be
// passed to the constructor (e.g. for perf experiments).
struct CopCycleModel {
  uint32_t setConfig = 1;
  uint32_t unpackOverhead = 8;      // per UNPACK, plus ceil(tile bytes / l1BytesPerCycle)
  uint32_t unpackZeros = 16;        // UNPACK with [4] (no L1 read)
  uint32_t l1BytesPerCycle = 16;    // L1 port of the unpacker and the packer (128 bits)
  uint32_t fpuTile = 8;             // DATACOPY, ELTWISE add/sub/max; ELTWISE mul per fidelity phase
  uint32_t matmulPhase = 16;        // MATMUL, per fidelity phase of a 32x32x32 tile product
  uint32_t reduceRowsOrCols = 16;   // REDUCE rows or cols
  uint32_t reduceScalar = 32;       // REDUCE scalar (both passes)
  uint32_t zeroDest = 4;
  uint32_t sfpuPasses = 32;         // an SFPU function runs 32 passes of 32 lanes per tile
  // SFPU instructions per pass, by contract::SfpuFunc (power: sfpuPowerBase + exponent).
  std::array<uint32_t, contract::kSfpuFuncCount> sfpuOpsPerPass = {
      16,  // exp
      18,  // log
      12,  // sqrt
      14,  // reciprocal
      24,  // gelu
      32,  // gelu_derivative
      20,  // sigmoid
      20,  // tanh
      3,   // abs
      22,  // sine
      22,  // cosine
      3,   // square
      3,   // power (base; see sfpuPowerBase)
      5,   // lrelu
      4,   // relu
      5,   // relu_min
      6,   // relu_max
      3,   // add_scalar
      6,   // quant_int8
  };
  uint32_t sfpuPowerBase = 3;       // power: (sfpuPowerBase + exponent) ops per pass
  // Approximate mode (SFPU field [16]): ops per pass by SfpuFunc; 0 = the exact cost.
  std::array<uint32_t, contract::kSfpuFuncCount> sfpuApproxOpsPerPass{};
  uint32_t packOverhead = 8;        // per PACK, plus ceil(bytes written / l1BytesPerCycle)
  uint32_t untilizeRowOverhead = 1; // PACK untilize: per row written
  uint32_t topkStage = 128;         // TOPK: per compare-exchange stage and value tile of the window
  uint32_t topkOverhead = 8;        // TOPK: per instruction
  // Asynchronous issue (docs/device-model.md, "Instruction FIFO"): words a
  // thread's instruction FIFO holds; the pushing hart runs on while there is
  // room, and the instruction starts when its unit, its sources and the
  // thread's previous instruction allow. 0: synchronous (the hart waits for
  // each instruction; tensix-run's default).
  std::array<uint32_t, contract::kThreadCount> fifoWords{};
  uint32_t rowCopy = 2;             // ROWCOPY: one 32-value row through the matrix unit (8 rows per cycle: 1, plus issue)
};

// The model the simulated chip uses for `arch`: these defaults calibrated to
// public figures (lib/sim/cop_cycle_model.cpp; docs/device-model.md,
// "Calibration"). The defaults stay the single-core harness's (tensix-run).
CopCycleModel copCycleModelFor(Arch arch);

// Per-unit activity, for the performance report.
struct CopUnitCounters {
  uint64_t instructions = 0;  // executed (completed) instructions
  uint64_t cycles = 0;        // sum of their CopResult::cycles
};
struct CopCounters {
  CopUnitCounters config, unpack, math, pack;
  uint64_t tilesUnpacked = 0;  // UNPACKs (zero-fills included)
  uint64_t tilesPacked = 0;    // PACKs
  uint64_t matmulTiles = 0;    // MATMUL instructions (32x32x32 products)
  uint64_t sfpuTiles = 0;      // SFPU instructions
  std::array<uint64_t, contract::kThreadCount> stalls{};  // stalled pushes per thread
  std::array<uint64_t, contract::kThreadCount> faults{};  // faulted instructions per thread
};

class Coprocessor {
public:
  static constexpr size_t kTileValues = 1024;
  using Tile = std::array<float, kTileValues>;  // one 32x32 tile, row-major

  // `l1` is the core's whole L1 (byte 0 = address 0); it must outlive this
  // object. Its size bounds every tile address.
  // `destTiles16`: the dest register's size in 16-bit tiles (half that in
  // 32-bit mode): contract::kDestTiles16, or 64 on wormhole A0.
  explicit Coprocessor(std::span<uint8_t> l1, const CopCycleModel& model = {},
                       uint32_t destTiles16 = contract::kDestTiles16);

  // One 32-bit store of `thread` to the instruction port. See the file
  // comment for the three outcomes. `thread` must be < kThreadCount
  // (std::invalid_argument otherwise: a caller bug, not a device fault).
  CopResult push(uint32_t thread, uint32_t word) { return push(thread, word, 0); }
  // The same at the pushing hart's cycle `now` (used by the FIFO model).
  CopResult push(uint32_t thread, uint32_t word, uint64_t now);
  // FIFO model: the cycle every instruction `thread` pushed so far has
  // finished by (0 when synchronous). A hart's signal to another agent
  // (tile counters, done) waits for it.
  uint64_t doneAt(uint32_t thread) const { return thread < contract::kThreadCount ? doneAt_[thread] : 0; }

  // kCopStatus of `thread`: 0, or the fault code of its last completed or
  // faulted instruction.
  uint32_t status(uint32_t thread) const;

  // Why the last push of `thread` stalled, e.g. "math waits for srcB valid",
  // "unpack waits for a free srcA bank (both banks valid)"; empty when that
  // push did not stall.
  std::string describeWait(uint32_t thread) const;
  bool stalled(uint32_t thread) const;
  // True while `thread` has pushed the first word of a +1 instruction and
  // not yet its argument.
  bool awaitingArgument(uint32_t thread) const;

  // Accepted words since construction (never reset): changes exactly when a
  // push made progress, so a hang detector can compare it across slices.
  uint64_t progress() const { return progress_; }

  const CopCounters& counters() const { return counters_; }
  void resetCounters() { counters_ = {}; }
  const CopCycleModel& cycleModel() const { return model_; }

  // Power-on state: config registers 0 (LoFi, Float32 dest, relu off,
  // threshold 0, untilize stride 0), source banks invalid and zero, dest
  // zero, no pending argument words, statuses 0. Counters are kept.
  void reset();

  // Introspection for tests and debug dumps (no side effects).
  uint32_t config(uint32_t reg) const { return reg < contract::kConfigRegCount ? config_[reg] : 0; }
  uint32_t destCapacity() const;                    // destTiles16_, or half in 32-bit mode (Float32, Int32)
  float destValue(uint32_t tile, size_t index) const;  // row-major index; Int32 mode: the integer as float
  bool srcValid(bool srcB, int bank) const;

private:
  struct SrcReg {
    std::array<Tile, 2> bank{};
    std::array<bool, 2> valid{};
    uint8_t writeBank = 0;  // next bank UNPACK fills
    uint8_t readBank = 0;   // bank math reads
    std::array<uint64_t, 2> readyAt{}, freeAt{};  // FIFO model: cycle the bank's UNPACK ends / math releases it
    // The bank's values as the matmul's fidelity reduces them, made on first
    // use and kept until the bank is unpacked again.
    std::array<Tile, 2> reduced{};
    std::array<bool, 2> reducedValid{};
  };
  struct ThreadState {
    bool pending = false;   // first word of a +1 instruction taken
    uint32_t first = 0;     // that word
    uint32_t status = contract::kCopOk;
    std::string wait;       // set by a stall, cleared by the next non-stalled push
  };
  struct Outcome;  // internal execution result

  Outcome execute(uint32_t thread, uint32_t word, uint32_t arg);
  // FIFO model: when the accepted instruction starts and ends; returns the hart's wait.
  uint32_t schedule(uint32_t thread, uint32_t words, CopUnit unit, uint32_t cycles, uint64_t now);
  Outcome execSetConfig(uint32_t fields, uint32_t value);
  Outcome execUnpack(uint32_t fields, uint32_t address);
  Outcome execMath(uint32_t thread, uint32_t opcode, uint32_t fields, uint32_t arg);
  Outcome execPack(uint32_t fields, uint32_t address);
  Outcome execTopk(uint32_t fields, uint32_t arg);

  bool destIs32() const;
  bool destIsInt() const;
  void reserveDest(uint32_t tiles);                        // grow destF_/destI_ to hold `tiles`
  void readDest(uint32_t tile, Tile& out) const;           // values as floats
  void writeDestFloat(uint32_t tile, Tile& values);        // rounds to the dest format
  // L1 range check for data: [address, address + bytes) inside the data buffer space.
  bool dataRangeOk(uint64_t address, uint64_t bytes) const;

  std::span<uint8_t> l1_;
  CopCycleModel model_;
  std::array<uint32_t, contract::kConfigRegCount> config_{};
  SrcReg srcA_, srcB_;
  uint32_t destTiles16_;
  std::vector<Tile> destF_;     // destTiles16_ tiles: float dest formats (grown on use past 16)
  std::vector<int32_t> destI_;  // destTiles16_ / 2 x 1024: Int32 dest
  std::array<ThreadState, contract::kThreadCount> threads_{};
  CopCounters counters_;
  uint64_t progress_ = 0;
  std::vector<uint8_t> scratch_;  // one tile of bytes (untilize, l1 accumulate)

  // FIFO model state (reset() clears it). The executing instruction's source
  // dependency and the bank times it sets are noted by execUnpack/execMath.
  struct Queued { uint64_t start; uint32_t words; };
  std::array<std::vector<Queued>, contract::kThreadCount> fifo_{};  // in push order, not yet started
  std::array<uint32_t, contract::kThreadCount> fifoUsed_{};
  std::array<uint64_t, contract::kThreadCount> lastStart_{}, doneAt_{};
  std::array<uint64_t, 5> unitFree_{};  // by CopUnit
  uint64_t depAt_ = 0;
  uint64_t* readyOut_ = nullptr;
  std::array<uint64_t*, 2> freeOut_{};
};

} // namespace tessera::sim
