// The coprocessor's calibrated cost tables (copCycleModelFor: approximate
// SFPU costs) and its instruction FIFO model (docs/device-model.md,
// "Calibration" and "Instruction FIFO"). Expected figures are worked out by
// hand from the documented constants.
#include "device/device_contract.h"
#include "sim/coprocessor.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

using namespace tessera;
using namespace tessera::contract;
using sim::CopCycleModel;
using sim::CopResult;
using sim::Coprocessor;

namespace {

uint32_t sfpuWord(uint32_t func, uint32_t d) { return encode(kOpSfpu, d | func << kSfpuFuncShift); }
// UNPACK of zeros (no L1 read): cost unpackZeros.
uint32_t zeroUnpack(bool toB) { return encode(kOpUnpack, kUnpackZero | (toB ? kUnpackToSrcB : 0u)); }

struct Rig {
  std::vector<uint8_t> l1 = std::vector<uint8_t>(kGrayskullL1Size, 0);
  Coprocessor cop;
  explicit Rig(const CopCycleModel& m) : cop(std::span<uint8_t>(l1), m) {}

  // A whole instruction (two words for a +1 one) at cycle `now`; must be accepted.
  CopResult run(uint32_t thread, uint32_t word, uint32_t arg, uint64_t now, bool twoWords = true) {
    if (twoWords) REQUIRE(cop.push(thread, word, now).accepted());
    const CopResult r = cop.push(thread, twoWords ? arg : word, now);
    REQUIRE(r.accepted());
    return r;
  }
  CopResult math(uint32_t word, uint64_t now) { return run(kMathThread, word, 0, now, false); }
};

} // namespace

TEST_CASE("approximate SFPU costs: op_model's approx sets, results unchanged", "[sim][coprocessor][perf][sfpu]") {
  // Grayskull params_v2 approx tile_weight / 32, rounded: exp 668.08 -> 21,
  // gelu_derivative 822.25 -> 26, reciprocal 905.53 -> 28; exact: exp 2666 -> 83,
  // log 1413 -> 44 (no approx set: the flag changes nothing). 32 passes per tile.
  Rig gs(sim::copCycleModelFor(Arch::Grayskull));
  const uint32_t approx = kSfpuApproximate;
  CHECK(gs.run(kMathThread, sfpuWord(kSfpuExp, 0), 0, 0).cycles == 32 * 83);
  CHECK(gs.run(kMathThread, sfpuWord(kSfpuExp | approx, 1), 0, 0).cycles == 32 * 21);
  CHECK(gs.run(kMathThread, sfpuWord(kSfpuGeluDerivative | approx, 2), 0, 0).cycles == 32 * 26);
  CHECK(gs.run(kMathThread, sfpuWord(kSfpuReciprocal | approx, 3), 0, 0).cycles == 32 * 28);
  CHECK(gs.run(kMathThread, sfpuWord(kSfpuLog | approx, 4), 0, 0).cycles == 32 * 44);
  // The flag is field [16].
  CHECK((sfpuWord(kSfpuExp | approx, 0) & kFieldSfpuApproximate) != 0);

  // wormhole_b0 params_v3: exp approx 812.81 -> 25, gelu_derivative 383.77 -> 12.
  Rig wh(sim::copCycleModelFor(Arch::WormholeB0));
  CHECK(wh.run(kMathThread, sfpuWord(kSfpuExp | approx, 0), 0, 0).cycles == 32 * 25);
  CHECK(wh.run(kMathThread, sfpuWord(kSfpuGeluDerivative | approx, 1), 0, 0).cycles == 32 * 12);

  // The default model (tensix-run) has no approx table: exact cost, exp 16 per pass.
  Rig def(CopCycleModel{});
  CHECK(def.run(kMathThread, sfpuWord(kSfpuExp | approx, 0), 0, 0).cycles == 32 * 16);

  // Same results with and without the flag (dest 0 and 1 both exp(0) = 1).
  CHECK(gs.cop.destValue(0, 5) == gs.cop.destValue(1, 5));
  CHECK(gs.cop.destValue(1, 5) == 1.0f);

  // Bit 17 is still reserved.
  CHECK(gs.cop.push(kMathThread, sfpuWord(kSfpuExp, 0) | (1u << 17), 0).accepted());  // first word
  CHECK(gs.cop.push(kMathThread, 0, 0).faulted());
}

TEST_CASE("synchronous issue: the hart waits for each instruction", "[sim][coprocessor][perf][fifo]") {
  Rig rig(CopCycleModel{});  // fifoWords 0
  const CopResult r = rig.run(kUnpackThread, zeroUnpack(false), 0, 100);
  CHECK(r.cycles == 16);
  CHECK(r.hartCycles == 16);
  CHECK(rig.cop.doneAt(kUnpackThread) == 0);
}

TEST_CASE("instruction FIFO: start times from unit, sources and banks", "[sim][coprocessor][perf][fifo]") {
  CopCycleModel m;  // unpack zeros 16, matmul 16 per phase, setconfig 1
  m.fifoWords = {64, 64, 64};
  Rig rig(m);
  // HiFi4: 4 phases, a matmul takes 64 cycles.
  CHECK(rig.run(kMathThread, encode(kOpSetConfig, kCfgMathFidelity), kHiFi4, 0).hartCycles == 0);  // config [0, 1]
  CHECK(rig.run(kUnpackThread, zeroUnpack(false), 0, 0).hartCycles == 0);  // srcA bank 0: [0, 16]
  CHECK(rig.cop.doneAt(kUnpackThread) == 16);
  rig.run(kUnpackThread, zeroUnpack(true), 0, 0);  // srcB bank 0: unpacker busy until 16 -> [16, 32]
  CHECK(rig.cop.doneAt(kUnpackThread) == 32);
  // The matmul waits for both banks: [32, 96]; it releases srcA 0 and srcB 0 at 96.
  CHECK(rig.math(encode(kOpMatmul, 0), 0).hartCycles == 0);
  CHECK(rig.cop.doneAt(kMathThread) == 96);
  rig.run(kUnpackThread, zeroUnpack(false), 0, 0);  // srcA bank 1: [32, 48]
  CHECK(rig.cop.doneAt(kUnpackThread) == 48);
  rig.run(kUnpackThread, zeroUnpack(true), 0, 0);  // srcB bank 1: [48, 64]
  CHECK(rig.cop.doneAt(kUnpackThread) == 64);
  // srcA bank 0 again: free only when the matmul ends at 96 -> [96, 112].
  rig.run(kUnpackThread, zeroUnpack(false), 0, 0);
  CHECK(rig.cop.doneAt(kUnpackThread) == 112);
  // A second matmul reads srcA 1 (ready 48) and srcB 1 (ready 64), but the
  // math unit is busy until 96: [96, 160].
  rig.math(encode(kOpMatmul, 1), 0);
  CHECK(rig.cop.doneAt(kMathThread) == 160);
  // reset() clears the times.
  rig.cop.reset();
  CHECK(rig.cop.doneAt(kUnpackThread) == 0);
  CHECK(rig.cop.doneAt(kMathThread) == 0);
}

TEST_CASE("instruction FIFO: a full FIFO makes the hart wait", "[sim][coprocessor][perf][fifo]") {
  CopCycleModel m;
  m.fifoWords = {4, 4, 4};  // two +1 instructions
  Rig rig(m);
  CHECK(rig.run(kUnpackThread, zeroUnpack(false), 0, 0).hartCycles == 0);  // [0, 16]: started, out of the FIFO
  CHECK(rig.run(kUnpackThread, zeroUnpack(true), 0, 0).hartCycles == 0);   // [16, 32]: 2 words queued
  CHECK(rig.run(kUnpackThread, zeroUnpack(false), 0, 0).hartCycles == 0);  // [32, 48]: 4 words queued
  // Full: the push waits until the oldest queued (start 16) leaves.
  const CopResult r = rig.run(kUnpackThread, zeroUnpack(true), 0, 0);
  CHECK(r.hartCycles == 16);
  CHECK(r.cycles == 16);
  CHECK(rig.cop.doneAt(kUnpackThread) == 64);  // [48, 64]
  // Later pushes, once the queue drained, do not wait.
  CHECK(rig.math(encode(kOpZeroDest, 0), 1000).hartCycles == 0);
  CHECK(rig.cop.doneAt(kMathThread) == 1004);  // zeroDest 4
}
