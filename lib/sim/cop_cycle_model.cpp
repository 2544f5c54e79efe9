// The coprocessor cycle model the simulated chip uses for each arch: the
// defaults of CopCycleModel calibrated to public figures. Every constant and
// its source: docs/device-model.md, "Calibration".
#include "sim/coprocessor.hpp"

#include <cmath>

namespace tessera::sim {

namespace {

// tt-budabackend op_model tile_weight (cycles per tile of an SFPU-bound unary
// op) as SFPU instructions per pass: the SFPU runs 32 passes per tile.
uint32_t opsPerPass(double tileWeight) { return static_cast<uint32_t>(std::lround(tileWeight / 32.0)); }

} // namespace

CopCycleModel copCycleModelFor(Arch arch) {
  namespace c = contract;
  CopCycleModel m;
  // Unpacker and packer: op_model's binary ops cost 50 cycles per Bfp8 tile
  // pair (2 x 1120 bytes) and 100 per Float16 pair (2 x 2080 bytes), nop 56
  // per Float16 tile: about 40 bytes per cycle, no fixed cost per tile (the
  // per-ublock cost is separate in the fit).
  m.l1BytesPerCycle = 40;
  m.unpackOverhead = 0;
  m.packOverhead = 0;
  // Asynchronous issue: each thread's FIFOs in front of the coprocessor hold
  // 32 + 8 + 2 (thread 0) and 16 + 8 + 2 (threads 1, 2) 32-bit words
  // (tenstorrent/tt-isa-documentation, Diagrams/Src/TensixFrontend.lua,
  // Wormhole; the same assumed for grayskull, which has no public figure).
  m.fifoWords = {42, 26, 26};
  auto& s = m.sfpuOpsPerPass;
  auto& a = m.sfpuApproxOpsPerPass; // op_model's approx sets (approximate_mode: true)
  if (arch == Arch::Grayskull) {
    // e150: 332 TFLOP/s at 8 bits on 120 cores at 1.2 GHz = 1153 MAC/cycle,
    // a 32x32x32 product in 28.4 cycles per fidelity phase; op_model matmul
    // tile_weight 36 per tile and phase with its unpack. 32: 1024 MAC/cycle.
    m.matmulPhase = 32;
    // op_model params/grayskull/params_v2.yaml, base sets.
    s[c::kSfpuExp] = opsPerPass(2666);
    s[c::kSfpuLog] = opsPerPass(1413);
    s[c::kSfpuSqrt] = opsPerPass(159);
    s[c::kSfpuReciprocal] = opsPerPass(915);
    s[c::kSfpuGelu] = opsPerPass(286);
    s[c::kSfpuGeluDerivative] = opsPerPass(3116);
    s[c::kSfpuSigmoid] = opsPerPass(174.76);
    a[c::kSfpuExp] = opsPerPass(668.08);
    a[c::kSfpuGeluDerivative] = opsPerPass(822.25);
    a[c::kSfpuReciprocal] = opsPerPass(905.53);
  } else {
    // wormhole_b0 (and blackhole until it has its own): op_model matmul
    // math_tiles_weight 15.5 (Float16) / 14.2 (Bfp8) per tile and phase: the
    // default 16 (2048 MAC/cycle, Tenstorrent's Tensix ISA documentation).
    // op_model params/wormhole_b0/params_v3.yaml, base sets.
    s[c::kSfpuExp] = opsPerPass(1771);
    s[c::kSfpuLog] = opsPerPass(718.10);
    s[c::kSfpuSqrt] = opsPerPass(910.09);
    s[c::kSfpuReciprocal] = opsPerPass(910.09);
    s[c::kSfpuGelu] = opsPerPass(270.42);
    s[c::kSfpuGeluDerivative] = opsPerPass(2219.61);
    s[c::kSfpuSigmoid] = opsPerPass(266.47);
    s[c::kSfpuTanh] = opsPerPass(204.14);
    s[c::kSfpuAbs] = opsPerPass(171.50);
    s[c::kSfpuSine] = opsPerPass(910.09);
    s[c::kSfpuCosine] = opsPerPass(1547.50);
    s[c::kSfpuSquare] = opsPerPass(204.16);
    s[c::kSfpuLrelu] = opsPerPass(321.99);
    a[c::kSfpuExp] = opsPerPass(812.81);
    a[c::kSfpuGeluDerivative] = opsPerPass(383.77);
    a[c::kSfpuReciprocal] = opsPerPass(780.81);
  }
  return m;
}

} // namespace tessera::sim
