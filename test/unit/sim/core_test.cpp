// Unit tests of the Tensix core model (lib/sim/tensix_core) and the one-core
// harness (lib/sim/one_core_harness): three harts running small programs
// (test/unit/sim/Inputs/core_*.s, assembled with llvm-mc-14 when the test
// runs, or hand-encoded words), semaphores, tile counters, the mailbox, the
// hang detector, faults, ELF placement rules and a fake coprocessor.
#include "sim/one_core_harness.hpp"
#include "sim/tensix_core.hpp"

#include "llvm_tools.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

using namespace tessera;
using namespace tessera::sim;
namespace c = tessera::contract;

namespace {

constexpr Thread kUnpack = c::kUnpackThread;
constexpr Thread kMath = c::kMathThread;
constexpr Thread kPack = c::kPackThread;

elf::Image imageOf(Thread t, const std::vector<uint8_t>& code) {
  elf::Image image;
  image.machine = 243;
  image.entry = codeRegion(t).base;
  elf::Segment seg;
  seg.vaddr = image.entry;
  seg.memSize = static_cast<uint32_t>(code.size());
  seg.bytes = code;
  seg.executable = true;
  image.segments.push_back(seg);
  return image;
}

std::vector<uint8_t> words(std::initializer_list<uint32_t> ws) {
  std::vector<uint8_t> out(ws.size() * 4);
  size_t at = 0;
  for (uint32_t w : ws) {
    std::memcpy(out.data() + at, &w, 4);
    at += 4;
  }
  return out;
}

void load(TensixCore& core, Thread t, const std::vector<uint8_t>& code) {
  std::string error;
  INFO(error);
  REQUIRE(core.loadProgram(t, imageOf(t, code), error));
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Input tiles whose every byte is distinct per tile and position.
std::vector<uint8_t> patternTiles(size_t tiles, size_t tileSize) {
  std::vector<uint8_t> out(tiles * tileSize);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 7 + i / tileSize);
  return out;
}

} // namespace

TEST_CASE("core: every thread runs its program and reports done", "[core]") {
  sim_test::TempDir dir;
  const std::vector<uint8_t> exitProgram = sim_test::assemble(dir, "core_exit.s");
  TensixCore core;
  for (Thread t : {kUnpack, kMath, kPack}) load(core, t, exitProgram);
  CoreRunResult r = core.run();
  INFO(r.message);
  REQUIRE(r.stop == CoreStop::Done);
  CHECK(r.ok());
  CHECK(core.debugLog(kUnpack) == "00000000\n");  // each reads its own thread id
  CHECK(core.debugLog(kMath) == "00000001\n");
  CHECK(core.debugLog(kPack) == "00000002\n");
  for (const HartReport& h : r.harts) {
    CHECK(h.state == HartState::Done);
    CHECK(h.exitCode == 0);
    CHECK(h.instructions == 8);  // two li of lui+addi, one li of lui alone, lw, 2 sw
  }
  // 5 ALU instructions at 1 cycle, 3 MMIO accesses at 2.
  CHECK(r.cycles == 11);
  CHECK(contains(r.message, "done at cycle"));
}

TEST_CASE("core: semaphores hand dest halves between math and pack", "[core]") {
  sim_test::TempDir dir;
  TensixCore core;
  CHECK(core.semaphore(c::kSemMathPack) == 0);
  CHECK(core.semaphore(c::kSemPackMath) == 2);
  load(core, kMath, sim_test::assemble(dir, "core_sem_math.s"));
  load(core, kPack, sim_test::assemble(dir, "core_sem_pack.s"));
  CoreRunResult r = core.run();
  INFO(r.message);
  REQUIRE(r.stop == CoreStop::Done);
  CHECK(core.debugLog(kPack) == "00000000\n00000001\n00000002\n00000003\n");
  CHECK(core.semaphore(c::kSemMathPack) == 0);
  CHECK(core.semaphore(c::kSemPackMath) == 2);
  CHECK(r.harts[kUnpack].state == HartState::Absent);  // no program: counts as done
  // Math runs ahead by two halves, then has to wait for pack.
  CHECK(r.harts[kMath].stallCycles > 0);
}

TEST_CASE("core: a thread computing for a long time is not a hang", "[core]") {
  sim_test::TempDir dir;
  TensixCore core;
  load(core, kMath, sim_test::assemble(dir, "core_busy_math.s"));
  load(core, kPack, sim_test::assemble(dir, "core_wait_mathpack.s"));
  RunOptions options;
  options.sliceCycles = 64;
  options.hangSlices = 2;  // as eager as it gets
  CoreRunResult r = core.run(options);
  INFO(r.message);
  REQUIRE(r.stop == CoreStop::Done);
  CHECK(r.harts[kMath].instructions > 600000);
  // core_wait_mathpack ends with exit code 3: done, but not ok.
  CHECK(r.harts[kPack].exitCode == 3);
  CHECK_FALSE(r.ok());
  CHECK(contains(r.message, "pack (TRISC2) exited with code 3"));
}

TEST_CASE("core: a semaphore nobody posts is reported as a hang", "[core][hang]") {
  sim_test::TempDir dir;
  TensixCore core({Arch::Grayskull, "r0c0"});
  load(core, kMath, sim_test::assemble(dir, "core_wait_mathpack.s"));
  CoreRunResult r = core.run();
  INFO(r.message);
  REQUIRE(r.stop == CoreStop::Hang);
  CHECK(r.harts[kMath].state == HartState::Stalled);
  CHECK(r.harts[kMath].waitsFor == "semaphore 0 (MathPack) (value 0)");
  CHECK(contains(r.message, "core 'r0c0': hang at cycle"));
  CHECK(contains(r.message, "math (TRISC1) pc 0x9008: waits for semaphore 0 (MathPack) (value 0)"));
  CHECK(contains(r.message, "unpack (TRISC0): no program"));
}

TEST_CASE("core: polling a register that never changes is a hang; the cycle counter is not", "[core][hang]") {
  SECTION("thread id") {
    TensixCore core;
    load(core, kUnpack,
         words({0xFFE032B7,     // lui  t0, 0xFFE03
                0x01028293,     // addi t0, t0, 16   thread id register
                0x0002A303,     // lw   t1, 0(t0)
                0xFFDFF06F}));  // j    -4
    CoreRunResult r = core.run();
    INFO(r.message);
    REQUIRE(r.stop == CoreStop::Hang);
    CHECK(r.harts[kUnpack].state == HartState::Polling);
    CHECK(r.harts[kUnpack].waitsFor == "thread id (0)");
  }
  SECTION("cycle counter") {
    sim_test::TempDir dir;
    TensixCore core;
    load(core, kUnpack, sim_test::assemble(dir, "core_spin_cycles.s"));
    RunOptions options;
    options.maxCycles = 20000;
    CoreRunResult r = core.run(options);
    INFO(r.message);
    REQUIRE(r.stop == CoreStop::CycleLimit);
    CHECK(r.cycles >= 20000);
    CHECK(r.harts[kUnpack].state == HartState::Running);
    CHECK(contains(r.message, "cycle limit reached"));
  }
}

TEST_CASE("core: faults name the category, thread, pc and address", "[core][fault]") {
  auto faultOf = [](Thread t, std::initializer_list<uint32_t> program) {
    TensixCore core;
    load(core, t, words(program));
    CoreRunResult r = core.run();
    REQUIRE(r.stop == CoreStop::Fault);
    REQUIRE(r.fault);
    CHECK(r.fault->thread == t);
    CHECK(r.harts[t].state == HartState::Faulted);
    return r;
  };
  SECTION("a store into another thread's code") {
    CoreRunResult r = faultOf(kUnpack, {0x000090B7, 0x0000A023});  // lui x1, 9; sw x0, 0(x1)
    CHECK(r.fault->category == "code-write");
    CHECK(r.message == "core 'core': code-write in thread unpack (TRISC0) at pc 0x4004: address 0x9000 "
                       "(code regions are read-only while the core runs)");
  }
  SECTION("a store to a read-only register") {
    CoreRunResult r = faultOf(kMath, {0xFFE010B7, 0x0000A423});  // lui x1, 0xFFE01; sw x0, 8(x1)
    CHECK(r.fault->category == "store-access-fault");
    CHECK(contains(r.message, "thread math (TRISC1) at pc 0x9004: address 0xffe01008 (operand 0 capacity)"));
  }
  SECTION("a load from an unmapped register") {
    CoreRunResult r = faultOf(kPack, {0xFFE040B7, 0x0000A103});  // lui x1, 0xFFE04; lw x2, 0(x1)
    CHECK(r.fault->category == "load-access-fault");
    CHECK(contains(r.message, "address 0xffe04000 (unmapped)"));
  }
  SECTION("a jump into another thread's code region") {
    CoreRunResult r = faultOf(kUnpack, {0x000090B7, 0x00008067});  // lui x1, 9; jr x1
    CHECK(r.fault->category == "fetch-access-fault");
    CHECK(contains(r.message, "at pc 0x9000: outside the thread's code region [0x4000, 0x9000)"));
  }
  SECTION("ebreak") {
    CoreRunResult r = faultOf(kMath, {0x00100073});
    CHECK(r.fault->category == "breakpoint");
    CHECK(r.message == "core 'core': breakpoint in thread math (TRISC1) at pc 0x9000: ebreak");
  }
  SECTION("an illegal instruction") {
    CoreRunResult r = faultOf(kPack, {0x00000000});
    CHECK(r.fault->category == "illegal-instruction");
    CHECK(r.message == "core 'core': illegal-instruction in thread pack (TRISC2) at pc 0xd000: instruction word 0x0");
  }
  SECTION("a push with no coprocessor attached") {
    CoreRunResult r = faultOf(kMath, {0xFFE000B7, 0x0000A023});  // lui x1, 0xFFE00; sw x0, 0(x1)
    CHECK(r.fault->category == "no-coprocessor");
  }
}

namespace {

// A one-entry "source register": unpack's pushes fill it (stalling while
// full), math's pushes drain it (stalling while empty); pack's pushes fault.
struct FakeCoprocessor : CoprocessorPort {
  std::optional<uint32_t> src;
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  uint64_t completed = 0;
  PortResult push(Thread t, uint32_t word, uint64_t) override {
    if (t == kUnpack) {
      if (src) return PortResult::stall();
      src = word;
      ++completed;
      return PortResult::accepted(10);
    }
    if (t == kMath) {
      if (!src) return PortResult::stall();
      pairs.emplace_back(*src, word);
      src.reset();
      ++completed;
      return PortResult::accepted(20);
    }
    return PortResult::fault(c::kCopBadAddress);
  }
  uint32_t status(Thread t) const override { return t == kUnpack ? 0x77 : 0; }
  uint64_t progress() const override { return completed; }
  std::string waitReason(Thread t) const override { return t == kUnpack ? "src full" : "src empty"; }
};

void setMathPushCount(TensixCore& core, uint32_t n) {
  std::memcpy(core.localMemory(kMath).data() + 0xFF0, &n, 4);  // read by core_cop_math.s
}

} // namespace

// A coprocessor with instruction FIFOs whose math instructions all end at
// cycle 5000 (docs/device-model.md, "Instruction FIFO").
struct QueuedCoprocessor : CoprocessorPort {
  PortResult push(Thread, uint32_t, uint64_t) override { return PortResult::accepted(); }
  uint32_t status(Thread) const override { return 0; }
  uint64_t progress() const override { return 0; }
  std::string waitReason(Thread) const override { return "nothing"; }
  uint64_t doneAt(Thread t) const override { return t == kMath ? 5000 : 0; }
};

TEST_CASE("core: signals wait for the thread's queued instructions", "[core][cop][fifo]") {
  sim_test::TempDir dir;
  QueuedCoprocessor cop;
  TensixCore core;
  core.setCoprocessor(&cop);
  load(core, kMath, sim_test::assemble(dir, "core_sem_math.s"));
  load(core, kPack, sim_test::assemble(dir, "core_sem_pack.s"));
  CoreRunResult r = core.run();
  INFO(r.message);
  REQUIRE(r.stop == CoreStop::Done);
  CHECK(core.debugLog(kPack) == "00000000\n00000001\n00000002\n00000003\n");
  // Math's posts take effect at 5000: pack's first wait resumes no earlier,
  // and the rest of its loop is a few instructions.
  CHECK(r.harts[kPack].cycles >= 5000);
  CHECK(r.harts[kPack].cycles < 5000 + 200);
  // Math's done store waits for its instructions; its posts did not (it
  // ran on until its third PackMath wait, which pack's untimed posts answer).
  CHECK(r.harts[kMath].cycles >= 5000);
  CHECK(r.harts[kMath].cycles < 5000 + 200);
}

TEST_CASE("core: the coprocessor port stalls and charges cycles", "[core][cop]") {
  sim_test::TempDir dir;
  const std::vector<uint8_t> unpack = sim_test::assemble(dir, "core_cop_unpack.s");
  const std::vector<uint8_t> math = sim_test::assemble(dir, "core_cop_math.s");
  FakeCoprocessor cop;
  TensixCore core;
  core.setCoprocessor(&cop);
  load(core, kUnpack, unpack);
  load(core, kMath, math);

  SECTION("in step") {
    setMathPushCount(core, 5);
    CoreRunResult r = core.run();
    INFO(r.message);
    REQUIRE(r.stop == CoreStop::Done);
    REQUIRE(cop.pairs.size() == 5);
    for (uint32_t i = 0; i < 5; ++i) {
      CHECK(cop.pairs[i].first == 0x10000001 + i);
      CHECK(cop.pairs[i].second == 0x20000000 + i);
    }
    CHECK(core.debugLog(kUnpack) == "00000077\n");  // kCopStatus of unpack
    CHECK(r.harts[kMath].cycles >= 5 * 20);
  }
  SECTION("one push too many") {
    setMathPushCount(core, 6);
    CoreRunResult r = core.run();
    INFO(r.message);
    REQUIRE(r.stop == CoreStop::Hang);
    CHECK(r.harts[kMath].state == HartState::Stalled);
    CHECK(contains(r.message, "math (TRISC1) pc 0x"));
    CHECK(contains(r.message, ": waits for the coprocessor: src empty"));
    CHECK(contains(r.message, "unpack (TRISC0) pc 0x"));
    CHECK(contains(r.message, ": done (exit 0)"));
  }
  SECTION("a coprocessor fault stops the run") {
    TensixCore other;
    other.setCoprocessor(&cop);
    load(other, kPack, math);  // the same program, pushed by pack
    std::memcpy(other.localMemory(kPack).data() + 0xFF0, "\x01\0\0\0", 4);
    CoreRunResult r = other.run();
    REQUIRE(r.stop == CoreStop::Fault);
    CHECK(r.fault->category == "coprocessor-fault");
    CHECK(contains(r.message, "coprocessor-fault in thread pack (TRISC2)"));
    CHECK(contains(r.message, "bad-address (pushed word 0x20000000)"));
  }
}

namespace {

struct CopyRun {
  TensixCore core;
  OneCoreHarness harness{core};
  std::vector<uint8_t> input;
  uint32_t tileSize = 0;

  CopyRun(uint32_t inputTiles, uint32_t inputCount) {
    sim_test::TempDir dir;
    load(core, kUnpack, sim_test::assemble(dir, "core_copy.s"));
    const std::vector<uint8_t> exitProgram = sim_test::assemble(dir, "core_exit.s");
    load(core, kMath, exitProgram);
    load(core, kPack, exitProgram);
    HarnessOperand in;
    in.id = 0;
    in.format = c::kFloat16_b;
    in.capacityTiles = 2;
    HarnessOperand out;
    out.id = 16;
    out.format = c::kFloat16_b;
    out.capacityTiles = 3;
    out.expectTiles = inputCount;
    tileSize = 2048 + 32;  // netlist::tileSizeBytes(Float16_b)
    input = patternTiles(inputTiles, tileSize);
    in.inputTiles = input;
    c::EpochInfo epoch{};
    epoch.inputCount = inputCount;
    std::string error;
    INFO(error);
    REQUIRE(harness.setup({in, out}, epoch, error));
  }
};

} // namespace

TEST_CASE("harness: tiles flow through the counters and circular buffers", "[core][harness]") {
  CopyRun run(5, 5);
  const c::OperandEntry in = run.core.operand(0);
  CHECK(in.baseAddress == c::kDataBufferBase);
  CHECK(in.tileSizeBytes == run.tileSize);
  CHECK(in.capacityTiles == 2);
  CHECK(in.dataFormat == c::kFloat16_b);
  CHECK(run.core.operand(16).baseAddress == c::kDataBufferBase + 2 * run.tileSize);

  CoreRunResult r = run.harness.run({});
  INFO(r.message);
  REQUIRE(r.stop == CoreStop::Done);
  CHECK(r.ok());
  CHECK(run.harness.errors().empty());
  CHECK(run.harness.tilesFed(0) == 5);
  CHECK(run.harness.tilesDrained(16) == 5);
  CHECK(run.harness.output(16) == run.input);  // every tile, in order, across buffer wrap-around
  CHECK(run.core.tilesReceived(0) == 5);
  CHECK(run.core.tilesAcked(0) == 5);
  CHECK(run.core.tilesReceived(16) == 5);
  CHECK(run.core.tilesAcked(16) == 5);
}

TEST_CASE("harness: the step API lets the host act between slices", "[core][harness]") {
  CopyRun run(4, 4);
  RunOptions options;
  std::optional<CoreRunResult> r;
  int slices = 0;
  while (!(r = run.core.step(options, false))) {
    run.harness.service(run.core);
    ++slices;
  }
  run.harness.service(run.core);
  INFO(r->message);
  REQUIRE(r->stop == CoreStop::Done);
  CHECK(slices > 4);
  CHECK(run.harness.output(16) == run.input);
}

TEST_CASE("harness: a tile that never comes is a hang naming the operand", "[core][harness][hang]") {
  CopyRun run(2, 3);  // the kernel wants 3 tiles, the host has 2
  CoreRunResult r = run.harness.run({});
  INFO(r.message);
  REQUIRE(r.stop == CoreStop::Hang);
  CHECK(r.harts[kUnpack].state == HartState::Polling);
  CHECK(r.harts[kUnpack].waitsFor == "operand 0 tile counters (received 2, acked 2, capacity 2)");
  CHECK(contains(r.message, "unpack (TRISC0) pc 0x40"));
  CHECK(contains(r.message, "waits for operand 0 tile counters (received 2, acked 2, capacity 2)"));
  CHECK(contains(r.message, "math (TRISC1) pc 0x901c: done (exit 0)"));
  CHECK(run.harness.tilesDrained(16) == 2);
}

TEST_CASE("harness: setup rejects inconsistent operands", "[core][harness]") {
  TensixCore core;
  OneCoreHarness harness(core);
  auto setupError = [&](std::vector<HarnessOperand> ops) {
    std::string error;
    CHECK_FALSE(harness.setup(std::move(ops), {}, error));
    return error;
  };
  HarnessOperand a;
  a.id = 0;
  a.capacityTiles = 2;
  HarnessOperand b = a;
  b.id = 32;
  CHECK(setupError({b}) == "operand 32: not an input (0-15), output (16-23) or intermediate (24-31)");
  CHECK(setupError({a, a}) == "operand 0 is given more than once");
  b.id = 16;
  b.address = c::kDataBufferBase + 16;
  a.address = c::kDataBufferBase;
  CHECK(setupError({a, b}) == "the buffers of operand 0 and operand 16 overlap");
  a.address = 0x8000;
  CHECK(contains(setupError({a}), "operand 0: buffer [0x8000, "));
  a.address.reset();
  a.capacityTiles = 1000;
  CHECK(contains(setupError({a}), "do not fit in L1"));
  a.capacityTiles = 2;
  a.inputTiles.resize(100);
  CHECK(setupError({a}) == "operand 0: input data is 100 bytes, not a whole number of 2080-byte tiles");
}

TEST_CASE("core: program placement follows the L1 map", "[core][elf]") {
  TensixCore core;
  std::string error;
  elf::Image image = imageOf(kUnpack, words({0x00000073}));

  SECTION("code and data land in the code region and local memory") {
    elf::Segment data;
    data.vaddr = c::kLocalMemBase + 0x10;
    data.bytes = {1, 2, 3, 4};
    data.memSize = 16;  // 12 bytes of .bss
    image.segments.push_back(data);
    core.localMemory(kUnpack)[0x18] = 0xEE;  // must be cleared by the load
    REQUIRE(core.loadProgram(kUnpack, image, error));
    CHECK(core.loaded(kUnpack));
    CHECK(core.l1()[c::kTrisc0CodeBase] == 0x73);
    CHECK(core.localMemory(kUnpack)[0x10] == 1);
    CHECK(core.localMemory(kUnpack)[0x13] == 4);
    CHECK(core.localMemory(kUnpack)[0x18] == 0);
    CHECK(core.localMemory(kMath)[0x10] == 0);  // private per hart
    CHECK(core.hart(kUnpack).pc() == c::kTrisc0CodeBase);
    CHECK(core.hart(kUnpack).reg(2) == c::kLocalMemBase + c::kLocalMemSize);
  }
  SECTION("a segment in another thread's region") {
    CHECK_FALSE(core.loadProgram(kMath, image, error));
    CHECK(error == "math thread: segment [0x4000, 0x4004) is outside its code region [0x9000, 0xd000) and local "
                   "memory [0xffb00000, 0xffb01000)");
    CHECK_FALSE(core.loaded(kMath));
  }
  SECTION("a segment running past its region") {
    image.segments[0].vaddr = c::kTrisc0CodeBase + c::kTrisc0CodeSize - 2;
    CHECK_FALSE(core.loadProgram(kUnpack, image, error));
    CHECK(contains(error, "unpack thread: segment [0x8ffe, 0x9002) is outside its code region [0x4000, 0x9000)"));
  }
  SECTION("a segment past local memory") {
    elf::Segment data;
    data.vaddr = c::kLocalMemBase + c::kLocalMemSize - 4;
    data.memSize = 8;
    image.segments.push_back(data);
    CHECK_FALSE(core.loadProgram(kUnpack, image, error));
    CHECK(contains(error, "segment [0xffb00ffc, 0xffb01004)"));
  }
  SECTION("the entry point outside the code region") {
    image.entry = 0x9000;
    CHECK_FALSE(core.loadProgram(kUnpack, image, error));
    CHECK(error == "unpack thread: entry point 0x9000 is not in its code region [0x4000, 0x9000)");
  }
  SECTION("not RISC-V") {
    image.machine = 62;
    CHECK_FALSE(core.loadProgram(kPack, image, error));
    CHECK(error == "pack thread: not a RISC-V executable (e_machine 62)");
  }
  SECTION("bytes that are not an ELF") {
    const uint8_t junk[] = {1, 2, 3};
    CHECK_FALSE(core.loadElf(kPack, junk, error));
    CHECK(contains(error, "pack thread: "));
  }
}

TEST_CASE("core: operand table, counters and register names", "[core]") {
  TensixCore core({Arch::WormholeB0, "wh"});
  CHECK(core.l1().size() == 1464 * 1024);
  CHECK(TensixCore().l1().size() == 1024 * 1024);
  c::OperandEntry e{0x30000, 2080, 4, c::kBfp8_b, c::kOperandUntilized, 256};
  core.writeOperand(17, e);
  const uint8_t* raw = core.l1().data() + c::kOperandTableBase + 17 * 16;
  CHECK(raw[0] == 0x00);
  CHECK(raw[2] == 0x03);  // base 0x30000, little-endian
  CHECK(raw[4] == (2080 & 0xFF));
  CHECK(raw[8] == 4);
  CHECK(raw[10] == c::kBfp8_b);
  CHECK(raw[11] == c::kOperandUntilized);
  CHECK(raw[12] == 0);
  CHECK(raw[13] == 1);  // stride 256
  const c::OperandEntry back = core.operand(17);
  CHECK(back.baseAddress == 0x30000);
  CHECK(back.rowStrideBytes == 256);

  core.addTilesReceived(3, 5);
  core.addTilesAcked(3, 2);
  CHECK(core.tilesOccupied(3) == 3);
  core.addTilesAcked(3, 0xFFFFFFFFu);  // free-running: wraps
  CHECK(core.tilesAcked(3) == 1);

  CHECK(mmioRegisterName(c::kTileCounterBase + 16 * 16 + c::kTilesReceived) == "operand 16 tiles received");
  CHECK(mmioRegisterName(c::kSemaphoreBase + 8 + c::kSemWait) == "semaphore 1 (PackMath) wait");
  CHECK(mmioRegisterName(c::kCopInstrPort) == "coprocessor instruction port");
  CHECK(mmioRegisterName(c::kMailboxDone) == "mailbox done");
  CHECK(mmioRegisterName(c::kMmioBase + 0x5000) == "unmapped");
}

TEST_CASE("harness: command-line operands and the run spec", "[core][harness][spec]") {
  SECTION("ID:FORMAT:CAPACITY[:FILE]") {
    HarnessOperand op;
    std::string error;
    REQUIRE(parseOperandArg("0:Bfp8_b:4:dir/in:0.bin", op, error));
    CHECK(op.id == 0);
    CHECK(op.format == c::kBfp8_b);
    CHECK(op.capacityTiles == 4);
    CHECK(op.inputPath == "dir/in:0.bin");
    REQUIRE(parseOperandArg("16:Float32:2:out.bin", op, error));
    CHECK(op.outputPath == "out.bin");
    CHECK(op.inputPath.empty());
    REQUIRE(parseOperandArg("24:Float16:1", op, error));
    CHECK_FALSE(parseOperandArg("24:Float16:1:x.bin", op, error));
    CHECK(contains(error, "intermediates take no file"));
    CHECK_FALSE(parseOperandArg("32:Float16:1", op, error));
    CHECK(contains(error, "operand id '32' is not an input (0-15)"));
    REQUIRE(parseOperandArg("12:Float16:1", op, error));  // inputs 8-15 of fused ops
    CHECK_FALSE(parseOperandArg("0:Float17:1", op, error));
    CHECK(contains(error, "unknown data format 'Float17'"));
    CHECK_FALSE(parseOperandArg("0:Float16:0", op, error));
    CHECK_FALSE(parseOperandArg("0:Float16", op, error));
    CHECK(contains(error, "expected ID:FORMAT:CAPACITY[:FILE]"));
  }
  SECTION("a spec") {
    SourceBuffer src("spec.yaml", "arch: wormhole_b0\n"
                                  "kernel-dir: kernels\n"
                                  "input-count: 3\n"
                                  "max-cycles: 5000\n"
                                  "operands:\n"
                                  "  - {id: 0, format: Float16_b, capacity: 2, input: in0.bin}\n"
                                  "  - {id: 16, format: Bfp8_b, capacity: 4, output: out.bin, expect-tiles: 3}\n"
                                  "  - {id: 24, format: Float32, capacity: 1, address: 0x40000}\n");
    DiagnosticEngine diags;
    std::optional<RunSpec> spec = parseRunSpec(src, "/base", diags);
    REQUIRE(spec);
    CHECK(spec->arch == Arch::WormholeB0);
    CHECK(spec->kernelDir == "/base/kernels");
    CHECK(spec->epoch.inputCount == 3);
    CHECK(spec->run.maxCycles == 5000);
    REQUIRE(spec->operands.size() == 3);
    CHECK(spec->operands[0].inputPath == "/base/in0.bin");
    CHECK(spec->operands[1].outputPath == "/base/out.bin");
    CHECK(spec->operands[1].expectTiles == 3u);
    CHECK(spec->operands[2].address == 0x40000u);
  }
  SECTION("spec errors point at the node") {
    SourceBuffer src("spec.yaml", "operands:\n"
                                  "  - {id: 1, format: Float16_b, capacity: 2, output: x.bin}\n"
                                  "  - {id: 2, format: Nope, capacity: 2}\n"
                                  "  - {id: 3, capacity: 2}\n"
                                  "colour: blue\n");
    DiagnosticEngine diags;
    CHECK_FALSE(parseRunSpec(src, "", diags));
    REQUIRE(diags.errorCount() == 4);
    CHECK(diags.diagnostics()[0].loc.line == 2);
    CHECK(diags.diagnostics()[0].message == "output: only outputs (operands 16-23) are drained");
    CHECK(diags.diagnostics()[1].loc.line == 3);
    CHECK(diags.diagnostics()[1].message == "format: unknown data format 'Nope'");
    CHECK(diags.diagnostics()[2].rule == "spec-missing");
    CHECK(diags.diagnostics()[3].rule == "spec-unknown-key");
    CHECK(diags.diagnostics()[3].loc.line == 5);
  }
}

TEST_CASE("core: a waiting hart sleeps until a counter changes (sleepWhileWaiting)", "[core][sleep]") {
  auto program = words({0xFFE032B7,     // lui  t0, 0xFFE03
                        0x01028293,     // addi t0, t0, 16   thread id register
                        0x0002A303,     // lw   t1, 0(t0)
                        0xFFDFF06F});   // j    -4
  TensixCore core;
  load(core, kUnpack, program);
  RunOptions options;
  options.sleepWhileWaiting = true;
  options.hangSlices = ~uint32_t{0};
  // Slice 1 reads the register for the first time (new information): running.
  REQUIRE_FALSE(core.step(options, false));
  CHECK_FALSE(core.asleep());
  // Slice 2 reads the same value again: polling, so it falls asleep.
  REQUIRE_FALSE(core.step(options, false));
  CHECK(core.asleep());
  const uint64_t instructions = core.hart(kUnpack).instructions();
  CHECK(instructions > 0);
  // Asleep: its clock follows the slices (3 x 256), nothing executes.
  REQUIRE_FALSE(core.step(options, false));
  CHECK(core.hart(kUnpack).instructions() == instructions);
  CHECK(core.hart(kUnpack).cycles() == 3 * 256);
  CHECK(core.snapshot(CoreStop::Hang).harts[kUnpack].state == HartState::Polling);
  // A jump over idle slices moves its clock there.
  core.skipTo(10 * 256);
  CHECK(core.hart(kUnpack).cycles() == 10 * 256);
  CHECK(core.asleep());
  // A tile counter changes: it runs again in the next slice (and polls again).
  core.addTilesReceived(0, 1);
  CHECK_FALSE(core.asleep());
  REQUIRE_FALSE(core.step(options, false));
  CHECK(core.hart(kUnpack).instructions() > instructions);
  CHECK(core.hart(kUnpack).cycles() >= 11 * 256);
  CHECK(core.asleep());
}

TEST_CASE("core: sleeping harts hang as polling ones do", "[core][sleep][hang]") {
  sim_test::TempDir dir;
  for (bool sleep : {false, true}) {
    TensixCore core({Arch::Grayskull, "r0c0"});
    load(core, kMath, sim_test::assemble(dir, "core_wait_mathpack.s"));
    RunOptions options;
    options.sleepWhileWaiting = sleep;
    CoreRunResult r = core.run(options);
    INFO(r.message);
    REQUIRE(r.stop == CoreStop::Hang);
    CHECK(r.harts[kMath].state == HartState::Stalled);
    CHECK(r.harts[kMath].waitsFor == "semaphore 0 (MathPack) (value 0)");
    // 16 idle slices after the first: the same cycle either way.
    CHECK(r.cycles == 17 * 256);
  }
}

TEST_CASE("core: a stalled hart resumes at the cycle of the post that frees it (exactWakes)", "[core][wake]") {
  // Math waits on MathPack at cycle 2; pack (run after math in a slice)
  // posts it at cycle 62 (core_wake_pack.s counts the cycles). Math then
  // pays the store (2) and `li` (2) and reads the clock: 62 + 4 = 66. Without
  // exactWakes its stall lasts to the slice end (256): 256 + 4 = 260.
  sim_test::TempDir dir;
  for (bool exact : {true, false}) {
    TensixCore core;
    load(core, kMath, sim_test::assemble(dir, "core_wake_math.s"));
    load(core, kPack, sim_test::assemble(dir, "core_wake_pack.s"));
    RunOptions options;
    options.sleepWhileWaiting = true;
    options.exactWakes = exact;
    CoreRunResult r = core.run(options);
    INFO(r.message);
    REQUIRE(r.stop == CoreStop::Done);
    CHECK(core.debugLog(kMath) == (exact ? "00000042\n" : "00000104\n"));
    // Exact: the 60 cycles are the post's wait charged to the store, not a
    // stall carried to a slice end.
    CHECK(r.harts[kMath].stallCycles == (exact ? 0u : 254u));
  }
}
