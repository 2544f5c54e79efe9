// The numerics of the coprocessor's math unit (FPU: matmul, eltwise, reduce)
// and SFPU, on whole 32x32 tiles. Internal to lib/sim (coprocessor.cpp is the
// only user). Every function mirrors the reference model's arithmetic for the
// same op (docs/golden-model.md): same operand reduction for the math
// fidelity, same float/double evaluation, same summation order where the
// reference's order is fixed. The reference is not called: it must stay an
// independent check of this code.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace tessera::sim::copmath {

constexpr size_t kDim = 32;
constexpr size_t kValues = kDim * kDim;
using Tile = std::array<float, kValues>;
using IntTile = std::array<int64_t, kValues>;

// ---- math fidelity (contract::FidelityCode) --------------------------------
// srcA's multiplier input keeps 4 mantissa bits, srcB's 6 (truncation).
float highA(float x);
float highB(float x);
uint32_t fidelityPhases(uint32_t fidelity);  // 1 (LoFi) .. 4 (HiFi4)
// a*b as the multiplier forms it for ELTWISE mul (a is the srcA operand):
// reduced by the fidelity, 0 when either operand is 0 (no 0*inf = NaN).
float eltwiseMultiply(uint32_t fidelity, float a, float b);

// acc[i][j] += sum_k srcB[i][k] * srcA[k][j] with the fidelity's operand
// reduction; per product term the dot product is summed in float, k
// ascending from 0, then added to acc (HiFi3: two terms, added in order).
void matmulAccumulate(uint32_t fidelity, const Tile& srcB, const Tile& srcA, Tile& acc);
// The same with the reduced operands given (highB of every srcB value,
// highA of every srcA value; each may be null when matmulReads says the
// fidelity does not read it): a source bank kept for several products
// (keep srcA/srcB) is reduced once.
struct ReducedReads {
  bool srcBHigh = false, srcAHigh = false;
};
ReducedReads matmulReads(uint32_t fidelity);
void reduceTile(const Tile& in, bool srcB, Tile& out);  // highB (srcB) or highA of every value
void matmulAccumulate(uint32_t fidelity, const Tile& srcB, const Tile& srcA, const Tile* srcBHigh, const Tile* srcAHigh,
                      Tile& acc);
// Integer matmul (Int32 dest): exact, fidelity ignored.
void matmulAccumulateInt(const IntTile& srcB, const IntTile& srcA, IntTile& acc);

// ---- SFPU (contract::SfpuFunc) ---------------------------------------------
// f(x) for every function but power; `param` is the argument word (float32
// bits for lrelu/relu_min/relu_max, the integer exponent for power).
float sfpu(uint32_t func, uint32_t param, float x);

// ---- topk network (contract::kOpTopk) ---------------------------------------
// One TOPK step on a window of one or two value tiles and their index tiles
// (values[1]/indices[1] unused for one tile), every row on its own. Returns
// the compare-exchange stages it ran (for the cycle model), or -1 for
// parameters the instruction does not accept (nothing changed then).
int topkStep(uint32_t step, bool twoTiles, uint32_t arg, Tile* const values[2], Tile* const indices[2]);

// ---- packer relu (contract::kCfgReluMode) ----------------------------------
float relu(uint32_t mode, float threshold, float x);

// ---- integers in an Int32 dest ----------------------------------------------
// Round ties away from zero, saturate to the sign-magnitude Int32 range
// [-(2^31-1), 2^31-1], NaN -> 0 (the same rule lib/formats uses for Int32).
int64_t toInt32(double v);
int64_t saturateInt32(int64_t v);

} // namespace tessera::sim::copmath
