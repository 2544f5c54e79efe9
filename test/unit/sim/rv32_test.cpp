// Unit tests of the RV32IM hart (lib/sim/rv32). Programs are hand-encoded
// instruction words (the assembly in each comment); expected values are
// worked out by hand from the RISC-V unprivileged spec (RV32I, M extension,
// Zicsr counters). A last test runs a C workload compiled by clang-14 and
// compares with the same C compiled into this binary.
#include "sim/rv32.hpp"

#include "llvm_tools.hpp"

#include "Inputs/rv32_workload.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <initializer_list>
#include <memory>
#include <vector>

using namespace tessera::sim;

namespace {

constexpr uint32_t kCode = 0x4000;       // code window [0x4000, 0x5000), write-protected
constexpr uint32_t kCodeSize = 0x1000;
constexpr uint32_t kL1Size = 64 * 1024;  // small L1: 0x10000 is already outside
constexpr uint32_t kLocal = 0xFFB00000;
constexpr uint32_t kEcall = 0x00000073;

struct Machine {
  std::vector<uint8_t> l1 = std::vector<uint8_t>(kL1Size, 0);
  std::vector<uint8_t> local = std::vector<uint8_t>(4096, 0);
  std::unique_ptr<Hart> hart;

  explicit Machine(std::initializer_list<uint32_t> words, MmioDevice* device = nullptr) {
    Bus bus;
    bus.l1 = l1;
    bus.local = local;
    bus.localBase = kLocal;
    bus.mmio = device;
    bus.codeBase = kCode;
    bus.codeSize = kCodeSize;
    bus.protectBase = kCode;
    bus.protectSize = kCodeSize;
    hart = std::make_unique<Hart>(0, bus);
    load(words);
    hart->reset(kCode);
  }
  void load(std::initializer_list<uint32_t> words) {
    uint32_t at = kCode;
    for (uint32_t w : words) {
      std::memcpy(l1.data() + at, &w, 4);
      at += 4;
    }
  }
  StopInfo run(uint64_t budget = 100000) { return hart->run(budget); }
  uint32_t x(unsigned i) const { return hart->reg(i); }
  uint32_t word(uint32_t address) const {
    uint32_t v;
    std::memcpy(&v, l1.data() + address, 4);
    return v;
  }
  uint32_t localWord(uint32_t offset) const {
    uint32_t v;
    std::memcpy(&v, local.data() + offset, 4);
    return v;
  }
};

void requireEcall(const StopInfo& s) {
  REQUIRE(s.reason == StopReason::Halted);
  REQUIRE(s.halt == HaltCause::Ecall);
}

} // namespace

TEST_CASE("rv32: immediate ALU instructions, lui and auipc", "[rv32]") {
  Machine m({
      0x00500093,  // addi  x1, x0, 5
      0xFFF00113,  // addi  x2, x0, -1
      0x00012193,  // slti  x3, x2, 0          -1 < 0 signed
      0x00113213,  // sltiu x4, x2, 1          0xFFFFFFFF < 1 unsigned? no
      0xFFF03293,  // sltiu x5, x0, -1         0 < 0xFFFFFFFF (immediate sign-extended, compared unsigned)
      0xFFF0C313,  // xori  x6, x1, -1         ~5
      0x0F00E393,  // ori   x7, x1, 0xF0
      0x7FF17413,  // andi  x8, x2, 0x7FF
      0x01F09493,  // slli  x9, x1, 31
      0x01C15513,  // srli  x10, x2, 28        zero fill
      0x41F4D593,  // srai  x11, x9, 31        sign fill
      0xABCDE637,  // lui   x12, 0xABCDE
      0x00001697,  // auipc x13, 1             pc 0x4030 + 0x1000
      kEcall,
  });
  requireEcall(m.run());
  CHECK(m.x(1) == 5);
  CHECK(m.x(2) == 0xFFFFFFFFu);
  CHECK(m.x(3) == 1);
  CHECK(m.x(4) == 0);
  CHECK(m.x(5) == 1);
  CHECK(m.x(6) == 0xFFFFFFFAu);
  CHECK(m.x(7) == 0xF5);
  CHECK(m.x(8) == 0x7FF);
  CHECK(m.x(9) == 0x80000000u);
  CHECK(m.x(10) == 0xF);
  CHECK(m.x(11) == 0xFFFFFFFFu);
  CHECK(m.x(12) == 0xABCDE000u);
  CHECK(m.x(13) == 0x5030);
  CHECK(m.hart->instructions() == 14);
  CHECK(m.hart->cycles() == 14);  // one cycle each
  CHECK(m.hart->pc() == 0x4034);  // a halted hart stays on its ecall
}

TEST_CASE("rv32: register-register ALU instructions", "[rv32]") {
  Machine m({
      0x800000B7,  // lui  x1, 0x80000         x1 = INT_MIN
      0xFFF00113,  // addi x2, x0, -1
      0x00300193,  // addi x3, x0, 3
      0x00208233,  // add  x4, x1, x2          wraps to 0x7FFFFFFF
      0x402182B3,  // sub  x5, x3, x2          3 - (-1)
      0x00319333,  // sll  x6, x3, x3          3 << 3
      0x0030A3B3,  // slt  x7, x1, x3          INT_MIN < 3 signed
      0x0030B433,  // sltu x8, x1, x3          0x80000000 < 3 unsigned? no
      0x0020C4B3,  // xor  x9, x1, x2
      0x0030D533,  // srl  x10, x1, x3
      0x4030D5B3,  // sra  x11, x1, x3
      0x0030E633,  // or   x12, x1, x3
      0x003176B3,  // and  x13, x2, x3
      0x02100713,  // addi x14, x0, 33
      0x00E197B3,  // sll  x15, x3, x14        shift amount is x14 & 31 = 1
      0x00700013,  // addi x0, x0, 7           x0 stays 0
      0x00000833,  // add  x16, x0, x0
      kEcall,
  });
  requireEcall(m.run());
  CHECK(m.x(4) == 0x7FFFFFFFu);
  CHECK(m.x(5) == 4);
  CHECK(m.x(6) == 24);
  CHECK(m.x(7) == 1);
  CHECK(m.x(8) == 0);
  CHECK(m.x(9) == 0x7FFFFFFFu);
  CHECK(m.x(10) == 0x10000000u);
  CHECK(m.x(11) == 0xF0000000u);
  CHECK(m.x(12) == 0x80000003u);
  CHECK(m.x(13) == 3);
  CHECK(m.x(15) == 6);
  CHECK(m.x(0) == 0);
  CHECK(m.x(16) == 0);
}

TEST_CASE("rv32: loads sign- or zero-extend, stores write little-endian", "[rv32]") {
  Machine m({
      0x10000093,  // addi x1, x0, 0x100
      0x80820137,  // lui  x2, 0x80820
      0xF8010113,  // addi x2, x2, -128        x2 = 0x8081FF80
      0x0020A023,  // sw   x2, 0(x1)           bytes at 0x100: 80 FF 81 80
      0x00008183,  // lb   x3, 0(x1)           0x80 -> 0xFFFFFF80
      0x0000C203,  // lbu  x4, 0(x1)           0x80
      0x00209283,  // lh   x5, 2(x1)           0x8081 -> 0xFFFF8081
      0x0020D303,  // lhu  x6, 2(x1)           0x8081
      0x00108383,  // lb   x7, 1(x1)           0xFF -> 0xFFFFFFFF
      0x0000A403,  // lw   x8, 0(x1)
      0x00308223,  // sb   x3, 4(x1)           byte 0x80 at 0x104
      0x00209323,  // sh   x2, 6(x1)           80 FF at 0x106
      0x0040A483,  // lw   x9, 4(x1)           80 00 80 FF -> 0xFF800080
      0xFE20AE23,  // sw   x2, -4(x1)          negative offset: 0xFC
      0xFFC0A503,  // lw   x10, -4(x1)
      0xFFB005B7,  // lui  x11, 0xFFB00        local memory
      0x0025A423,  // sw   x2, 8(x11)
      0x0085A603,  // lw   x12, 8(x11)
      kEcall,
  });
  requireEcall(m.run());
  CHECK(m.word(0x100) == 0x8081FF80u);
  CHECK(m.l1[0x100] == 0x80);
  CHECK(m.l1[0x103] == 0x80);
  CHECK(m.x(3) == 0xFFFFFF80u);
  CHECK(m.x(4) == 0x80);
  CHECK(m.x(5) == 0xFFFF8081u);
  CHECK(m.x(6) == 0x8081);
  CHECK(m.x(7) == 0xFFFFFFFFu);
  CHECK(m.x(8) == 0x8081FF80u);
  CHECK(m.x(9) == 0xFF800080u);
  CHECK(m.word(0xFC) == 0x8081FF80u);
  CHECK(m.x(10) == 0x8081FF80u);
  CHECK(m.localWord(8) == 0x8081FF80u);
  CHECK(m.x(12) == 0x8081FF80u);
  // Cycle model: 12 L1 accesses at 2, 2 local accesses at 1, 5 others at 1.
  CHECK(m.hart->cycles() == 12 * 2 + 2 * 1 + 5 * 1);
  CHECK(m.hart->l1Stores() == 4);
}

TEST_CASE("rv32: a counted loop, and its cycle count", "[rv32]") {
  Machine m({
      0x00A00093,  // 0x00 addi x1, x0, 10
      0x00000113,  // 0x04 addi x2, x0, 0
      0x00110133,  // 0x08 add  x2, x2, x1
      0xFFF08093,  // 0x0C addi x1, x1, -1
      0xFE009CE3,  // 0x10 bne  x1, x0, -8
      kEcall,      // 0x14
  });
  requireEcall(m.run());
  CHECK(m.x(2) == 55);
  CHECK(m.hart->instructions() == 2 + 3 * 10 + 1);
  // 2 + 10 x (add + addi) + 9 taken bne (2 cycles) + 1 not taken + ecall.
  CHECK(m.hart->cycles() == 2 + 20 + 18 + 1 + 1);
}

TEST_CASE("rv32: signed and unsigned branches", "[rv32]") {
  Machine m({
      0xFFF00093,  // 0x00 addi x1, x0, -1
      0x00100113,  // 0x04 addi x2, x0, 1
      0x00000513,  // 0x08 addi x10, x0, 0
      0x0020C463,  // 0x0C blt  x1, x2, +8     -1 < 1: taken
      0x00156513,  // 0x10 ori  x10, x10, 1    skipped
      0x0020E463,  // 0x14 bltu x1, x2, +8     0xFFFFFFFF < 1: not taken
      0x00256513,  // 0x18 ori  x10, x10, 2
      0x00115463,  // 0x1C bge  x2, x1, +8     taken
      0x00456513,  // 0x20 ori  x10, x10, 4    skipped
      0x0020F463,  // 0x24 bgeu x1, x2, +8     taken
      0x00856513,  // 0x28 ori  x10, x10, 8    skipped
      0x00208463,  // 0x2C beq  x1, x2, +8     not taken
      0x01056513,  // 0x30 ori  x10, x10, 16
      0x00109463,  // 0x34 bne  x1, x1, +8     not taken
      0x02056513,  // 0x38 ori  x10, x10, 32
      kEcall,      // 0x3C exit code = a0
  });
  StopInfo s = m.run();
  requireEcall(s);
  CHECK(s.exitCode == (2 | 16 | 32));
}

TEST_CASE("rv32: jal and jalr link and jump", "[rv32]") {
  SECTION("call and return") {
    Machine m({
        0x00C000EF,  // 0x00 jal  x1, +12      call 0x0C
        0x00700293,  // 0x04 addi x5, x0, 7    after the return
        kEcall,      // 0x08
        0x00008313,  // 0x0C addi x6, x1, 0
        0x00008067,  // 0x10 jalr x0, 0(x1)    return
    });
    requireEcall(m.run());
    CHECK(m.x(5) == 7);
    CHECK(m.x(6) == 0x4004);
    CHECK(m.hart->pc() == 0x4008);
  }
  SECTION("jalr clears bit 0 of the target") {
    Machine m({
        0x00000097,  // 0x00 auipc x1, 0
        0x00D08167,  // 0x04 jalr  x2, 13(x1)  (0x400D & ~1) = 0x400C
        kEcall,      // 0x08 skipped
        0x06300513,  // 0x0C addi  x10, x0, 99
        kEcall,      // 0x10
    });
    StopInfo s = m.run();
    requireEcall(s);
    CHECK(s.exitCode == 99);
    CHECK(m.x(2) == 0x4008);
  }
  SECTION("jalr with rd = rs1 uses the old value as the target") {
    Machine m({
        0x00000097,  // 0x00 auipc x1, 0
        0x01008093,  // 0x04 addi  x1, x1, 16
        0x000080E7,  // 0x08 jalr  x1, 0(x1)   to 0x4010, x1 = 0x400C
        kEcall,      // 0x0C skipped
        kEcall,      // 0x10
    });
    requireEcall(m.run());
    CHECK(m.hart->pc() == 0x4010);
    CHECK(m.x(1) == 0x400C);
  }
}

TEST_CASE("rv32: M extension", "[rv32]") {
  Machine m({
      0x800000B7,  // lui    x1, 0x80000      INT_MIN
      0xFFF00113,  // addi   x2, x0, -1
      0x00700193,  // addi   x3, x0, 7
      0xFFE00213,  // addi   x4, x0, -2
      0x024182B3,  // mul    x5, x3, x4       -14
      0x02109333,  // mulh   x6, x1, x1       (-2^31)^2 = 2^62: high word 0x40000000
      0x022133B3,  // mulhu  x7, x2, x2       (2^32-1)^2 = 0xFFFFFFFE_00000001
      0x02212433,  // mulhsu x8, x2, x2       -1 x (2^32-1) = 0xFFFFFFFF_00000001
      0x023114B3,  // mulh   x9, x2, x3       -7: high word all ones
      0x0230B533,  // mulhu  x10, x1, x3      0x80000000 x 7 = 0x3_80000000
      0x023225B3,  // mulhsu x11, x4, x3      -2 x 7 = -14: high word all ones
      0x0201C633,  // div    x12, x3, x0      by zero: -1
      0x0201D6B3,  // divu   x13, x3, x0      by zero: 2^32-1
      0x0201E733,  // rem    x14, x3, x0      by zero: the dividend
      0x0201F7B3,  // remu   x15, x3, x0      by zero: the dividend
      0x0220C833,  // div    x16, x1, x2      INT_MIN / -1 overflows: INT_MIN
      0x0220E8B3,  // rem    x17, x1, x2      INT_MIN % -1: 0
      0x0241C933,  // div    x18, x3, x4      7 / -2 = -3 (toward zero)
      0x0241E9B3,  // rem    x19, x3, x4      7 % -2 = 1 (sign of the dividend)
      0x02325A33,  // divu   x20, x4, x3      0xFFFFFFFE / 7 = 613566756
      0x02327AB3,  // remu   x21, x4, x3      0xFFFFFFFE - 613566756 x 7 = 2
      0x02326B33,  // rem    x22, x4, x3      -2 % 7 = -2
      kEcall,
  });
  requireEcall(m.run());
  CHECK(m.x(5) == static_cast<uint32_t>(-14));
  CHECK(m.x(6) == 0x40000000u);
  CHECK(m.x(7) == 0xFFFFFFFEu);
  CHECK(m.x(8) == 0xFFFFFFFFu);
  CHECK(m.x(9) == 0xFFFFFFFFu);
  CHECK(m.x(10) == 3);
  CHECK(m.x(11) == 0xFFFFFFFFu);
  CHECK(m.x(12) == 0xFFFFFFFFu);
  CHECK(m.x(13) == 0xFFFFFFFFu);
  CHECK(m.x(14) == 7);
  CHECK(m.x(15) == 7);
  CHECK(m.x(16) == 0x80000000u);
  CHECK(m.x(17) == 0);
  CHECK(m.x(18) == static_cast<uint32_t>(-3));
  CHECK(m.x(19) == 1);
  CHECK(m.x(20) == 613566756u);
  CHECK(m.x(21) == 2);
  CHECK(m.x(22) == static_cast<uint32_t>(-2));
  // 4 setup + ecall at 1, 7 multiplies at 2, 11 divisions at 32.
  CHECK(m.hart->cycles() == 5 + 7 * 2 + 11 * 32);
}

TEST_CASE("rv32: counters, fences and system instructions", "[rv32]") {
  SECTION("rdcycle, rdinstret and their high halves") {
    Machine m({
        0x00100293,  // addi   x5, x0, 1
        0x0FF0000F,  // fence  iorw, iorw      no-op
        0x0000100F,  // fence.i                no-op
        0xC00020F3,  // csrrs  x1, cycle, x0   3 cycles before it
        0xC0202173,  // csrrs  x2, instret, x0 4 retired before it
        0xC80021F3,  // csrrs  x3, cycleh, x0
        0xC8202273,  // csrrs  x4, instreth, x0
        kEcall,
    });
    requireEcall(m.run());
    CHECK(m.x(1) == 3);
    CHECK(m.x(2) == 4);
    CHECK(m.x(3) == 0);
    CHECK(m.x(4) == 0);
  }
  SECTION("ebreak halts with its own cause") {
    Machine m({0x00100073});  // ebreak
    StopInfo s = m.run();
    CHECK(s.reason == StopReason::Halted);
    CHECK(s.halt == HaltCause::Ebreak);
    CHECK(std::string(haltCauseName(s.halt)) == "ebreak");
  }
  SECTION("other CSR and system encodings are illegal") {
    for (uint32_t word : {0xC00010F3u,    // csrrw x1, cycle, x0
                          0xC00120F3u,    // csrrs x1, cycle, x2 (a write)
                          0x300020F3u,    // csrrs x1, mstatus, x0
                          0x30200073u,    // mret
                          0x10500073u}) { // wfi
      INFO("word " << std::hex << word);
      Machine m({word});
      StopInfo s = m.run();
      REQUIRE(s.reason == StopReason::Faulted);
      CHECK(m.hart->fault().kind == FaultKind::IllegalInstruction);
      CHECK(m.hart->fault().word == word);
      CHECK_FALSE(Hart::isLegal(word));
    }
  }
}

TEST_CASE("rv32: faults are named, with pc and address", "[rv32]") {
  auto faultOf = [](std::initializer_list<uint32_t> words) {
    Machine m(words);
    StopInfo s = m.run();
    REQUIRE(s.reason == StopReason::Faulted);
    return m.hart->fault();
  };
  SECTION("illegal encodings") {
    for (uint32_t word : {0x00000000u, 0xFFFFFFFFu, 0x00000001u /* compressed */, 0x0000700Bu /* custom-0 */,
                          0x0000300Fu /* fence funct3 3 */, 0x02001013u /* slli with shamt[5] */}) {
      INFO("word " << std::hex << word);
      Fault f = faultOf({word});
      CHECK(f.kind == FaultKind::IllegalInstruction);
      CHECK(f.pc == kCode);
      CHECK(f.word == word);
    }
  }
  SECTION("misaligned load, store and jump targets") {
    Fault f = faultOf({0x10100093,    // addi x1, x0, 0x101
                       0x0000A103});  // lw   x2, 0(x1)
    CHECK(f.kind == FaultKind::MisalignedLoad);
    CHECK(f.pc == 0x4004);
    CHECK(f.address == 0x101);
    CHECK(f.word == 0x0000A103);
    CHECK(describeFault(f) == "misaligned-load at pc 0x4004 (word 0x0000a103): address 0x101");

    f = faultOf({0x10100093, 0x00009103});  // lh x2, 0(x1) at an odd address
    CHECK(f.kind == FaultKind::MisalignedLoad);

    f = faultOf({0x00002123});  // sw x0, 2(x0)
    CHECK(f.kind == FaultKind::MisalignedStore);
    CHECK(f.address == 2);

    f = faultOf({0x00000363});  // beq x0, x0, +6: taken to 0x4006
    CHECK(f.kind == FaultKind::MisalignedFetch);
    CHECK(f.pc == kCode);
    CHECK(f.address == 0x4006);

    f = faultOf({0x00000097,    // auipc x1, 0
                 0x00208067});  // jalr  x0, 2(x1)
    CHECK(f.kind == FaultKind::MisalignedFetch);
    CHECK(f.address == 0x4002);
  }
  SECTION("a branch not taken never checks its target") {
    Machine m({0x00001363, kEcall});  // bne x0, x0, +6
    requireEcall(m.run());
  }
  SECTION("accesses outside L1, local memory and MMIO") {
    Fault f = faultOf({0x000100B7, 0x0000A103});  // lui x1, 0x10 (L1 end); lw x2, 0(x1)
    CHECK(f.kind == FaultKind::LoadAccessFault);
    CHECK(f.address == kL1Size);

    f = faultOf({0x100000B7, 0x0020A023});  // lui x1, 0x10000; sw x2, 0(x1)
    CHECK(f.kind == FaultKind::StoreAccessFault);
    CHECK(f.address == 0x10000000u);

    f = faultOf({0xFFB010B7, 0x0000A103});  // lui x1, 0xFFB01: one past local memory
    CHECK(f.kind == FaultKind::LoadAccessFault);
    CHECK(f.address == 0xFFB01000u);

    f = faultOf({0xFFE000B7, 0x0000A103});  // MMIO window without a device
    CHECK(f.kind == FaultKind::LoadAccessFault);
  }
  SECTION("fetch outside the code window") {
    Fault f = faultOf({0x10000093, 0x00008067});  // addi x1, x0, 0x100; jalr x0, 0(x1)
    CHECK(f.kind == FaultKind::FetchAccessFault);
    CHECK(f.pc == 0x100);
  }
  SECTION("stores into the code window") {
    Fault f = faultOf({0x000040B7,    // lui x1, 4
                       0x0000A023});  // sw  x0, 0(x1)
    CHECK(f.kind == FaultKind::CodeWrite);
    CHECK(f.address == 0x4000);
  }
  SECTION("a faulting instruction has no effect, and the fault sticks") {
    Machine m({0x00500093,    // addi x1, x0, 5
               0x0000A083});  // lw   x1, 0(x1)   misaligned: x1 keeps 5
    REQUIRE(m.run().reason == StopReason::Faulted);
    CHECK(m.x(1) == 5);
    CHECK(m.hart->instructions() == 1);
    CHECK(m.run().reason == StopReason::Faulted);
    CHECK(m.hart->instructions() == 1);
  }
}

namespace {

// An MMIO device: the store to 0xFFE00000 stalls `stalls` times before it is
// taken; 0xFFE00010 reads 42 (costing 10 extra cycles); 0xFFE03000 halts;
// 0xFFE00008 refuses with code 5; everything else is an access fault.
struct FakeDevice : MmioDevice {
  int stalls = 2;
  std::vector<uint32_t> stored;
  MmioResult load(const Hart&, uint32_t a) override {
    if (a == 0xFFE00010) return MmioResult::ok(42, 10);
    return MmioResult::accessFault();
  }
  MmioResult store(const Hart&, uint32_t a, uint32_t v) override {
    if (a == 0xFFE00000) {
      if (stalls > 0) {
        --stalls;
        return MmioResult::stall();
      }
      stored.push_back(v);
      return MmioResult::ok();
    }
    if (a == 0xFFE03000) return MmioResult::halt(v);
    if (a == 0xFFE00008) return MmioResult::deviceFault(5);
    return MmioResult::accessFault();
  }
};

} // namespace

TEST_CASE("rv32: MMIO stores can stall; the hart retries them", "[rv32]") {
  FakeDevice dev;
  Machine m({
                0xFFE000B7,  // lui  x1, 0xFFE00
                0x00500113,  // addi x2, x0, 5
                0x0020A023,  // sw   x2, 0(x1)     stalls twice
                0x0100A183,  // lw   x3, 16(x1)
                kEcall,
            },
            &dev);
  StopInfo s = m.run();
  CHECK(s.reason == StopReason::Stalled);
  CHECK(s.stallAddress == 0xFFE00000u);
  CHECK(m.hart->pc() == 0x4008);
  CHECK(m.hart->instructions() == 2);
  CHECK(m.hart->stalled());
  CHECK(m.run().reason == StopReason::Stalled);
  CHECK(dev.stored.empty());
  requireEcall(m.run());
  CHECK(dev.stored == std::vector<uint32_t>{5});
  CHECK(m.x(3) == 42);
  // lui, addi, ecall at 1; the store and the load at 2; the load's extra 10.
  CHECK(m.hart->cycles() == 3 + 2 + 2 + 10);
}

TEST_CASE("rv32: MMIO halts, device faults and sub-word MMIO accesses", "[rv32]") {
  FakeDevice dev;
  SECTION("halt with the stored exit code") {
    Machine m({0xFFE030B7,    // lui  x1, 0xFFE03
               0x00700113,    // addi x2, x0, 7
               0x0020A023},   // sw   x2, 0(x1)
              &dev);
    StopInfo s = m.run();
    CHECK(s.reason == StopReason::Halted);
    CHECK(s.halt == HaltCause::Mmio);
    CHECK(s.exitCode == 7);
    CHECK(m.hart->instructions() == 3);
    CHECK(m.hart->pc() == 0x4008);
    CHECK(m.run().reason == StopReason::Halted);  // stays halted
  }
  SECTION("device fault") {
    Machine m({0xFFE000B7, 0x0020A423}, &dev);  // lui x1, 0xFFE00; sw x2, 8(x1)
    REQUIRE(m.run().reason == StopReason::Faulted);
    CHECK(m.hart->fault().kind == FaultKind::DeviceFault);
    CHECK(m.hart->fault().code == 5);
    CHECK(m.hart->fault().address == 0xFFE00008u);
  }
  SECTION("byte loads in the MMIO window are access faults") {
    Machine m({0xFFE000B7, 0x01008183}, &dev);  // lui x1, 0xFFE00; lb x3, 16(x1)
    REQUIRE(m.run().reason == StopReason::Faulted);
    CHECK(m.hart->fault().kind == FaultKind::LoadAccessFault);
  }
}

TEST_CASE("rv32: budgets and cycle limits stop and resume", "[rv32]") {
  Machine m({0x00A00093, 0x00000113, 0x00110133, 0xFFF08093, 0xFE009CE3, kEcall});  // the counted loop
  StopInfo s = m.hart->run(5);
  CHECK(s.reason == StopReason::Budget);
  CHECK(m.hart->instructions() == 5);
  s = m.hart->run(Hart::kNoLimit, 20);
  CHECK(s.reason == StopReason::Budget);
  // The limit is checked after control flow: at most one loop body (add,
  // addi, taken bne: 4 cycles) past it.
  CHECK(m.hart->cycles() >= 20);
  CHECK(m.hart->cycles() < 20 + 4);
  CHECK(m.hart->pc() == 0x4008);  // stopped right after the bne
  requireEcall(m.run());
  CHECK(m.x(2) == 55);
}

TEST_CASE("rv32: the decode cache is rebuilt after reset", "[rv32]") {
  Machine m({0x00100093, kEcall});  // addi x1, x0, 1
  requireEcall(m.run());
  CHECK(m.x(1) == 1);
  m.load({0x00200093, kEcall});  // addi x1, x0, 2
  m.hart->reset(kCode);
  requireEcall(m.run());
  CHECK(m.x(1) == 2);
}

TEST_CASE("rv32: bad bus configurations are rejected", "[rv32]") {
  std::vector<uint8_t> l1(0x1000);
  Bus bus;
  bus.l1 = l1;
  bus.codeBase = 0x800;
  bus.codeSize = 0x1000;  // runs past L1
  CHECK_THROWS_AS(Hart(0, bus), std::invalid_argument);
  bus.codeSize = 0x100;
  bus.codeBase = 0x802;  // misaligned
  CHECK_THROWS_AS(Hart(0, bus), std::invalid_argument);
}

TEST_CASE("rv32: a C workload compiled by clang-14 matches the host", "[rv32][clang]") {
  using namespace sim_test;
  requireTool(kClang, "clang-14");
  requireTool(kLld, "ld.lld-14");
  requireTool(kObjcopy, "llvm-objcopy-14");
  TempDir dir;
  const std::string obj = dir.file("program.o"), elf = dir.file("program.elf");
  // -mno-relax: LLD 14 does not relax, and the addresses are absolute anyway.
  run(std::string(kClang) +
      " --target=riscv32-unknown-elf -march=rv32im -mabi=ilp32 -ffreestanding -nostdlib -O2 -mno-relax -c '" +
      input("rv32_program.c") + "' -o '" + obj + "'");
  run(std::string(kLld) + " -T '" + input("rv32_test.ld") + "' '" + obj + "' -o '" + elf + "'");
  run(std::string(kObjcopy) + " -O binary --only-section=.text '" + elf + "' '" + dir.file("code.bin") + "'");
  run(std::string(kObjcopy) + " -O binary --only-section=.data '" + elf + "' '" + dir.file("data.bin") + "'");
  const std::vector<uint8_t> code = readBytes(dir.file("code.bin"));
  const std::vector<uint8_t> data = readBytes(dir.file("data.bin"));
  REQUIRE(code.size() <= 0x5000);
  REQUIRE(data.size() == 4);  // wl_seed

  std::vector<uint8_t> l1(1024 * 1024, 0);
  std::vector<uint8_t> local(4096, 0);
  std::copy(code.begin(), code.end(), l1.begin() + 0x4000);
  std::copy(data.begin(), data.end(), local.begin());
  Bus bus;
  bus.l1 = l1;
  bus.local = local;
  bus.codeBase = 0x4000;
  bus.codeSize = 0x5000;
  bus.protectBase = 0x4000;
  bus.protectSize = 0x5000;
  Hart hart(0, bus);
  hart.reset(0x4000);
  hart.setReg(2, 0xFFB01000);  // sp: top of local memory
  StopInfo s = hart.run(50'000'000);
  INFO(describeFault(hart.fault()));
  REQUIRE(s.reason == StopReason::Halted);
  CHECK(s.exitCode == 0x600D);

  uint32_t expected[WL_OUT_WORDS];
  wl_run(expected, 12345u);
  for (int i = 0; i < WL_OUT_WORDS; ++i) {
    uint32_t got;
    std::memcpy(&got, l1.data() + 0x20000 + 4 * i, 4);
    INFO("result word " << i);
    CHECK(got == expected[i]);
  }
  // The host's own check of the workload: sorted ascending.
  for (int i = 1; i < WL_SORT_N; ++i) CHECK(static_cast<int32_t>(expected[i - 1]) <= static_cast<int32_t>(expected[i]));
}
