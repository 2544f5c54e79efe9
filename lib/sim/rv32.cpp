#include "sim/rv32.hpp"

#include <bit>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace tessera::sim {

static_assert(std::endian::native == std::endian::little,
              "the simulator copies little-endian RV32 data with memcpy");

enum class Hart::Op : uint8_t {
  Undecoded = 0,  // cache slot not decoded yet
  FetchEnd,       // sentinel after the last slot: running off the code window
  Illegal,
  Lui, Auipc, Jal, Jalr,
  Beq, Bne, Blt, Bge, Bltu, Bgeu,
  Lb, Lh, Lw, Lbu, Lhu,
  Sb, Sh, Sw,
  Addi, Slti, Sltiu, Xori, Ori, Andi, Slli, Srli, Srai,
  Add, Sub, Sll, Slt, Sltu, Xor, Srl, Sra, Or, And,
  Mul, Mulh, Mulhsu, Mulhu, Div, Divu, Rem, Remu,
  Fence, Ecall, Ebreak,
  RdCycle, RdCycleH, RdInstret, RdInstretH,
};

namespace {

using Op = Hart::Op;
using Decoded = Hart::Decoded;

constexpr uint8_t kSink = 32;

int32_t immI(uint32_t w) { return static_cast<int32_t>(w) >> 20; }
int32_t immS(uint32_t w) { return (static_cast<int32_t>(w & 0xFE000000u) >> 20) | static_cast<int32_t>((w >> 7) & 0x1F); }
int32_t immB(uint32_t w) {
  uint32_t v = ((w >> 31) & 1) << 12 | ((w >> 7) & 1) << 11 | ((w >> 25) & 0x3F) << 5 | ((w >> 8) & 0xF) << 1;
  return static_cast<int32_t>(v << 19) >> 19;  // sign bit 12
}
int32_t immJ(uint32_t w) {
  uint32_t v = ((w >> 31) & 1) << 20 | ((w >> 12) & 0xFF) << 12 | ((w >> 20) & 1) << 11 | ((w >> 21) & 0x3FF) << 1;
  return static_cast<int32_t>(v << 11) >> 11;  // sign bit 20
}

Decoded decode(uint32_t w) {
  Decoded d{Op::Illegal, kSink, 0, 0, 0};
  const uint32_t opcode = w & 0x7F;
  const uint32_t rd = (w >> 7) & 0x1F;
  const uint32_t f3 = (w >> 12) & 7;
  const uint32_t rs1 = (w >> 15) & 0x1F;
  const uint32_t rs2 = (w >> 20) & 0x1F;
  const uint32_t f7 = w >> 25;
  d.rd = rd == 0 ? kSink : static_cast<uint8_t>(rd);
  d.rs1 = static_cast<uint8_t>(rs1);
  d.rs2 = static_cast<uint8_t>(rs2);
  auto illegal = [&] { return Decoded{Op::Illegal, kSink, 0, 0, 0}; };
  switch (opcode) {
  case 0x37: d.op = Op::Lui; d.imm = static_cast<int32_t>(w & 0xFFFFF000u); return d;
  case 0x17: d.op = Op::Auipc; d.imm = static_cast<int32_t>(w & 0xFFFFF000u); return d;
  case 0x6F: d.op = Op::Jal; d.imm = immJ(w); return d;
  case 0x67:
    if (f3 != 0) return illegal();
    d.op = Op::Jalr; d.imm = immI(w); return d;
  case 0x63: {
    static constexpr Op kBranch[8] = {Op::Beq, Op::Bne, Op::Illegal, Op::Illegal, Op::Blt, Op::Bge, Op::Bltu, Op::Bgeu};
    if (kBranch[f3] == Op::Illegal) return illegal();
    d.op = kBranch[f3]; d.imm = immB(w); return d;
  }
  case 0x03: {
    static constexpr Op kLoad[8] = {Op::Lb, Op::Lh, Op::Lw, Op::Illegal, Op::Lbu, Op::Lhu, Op::Illegal, Op::Illegal};
    if (kLoad[f3] == Op::Illegal) return illegal();
    d.op = kLoad[f3]; d.imm = immI(w); return d;
  }
  case 0x23: {
    static constexpr Op kStore[8] = {Op::Sb, Op::Sh, Op::Sw, Op::Illegal, Op::Illegal, Op::Illegal, Op::Illegal, Op::Illegal};
    if (kStore[f3] == Op::Illegal) return illegal();
    d.op = kStore[f3]; d.imm = immS(w); return d;
  }
  case 0x13: {
    d.imm = immI(w);
    switch (f3) {
    case 0: d.op = Op::Addi; return d;
    case 2: d.op = Op::Slti; return d;
    case 3: d.op = Op::Sltiu; return d;
    case 4: d.op = Op::Xori; return d;
    case 6: d.op = Op::Ori; return d;
    case 7: d.op = Op::Andi; return d;
    case 1:
      if (f7 != 0) return illegal();  // RV32: shamt[5] must be 0
      d.op = Op::Slli; d.imm = static_cast<int32_t>(rs2); return d;
    case 5:
      if (f7 != 0 && f7 != 0x20) return illegal();
      d.op = f7 ? Op::Srai : Op::Srli; d.imm = static_cast<int32_t>(rs2); return d;
    }
    return illegal();
  }
  case 0x33: {
    if (f7 == 0x01) {
      static constexpr Op kMulDiv[8] = {Op::Mul, Op::Mulh, Op::Mulhsu, Op::Mulhu, Op::Div, Op::Divu, Op::Rem, Op::Remu};
      d.op = kMulDiv[f3]; return d;
    }
    if (f7 == 0x00) {
      static constexpr Op kAlu[8] = {Op::Add, Op::Sll, Op::Slt, Op::Sltu, Op::Xor, Op::Srl, Op::Or, Op::And};
      d.op = kAlu[f3]; return d;
    }
    if (f7 == 0x20 && (f3 == 0 || f3 == 5)) { d.op = f3 == 0 ? Op::Sub : Op::Sra; return d; }
    return illegal();
  }
  case 0x0F:
    // fence (any pred/succ/fm) and fence.i: one hart, in-order memory, code
    // immutable during a run, so both are no-ops.
    if (f3 == 0 || f3 == 1) { d.op = Op::Fence; return d; }
    return illegal();
  case 0x73: {
    const uint32_t csr = w >> 20;
    if (f3 == 0) {
      if (rd != 0 || rs1 != 0) return illegal();
      if (csr == 0) { d.op = Op::Ecall; return d; }
      if (csr == 1) { d.op = Op::Ebreak; return d; }
      return illegal();
    }
    // Only csrrs rd, <counter>, x0: a read without side effects.
    if (f3 != 2 || rs1 != 0) return illegal();
    switch (csr) {
    case 0xC00: d.op = Op::RdCycle; return d;
    case 0xC80: d.op = Op::RdCycleH; return d;
    case 0xC02: d.op = Op::RdInstret; return d;
    case 0xC82: d.op = Op::RdInstretH; return d;
    }
    return illegal();
  }
  }
  return illegal();
}

// The decode cache is keyed by address, so pc-relative values can be made
// absolute once: auipc becomes lui of pc + imm, jal and branch immediates
// become target addresses.
Decoded decodeAt(uint32_t w, uint32_t pc) {
  Decoded d = decode(w);
  switch (d.op) {
  case Op::Auipc: d.op = Op::Lui; d.imm = static_cast<int32_t>(pc + static_cast<uint32_t>(d.imm)); break;
  case Op::Jal:
  case Op::Beq: case Op::Bne: case Op::Blt: case Op::Bge: case Op::Bltu: case Op::Bgeu:
    d.imm = static_cast<int32_t>(pc + static_cast<uint32_t>(d.imm));
    break;
  default: break;
  }
  return d;
}

uint32_t mulhSigned(uint32_t a, uint32_t b) {
  int64_t p = int64_t{static_cast<int32_t>(a)} * int64_t{static_cast<int32_t>(b)};
  return static_cast<uint32_t>(static_cast<uint64_t>(p) >> 32);
}
uint32_t mulhSignedUnsigned(uint32_t a, uint32_t b) {
  // |a| <= 2^31 and b < 2^32: the product fits in int64.
  int64_t p = int64_t{static_cast<int32_t>(a)} * static_cast<int64_t>(b);
  return static_cast<uint32_t>(static_cast<uint64_t>(p) >> 32);
}
uint32_t mulhUnsigned(uint32_t a, uint32_t b) { return static_cast<uint32_t>((uint64_t{a} * uint64_t{b}) >> 32); }
// Division results as the RISC-V M extension defines them: no traps.
uint32_t divSigned(uint32_t a, uint32_t b) {
  if (b == 0) return 0xFFFFFFFFu;
  if (a == 0x80000000u && b == 0xFFFFFFFFu) return a;
  return static_cast<uint32_t>(static_cast<int32_t>(a) / static_cast<int32_t>(b));
}
uint32_t remSigned(uint32_t a, uint32_t b) {
  if (b == 0) return a;
  if (a == 0x80000000u && b == 0xFFFFFFFFu) return 0;
  return static_cast<uint32_t>(static_cast<int32_t>(a) % static_cast<int32_t>(b));
}

} // namespace

const char* faultKindName(FaultKind kind) {
  switch (kind) {
  case FaultKind::None: return "none";
  case FaultKind::IllegalInstruction: return "illegal-instruction";
  case FaultKind::MisalignedFetch: return "misaligned-fetch";
  case FaultKind::MisalignedLoad: return "misaligned-load";
  case FaultKind::MisalignedStore: return "misaligned-store";
  case FaultKind::FetchAccessFault: return "fetch-access-fault";
  case FaultKind::LoadAccessFault: return "load-access-fault";
  case FaultKind::StoreAccessFault: return "store-access-fault";
  case FaultKind::CodeWrite: return "code-write";
  case FaultKind::DeviceFault: return "device-fault";
  }
  return "unknown";
}

const char* haltCauseName(HaltCause cause) {
  switch (cause) {
  case HaltCause::None: return "none";
  case HaltCause::Ecall: return "ecall";
  case HaltCause::Ebreak: return "ebreak";
  case HaltCause::Mmio: return "mmio";
  }
  return "unknown";
}

std::string describeFault(const Fault& f) {
  char buf[160];
  int n = std::snprintf(buf, sizeof buf, "%s at pc 0x%x", faultKindName(f.kind), f.pc);
  if (f.kind != FaultKind::FetchAccessFault)
    n += std::snprintf(buf + n, sizeof buf - n, " (word 0x%08x)", f.word);
  switch (f.kind) {
  case FaultKind::None:
  case FaultKind::IllegalInstruction:
  case FaultKind::FetchAccessFault: break;
  case FaultKind::MisalignedFetch: std::snprintf(buf + n, sizeof buf - n, ": target 0x%x", f.address); break;
  case FaultKind::DeviceFault:
    std::snprintf(buf + n, sizeof buf - n, ": address 0x%x, code %u", f.address, f.code);
    break;
  default: std::snprintf(buf + n, sizeof buf - n, ": address 0x%x", f.address); break;
  }
  return buf;
}

Hart::Hart(uint32_t id, const Bus& bus, const CycleModel& model) : id_(id), bus_(bus), model_(model) {
  if (bus.l1.size() % 4 != 0 || bus.local.size() % 4 != 0 || bus.l1.size() > 0xFFFFFFFCu)
    throw std::invalid_argument("rv32: memory sizes must be multiples of 4 bytes");
  if (bus.codeBase % 4 != 0 || bus.codeSize % 4 != 0 || bus.codeBase > bus.l1.size() ||
      bus.codeSize > bus.l1.size() - bus.codeBase)
    throw std::invalid_argument("rv32: the code window must be 4-byte aligned and inside L1");
  decoded_.assign(bus.codeSize / 4 + 1, Decoded{Op::Undecoded, kSink, 0, 0, 0});
  decoded_.back().op = Op::FetchEnd;
}

void Hart::reset(uint32_t pc) {
  std::memset(regs_, 0, sizeof regs_);
  pc_ = pc;
  cycles_ = 0;
  instret_ = 0;
  l1Stores_ = 0;
  last_ = StopInfo{};
  fault_ = Fault{};
  invalidateDecodeCache();
}

void Hart::invalidateDecodeCache() {
  std::fill(decoded_.begin(), decoded_.end() - 1, Decoded{Op::Undecoded, kSink, 0, 0, 0});
}

bool Hart::isLegal(uint32_t word) { return decode(word).op != Op::Illegal; }

uint32_t Hart::fetchWord(uint32_t pc) const {
  uint32_t w = 0;
  if (pc % 4 == 0 && pc < bus_.l1.size()) std::memcpy(&w, bus_.l1.data() + pc, 4);
  return w;
}

bool Hart::raise(FaultKind kind, uint32_t pc, uint32_t address, uint32_t code) {
  fault_ = Fault{kind, pc, kind == FaultKind::FetchAccessFault ? 0 : fetchWord(pc), address, code};
  last_ = StopInfo{StopReason::Faulted, HaltCause::None, 0, 0};
  return false;
}

// The MMIO paths are out of line: rare compared with L1 and local memory.
bool Hart::mmioLoad(uint32_t pc, uint32_t address, uint32_t& value, uint64_t& cycles) {
  if (!bus_.mmio) return raise(FaultKind::LoadAccessFault, pc, address);
  pc_ = pc;
  cycles_ = cycles;
  MmioResult r = bus_.mmio->load(*this, address);
  switch (r.status) {
  case MmioResult::Status::Ok:
    value = r.value;
    cycles += model_.mmioAccess + r.extraCycles;
    return true;
  case MmioResult::Status::Stall:
    last_ = StopInfo{StopReason::Stalled, HaltCause::None, 0, address};
    return false;
  case MmioResult::Status::DeviceFault: return raise(FaultKind::DeviceFault, pc, address, r.value);
  case MmioResult::Status::Halt:  // a halting load is a device bug; report it as a refused access
  case MmioResult::Status::AccessFault: break;
  }
  return raise(FaultKind::LoadAccessFault, pc, address);
}

// Returns 1 done, 0 stop (stall/fault, last_ set), 2 done and halt.
int Hart::mmioStore(uint32_t pc, uint32_t address, uint32_t value, uint64_t& cycles) {
  if (!bus_.mmio) return raise(FaultKind::StoreAccessFault, pc, address);
  pc_ = pc;
  cycles_ = cycles;
  MmioResult r = bus_.mmio->store(*this, address, value);
  switch (r.status) {
  case MmioResult::Status::Ok: cycles += model_.mmioAccess + r.extraCycles; return 1;
  case MmioResult::Status::Halt:
    cycles += model_.mmioAccess + r.extraCycles;
    last_ = StopInfo{StopReason::Halted, HaltCause::Mmio, r.value, 0};
    return 2;
  case MmioResult::Status::Stall: last_ = StopInfo{StopReason::Stalled, HaltCause::None, 0, address}; return 0;
  case MmioResult::Status::DeviceFault: return raise(FaultKind::DeviceFault, pc, address, r.value);
  case MmioResult::Status::AccessFault: break;
  }
  return raise(FaultKind::StoreAccessFault, pc, address);
}

StopInfo Hart::run(uint64_t maxInstructions, uint64_t cycleLimit) {
  if (last_.reason == StopReason::Halted || last_.reason == StopReason::Faulted) return last_;
  last_ = StopInfo{};
  if (maxInstructions == 0 || cycles_ >= cycleLimit) return last_;  // Budget
  const uint32_t codeBase = bus_.codeBase;
  const uint32_t codeSize = bus_.codeSize;
  if (pc_ % 4 != 0) {
    raise(FaultKind::MisalignedFetch, pc_, pc_);
    return last_;
  }
  if (pc_ - codeBase >= codeSize) {
    raise(FaultKind::FetchAccessFault, pc_, pc_);
    return last_;
  }

  // Locals: the compiler cannot keep members in registers across the byte
  // stores below (uint8_t may alias anything).
  uint32_t* const x = regs_;
  Decoded* const dcache = decoded_.data();
  uint8_t* const l1 = bus_.l1.data();
  const uint32_t l1Size = static_cast<uint32_t>(bus_.l1.size());
  uint8_t* const local = bus_.local.data();
  const uint32_t localBase = bus_.localBase;
  const uint32_t localSize = static_cast<uint32_t>(bus_.local.size());
  const uint32_t mmioBase = bus_.mmioBase;
  const uint32_t mmioSize = bus_.mmioSize;
  const uint32_t protectBase = bus_.protectBase;
  const uint32_t protectSize = bus_.protectSize;
  const CycleModel m = model_;

  // The pc is implicit: ip points at the current instruction's cache slot.
  // Control flow checks its target; running off the end of the window hits
  // the FetchEnd sentinel slot.
  Decoded* ip = dcache + ((pc_ - codeBase) >> 2);
  auto pcOf = [&](const Decoded* p) { return codeBase + static_cast<uint32_t>(p - dcache) * 4; };
  uint64_t cycles = cycles_;
  uint64_t left = maxInstructions;  // instructions this call may still retire
  const uint64_t instretStart = instret_;
  bool outside = false;             // stopped on a jump out of the window
  uint32_t outsidePc = 0;
  uint32_t target = 0;

  // Loads/stores: L1 first (the common case), then local memory, then MMIO.
#define TESSERA_LOAD(TYPE, SIZE)                                                       \
  {                                                                                    \
    const uint32_t a = x[d.rs1] + static_cast<uint32_t>(d.imm);                        \
    if (a & (SIZE - 1)) {                                                              \
      raise(FaultKind::MisalignedLoad, pcOf(ip), a);                                   \
      goto stop;                                                                       \
    }                                                                                  \
    TYPE v;                                                                            \
    if (a < l1Size) {                                                                  \
      std::memcpy(&v, l1 + a, SIZE);                                                   \
      cycles += m.l1Access;                                                            \
    } else if (a - localBase < localSize) {                                            \
      std::memcpy(&v, local + (a - localBase), SIZE);                                  \
      cycles += m.localAccess;                                                         \
    } else if (SIZE == 4 && a - mmioBase < mmioSize) {                                 \
      uint32_t mv = 0;                                                                 \
      if (!mmioLoad(pcOf(ip), a, mv, cycles)) goto stop;                               \
      v = static_cast<TYPE>(mv);                                                       \
    } else {                                                                           \
      raise(FaultKind::LoadAccessFault, pcOf(ip), a);                                  \
      goto stop;                                                                       \
    }                                                                                  \
    x[d.rd] = static_cast<uint32_t>(v);                                                \
    ++ip;                                                                              \
    break;                                                                             \
  }
#define TESSERA_STORE(TYPE, SIZE)                                                      \
  {                                                                                    \
    const uint32_t a = x[d.rs1] + static_cast<uint32_t>(d.imm);                        \
    const TYPE v = static_cast<TYPE>(x[d.rs2]);                                        \
    if (a & (SIZE - 1)) {                                                              \
      raise(FaultKind::MisalignedStore, pcOf(ip), a);                                  \
      goto stop;                                                                       \
    }                                                                                  \
    if (a < l1Size) {                                                                  \
      if (a - protectBase < protectSize) {                                             \
        raise(FaultKind::CodeWrite, pcOf(ip), a);                                      \
        goto stop;                                                                     \
      }                                                                                \
      std::memcpy(l1 + a, &v, SIZE);                                                   \
      cycles += m.l1Access;                                                            \
      ++l1Stores_;                                                                     \
    } else if (a - localBase < localSize) {                                            \
      std::memcpy(local + (a - localBase), &v, SIZE);                                  \
      cycles += m.localAccess;                                                         \
    } else if (SIZE == 4 && a - mmioBase < mmioSize) {                                 \
      const int r = mmioStore(pcOf(ip), a, v, cycles);                                 \
      if (r == 0) goto stop;                                                           \
      if (r == 2) {                                                                    \
        --left; /* the halting store retires; pc stays on it */                        \
        goto stop;                                                                     \
      }                                                                                \
    } else {                                                                           \
      raise(FaultKind::StoreAccessFault, pcOf(ip), a);                                 \
      goto stop;                                                                       \
    }                                                                                  \
    ++ip;                                                                              \
    break;                                                                             \
  }
  // Taken branches and jumps: `target` is absolute.
#define TESSERA_JUMP_TO_TARGET()                                                       \
  {                                                                                    \
    if (target & 3) {                                                                  \
      raise(FaultKind::MisalignedFetch, pcOf(ip), target);                             \
      goto stop;                                                                       \
    }                                                                                  \
    cycles += m.alu + m.takenBranch;                                                   \
    if (target - codeBase >= codeSize) goto jumped_outside;                            \
    ip = dcache + ((target - codeBase) >> 2);                                          \
    goto control;                                                                      \
  }
#define TESSERA_BRANCH(COND)                                                           \
  {                                                                                    \
    if (COND) {                                                                        \
      target = static_cast<uint32_t>(d.imm);                                           \
      TESSERA_JUMP_TO_TARGET()                                                         \
    }                                                                                  \
    ++ip;                                                                              \
    cycles += m.alu;                                                                   \
    goto control;                                                                      \
  }
#define TESSERA_ALU(EXPR)                                                              \
  {                                                                                    \
    x[d.rd] = (EXPR);                                                                  \
    ++ip;                                                                              \
    cycles += m.alu;                                                                   \
    break;                                                                             \
  }

  for (;;) {
    Decoded& d = *ip;
    switch (d.op) {
    case Op::Undecoded: {
      const uint32_t pc = pcOf(ip);
      uint32_t w;
      std::memcpy(&w, l1 + pc, 4);
      d = decodeAt(w, pc);
      continue;  // dispatch the decoded slot
    }
    case Op::FetchEnd: raise(FaultKind::FetchAccessFault, pcOf(ip), pcOf(ip)); goto stop;
    case Op::Illegal:
    case Op::Auipc:  // decodeAt turns it into Lui
      raise(FaultKind::IllegalInstruction, pcOf(ip), pcOf(ip));
      goto stop;
    case Op::Lui: TESSERA_ALU(static_cast<uint32_t>(d.imm))
    case Op::Jal:
      target = static_cast<uint32_t>(d.imm);
      if (target & 3) {
        raise(FaultKind::MisalignedFetch, pcOf(ip), target);
        goto stop;
      }
      x[d.rd] = pcOf(ip) + 4;
      TESSERA_JUMP_TO_TARGET()
    case Op::Jalr:
      target = (x[d.rs1] + static_cast<uint32_t>(d.imm)) & ~1u;
      if (target & 3) {
        raise(FaultKind::MisalignedFetch, pcOf(ip), target);
        goto stop;
      }
      x[d.rd] = pcOf(ip) + 4;
      TESSERA_JUMP_TO_TARGET()
    case Op::Beq: TESSERA_BRANCH(x[d.rs1] == x[d.rs2])
    case Op::Bne: TESSERA_BRANCH(x[d.rs1] != x[d.rs2])
    case Op::Blt: TESSERA_BRANCH(static_cast<int32_t>(x[d.rs1]) < static_cast<int32_t>(x[d.rs2]))
    case Op::Bge: TESSERA_BRANCH(static_cast<int32_t>(x[d.rs1]) >= static_cast<int32_t>(x[d.rs2]))
    case Op::Bltu: TESSERA_BRANCH(x[d.rs1] < x[d.rs2])
    case Op::Bgeu: TESSERA_BRANCH(x[d.rs1] >= x[d.rs2])
    case Op::Lb: TESSERA_LOAD(int8_t, 1)
    case Op::Lh: TESSERA_LOAD(int16_t, 2)
    case Op::Lw: TESSERA_LOAD(uint32_t, 4)
    case Op::Lbu: TESSERA_LOAD(uint8_t, 1)
    case Op::Lhu: TESSERA_LOAD(uint16_t, 2)
    case Op::Sb: TESSERA_STORE(uint8_t, 1)
    case Op::Sh: TESSERA_STORE(uint16_t, 2)
    case Op::Sw: TESSERA_STORE(uint32_t, 4)
    case Op::Addi: TESSERA_ALU(x[d.rs1] + static_cast<uint32_t>(d.imm))
    case Op::Slti: TESSERA_ALU(static_cast<int32_t>(x[d.rs1]) < d.imm ? 1u : 0u)
    case Op::Sltiu: TESSERA_ALU(x[d.rs1] < static_cast<uint32_t>(d.imm) ? 1u : 0u)
    case Op::Xori: TESSERA_ALU(x[d.rs1] ^ static_cast<uint32_t>(d.imm))
    case Op::Ori: TESSERA_ALU(x[d.rs1] | static_cast<uint32_t>(d.imm))
    case Op::Andi: TESSERA_ALU(x[d.rs1] & static_cast<uint32_t>(d.imm))
    case Op::Slli: TESSERA_ALU(x[d.rs1] << d.imm)
    case Op::Srli: TESSERA_ALU(x[d.rs1] >> d.imm)
    case Op::Srai: TESSERA_ALU(static_cast<uint32_t>(static_cast<int32_t>(x[d.rs1]) >> d.imm))
    case Op::Add: TESSERA_ALU(x[d.rs1] + x[d.rs2])
    case Op::Sub: TESSERA_ALU(x[d.rs1] - x[d.rs2])
    case Op::Sll: TESSERA_ALU(x[d.rs1] << (x[d.rs2] & 31))
    case Op::Slt: TESSERA_ALU(static_cast<int32_t>(x[d.rs1]) < static_cast<int32_t>(x[d.rs2]) ? 1u : 0u)
    case Op::Sltu: TESSERA_ALU(x[d.rs1] < x[d.rs2] ? 1u : 0u)
    case Op::Xor: TESSERA_ALU(x[d.rs1] ^ x[d.rs2])
    case Op::Srl: TESSERA_ALU(x[d.rs1] >> (x[d.rs2] & 31))
    case Op::Sra: TESSERA_ALU(static_cast<uint32_t>(static_cast<int32_t>(x[d.rs1]) >> (x[d.rs2] & 31)))
    case Op::Or: TESSERA_ALU(x[d.rs1] | x[d.rs2])
    case Op::And: TESSERA_ALU(x[d.rs1] & x[d.rs2])
    case Op::Mul: cycles += m.mul - m.alu; TESSERA_ALU(x[d.rs1] * x[d.rs2])
    case Op::Mulh: cycles += m.mul - m.alu; TESSERA_ALU(mulhSigned(x[d.rs1], x[d.rs2]))
    case Op::Mulhsu: cycles += m.mul - m.alu; TESSERA_ALU(mulhSignedUnsigned(x[d.rs1], x[d.rs2]))
    case Op::Mulhu: cycles += m.mul - m.alu; TESSERA_ALU(mulhUnsigned(x[d.rs1], x[d.rs2]))
    case Op::Div: cycles += m.div - m.alu; TESSERA_ALU(divSigned(x[d.rs1], x[d.rs2]))
    case Op::Divu: cycles += m.div - m.alu; TESSERA_ALU(x[d.rs2] == 0 ? 0xFFFFFFFFu : x[d.rs1] / x[d.rs2])
    case Op::Rem: cycles += m.div - m.alu; TESSERA_ALU(remSigned(x[d.rs1], x[d.rs2]))
    case Op::Remu: cycles += m.div - m.alu; TESSERA_ALU(x[d.rs2] == 0 ? x[d.rs1] : x[d.rs1] % x[d.rs2])
    case Op::Fence: ++ip; cycles += m.alu; break;
    case Op::Ecall:
    case Op::Ebreak:
      // Halts retire; the pc stays on the halting instruction.
      cycles += m.alu;
      --left;
      last_ = StopInfo{StopReason::Halted, d.op == Op::Ecall ? HaltCause::Ecall : HaltCause::Ebreak, x[10], 0};
      goto stop;
    case Op::RdCycle: TESSERA_ALU(static_cast<uint32_t>(cycles))
    case Op::RdCycleH: TESSERA_ALU(static_cast<uint32_t>(cycles >> 32))
    case Op::RdInstret: TESSERA_ALU(static_cast<uint32_t>(instretStart + (maxInstructions - left)))
    case Op::RdInstretH: TESSERA_ALU(static_cast<uint32_t>((instretStart + (maxInstructions - left)) >> 32))
    default: __builtin_unreachable();
    }
    // Straight-line instructions only count against the budget; the cycle
    // limit is checked at control flow (a slice may overrun by a few
    // straight-line instructions, never by a loop).
    if (--left == 0) break;
    continue;
  control:
    if (--left == 0 || cycles >= cycleLimit) break;
  }
  last_ = StopInfo{StopReason::Budget, HaltCause::None, 0, 0};
  goto stop;
jumped_outside:
  // The jump retires; fetching at its target is the fault.
  --left;
  outside = true;
  outsidePc = target;
  raise(FaultKind::FetchAccessFault, target, target);
stop:
#undef TESSERA_LOAD
#undef TESSERA_STORE
#undef TESSERA_JUMP_TO_TARGET
#undef TESSERA_BRANCH
#undef TESSERA_ALU
  pc_ = outside ? outsidePc : pcOf(ip);
  cycles_ = cycles;
  instret_ = instretStart + (maxInstructions - left);
  return last_;
}

} // namespace tessera::sim
