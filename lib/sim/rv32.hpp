// An RV32IM hart: the interpreter every TRISC thread of a simulated Tensix
// core runs on. Also usable on its own (unit tests, benchmarks).
//
// What it executes: RV32I + M; fence/fence.i as no-ops; ecall/ebreak halt the
// hart; csrrs rd, {cycle,cycleh,instret,instreth}, x0 (rdcycle & co). Every
// other SYSTEM/CSR encoding, every compressed or unknown encoding is an
// illegal-instruction fault. Loads and stores must be naturally aligned (no
// misaligned emulation): a misaligned access is a fault, not a trap handler.
//
// Speed: each 32-bit word of the code window is decoded once, on first fetch,
// into a Decoded record cached by address; run() dispatches on the cached op.
// The cache is valid because code is immutable while the hart runs: stores by
// the hart into its write-protected range (Bus::protect*) are faults, and the
// host must call invalidateDecodeCache() (or reset()) after changing code.
//
// Memory (the Bus): byte-addressed L1 from 0, a private local memory window,
// and an MMIO window served by an MmioDevice. Anything else faults.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tessera::sim {

class Hart;

// Why an instruction did not complete. Stable spellings: faultKindName().
enum class FaultKind : uint8_t {
  None,
  IllegalInstruction, // unknown or unsupported encoding (Fault::word)
  MisalignedFetch,    // jump/branch target not 4-byte aligned (Fault::address = target)
  MisalignedLoad,     // address not a multiple of the access size
  MisalignedStore,
  FetchAccessFault,   // pc outside the hart's code window
  LoadAccessFault,    // address outside L1, local memory and MMIO, or no such MMIO register
  StoreAccessFault,
  CodeWrite,          // store into the write-protected code range
  DeviceFault,        // the MMIO device refused the access with a code (Fault::code)
};
const char* faultKindName(FaultKind kind);  // e.g. "misaligned-load"

struct Fault {
  FaultKind kind = FaultKind::None;
  uint32_t pc = 0;       // the faulting instruction
  uint32_t word = 0;     // its encoding (0 when the fetch itself failed)
  uint32_t address = 0;  // data address or jump target (not for illegal-instruction)
  uint32_t code = 0;     // DeviceFault: the device's code
};
// One line, e.g. "misaligned-load at pc 0x4010 (word 0x0020a103): address 0x20002".
std::string describeFault(const Fault& fault);

// Result of one MMIO access, returned by the device.
struct MmioResult {
  enum class Status : uint8_t {
    Ok,           // done; for loads `value` is the data read
    Stall,        // cannot complete now: the instruction does not retire, the hart stops (Stalled) and retries later
    Halt,         // stores only: done, and the hart halts with exit code `value`
    AccessFault,  // no such register, or the register does not allow this direction
    DeviceFault,  // the device refused the access; `value` is its fault code
  };
  Status status = Status::Ok;
  uint32_t value = 0;
  uint32_t extraCycles = 0;  // charged to the hart on top of the access itself

  static MmioResult ok(uint32_t v = 0, uint32_t cycles = 0) { return {Status::Ok, v, cycles}; }
  static MmioResult stall() { return {Status::Stall, 0, 0}; }
  static MmioResult halt(uint32_t exitCode) { return {Status::Halt, exitCode, 0}; }
  static MmioResult accessFault() { return {Status::AccessFault, 0, 0}; }
  static MmioResult deviceFault(uint32_t code) { return {Status::DeviceFault, code, 0}; }
};

// The MMIO window's registers. Accesses are 32-bit only (lw/sw); byte and
// half-word accesses in the window are access faults raised by the hart.
class MmioDevice {
public:
  virtual ~MmioDevice() = default;
  // `hart` gives the accessing hart's id, pc and cycle count (already
  // including all instructions before this one).
  virtual MmioResult load(const Hart& hart, uint32_t address) = 0;
  virtual MmioResult store(const Hart& hart, uint32_t address, uint32_t value) = 0;
};

// What the hart can reach. The spans must outlive the hart.
struct Bus {
  std::span<uint8_t> l1;               // mapped at 0; size a multiple of 4
  std::span<uint8_t> local;            // mapped at localBase; size a multiple of 4
  uint32_t localBase = 0xFFB00000;
  uint32_t mmioBase = 0xFFE00000;
  uint32_t mmioSize = 0x10000;
  MmioDevice* mmio = nullptr;          // null: every MMIO access is an access fault
  uint32_t codeBase = 0;               // fetch window in L1 (4-byte aligned); decoded once
  uint32_t codeSize = 0;
  uint32_t protectBase = 0;            // stores into [protectBase, +protectSize) fault (CodeWrite)
  uint32_t protectSize = 0;
};

// Cycle charges of the simple per-instruction model (docs/device-model.md).
struct CycleModel {
  uint32_t alu = 1;          // every instruction's base cost
  uint32_t l1Access = 2;     // load/store to L1
  uint32_t localAccess = 1;  // load/store to the private local memory
  uint32_t mmioAccess = 2;   // plus the device's extraCycles
  uint32_t mul = 2;          // mul, mulh, mulhsu, mulhu
  uint32_t div = 32;         // div, divu, rem, remu
  uint32_t takenBranch = 1;  // added to taken branches and jumps
};

enum class StopReason : uint8_t {
  Budget,   // instruction budget or cycle limit reached; run() again to continue
  Stalled,  // an MMIO access returned Stall; pc is at that instruction
  Halted,   // ecall, ebreak or an MMIO Halt; see HaltCause
  Faulted,  // see fault(); the hart stays faulted until reset()
};
enum class HaltCause : uint8_t { None, Ecall, Ebreak, Mmio };
const char* haltCauseName(HaltCause cause);  // "ecall", "ebreak", "mmio"

struct StopInfo {
  StopReason reason = StopReason::Budget;
  HaltCause halt = HaltCause::None;
  uint32_t exitCode = 0;     // Halted: a0 for ecall/ebreak, the stored value for an MMIO halt
  uint32_t stallAddress = 0; // Stalled: the MMIO address
};

class Hart {
public:
  static constexpr uint64_t kNoLimit = ~uint64_t{0};

  // Throws std::invalid_argument when the bus is inconsistent (code window
  // not inside L1 or misaligned, sizes not multiples of 4): a setup bug.
  Hart(uint32_t id, const Bus& bus, const CycleModel& model = {});

  // Zeroes the registers and counters, sets pc, clears halt/fault/stall
  // state and invalidates the decode cache.
  void reset(uint32_t pc);
  // Call after the host (not the hart) changes code memory.
  void invalidateDecodeCache();

  // Runs until `maxInstructions` more instructions retired (exactly), the
  // cycle count reached `cycleLimit` (checked after every branch and jump,
  // so a run may pass the limit by a few straight-line instructions), or the
  // hart stalls, halts or faults. A stalled hart retries its instruction on
  // the next run(). A halting instruction (ecall, ebreak, MMIO halt) retires
  // and pc() stays on it.
  StopInfo run(uint64_t maxInstructions, uint64_t cycleLimit = kNoLimit);

  uint32_t id() const { return id_; }
  uint32_t pc() const { return pc_; }
  void setPc(uint32_t pc) { pc_ = pc; }
  uint32_t reg(unsigned index) const { return index < 32 ? regs_[index] : 0; }
  void setReg(unsigned index, uint32_t value) {
    if (index != 0 && index < 32) regs_[index] = value;
  }
  uint64_t cycles() const { return cycles_; }
  // The core scheduler moves a waiting hart's clock forward.
  void advanceCyclesTo(uint64_t cycle) {
    if (cycle > cycles_) cycles_ = cycle;
  }
  uint64_t instructions() const { return instret_; }
  // Stores retired to L1 (not local memory, not MMIO): lets the core tell a
  // polling loop from one that communicates through L1.
  uint64_t l1Stores() const { return l1Stores_; }

  bool halted() const { return last_.reason == StopReason::Halted; }
  bool faulted() const { return last_.reason == StopReason::Faulted; }
  bool stalled() const { return last_.reason == StopReason::Stalled; }
  const StopInfo& lastStop() const { return last_; }
  const Fault& fault() const { return fault_; }

  // Decode of one word (exposed for tests and disassembly-like reports).
  // Returns false for an illegal encoding.
  static bool isLegal(uint32_t word);

  enum class Op : uint8_t;  // defined in rv32.cpp
  struct Decoded {
    Op op;
    uint8_t rd;   // 32 when the destination is x0 (a sink register)
    uint8_t rs1;
    uint8_t rs2;
    int32_t imm;
  };

private:
  bool raise(FaultKind kind, uint32_t pc, uint32_t address, uint32_t code = 0);
  uint32_t fetchWord(uint32_t pc) const;
  bool mmioLoad(uint32_t pc, uint32_t address, uint32_t& value, uint64_t& cycles);
  int mmioStore(uint32_t pc, uint32_t address, uint32_t value, uint64_t& cycles);

  uint32_t id_;
  Bus bus_;
  CycleModel model_;
  uint32_t regs_[33] = {};  // x0..x31 and a write sink for rd = x0
  uint32_t pc_ = 0;
  uint64_t cycles_ = 0;
  uint64_t instret_ = 0;
  uint64_t l1Stores_ = 0;
  StopInfo last_{};
  Fault fault_{};
  std::vector<Decoded> decoded_;
};

} // namespace tessera::sim
