// Math-unit and SFPU numerics of the coprocessor. See coprocessor_math.hpp and
// docs/device-model.md ("Coprocessor instruction set", numerics) for which
// results are bit-exact with lib/golden and which cannot be.
#include "sim/coprocessor_math.hpp"
#include "sim/tile_product.hpp"

#include "device/device_contract.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace tessera::sim::copmath {
namespace {

namespace c = tessera::contract;

// Truncates the mantissa to its top `bits` bits; inf/NaN unchanged.
float keepMantissa(float x, int bits) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7F800000u) == 0x7F800000u) return x;
  u &= ~((uint32_t{1} << (23 - bits)) - 1u);
  return std::bit_cast<float>(u);
}

// Which cross products of the operands' high/low parts a fidelity runs
// (phase 0, A_hi*B_hi, always runs).
struct Phases {
  bool aLoBHi = false;  // phase 1 (HiFi2 and up)
  bool aHiBLo = false;  // phase 2 (HiFi3 and up; HiFi2_B)
  bool aLoBLo = false;  // phase 3 (HiFi4)
};

Phases phasesOf(uint32_t fidelity) {
  switch (fidelity) {
  case c::kLoFi: return {false, false, false};
  case c::kHiFi2: case c::kHiFi2_A: return {true, false, false};
  case c::kHiFi2_B: return {false, true, false};
  case c::kHiFi3: return {true, true, false};
  default: return {true, true, true};  // HiFi4 (SETCONFIG rejects other values)
  }
}

float masked(float a, float b) { return (a == 0.0f || b == 0.0f) ? 0.0f : a * b; }

// keepMantissa over a tile, without branches so that it vectorizes (the
// matmul reduces one or both operands per product term).
Tile keepMantissaTile(const Tile& in, int bits) {
  const uint32_t keep = ~((uint32_t{1} << (23 - bits)) - 1u);
  Tile out;
  for (size_t base = 0; base < kValues; base += 16) {
    uint32_t u[16];
    std::memcpy(u, &in[base], sizeof u);
    for (uint32_t& w : u) w &= (w & 0x7F800000u) == 0x7F800000u ? ~0u : keep;
    std::memcpy(&out[base], u, sizeof u);
  }
  return out;
}

constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2/pi), tanh form of gelu
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1/sqrt(2*pi)

float expClamped(float x) { return std::min(std::numeric_limits<float>::max(), std::exp(x)); }

} // namespace

float highA(float x) { return keepMantissa(x, 4); }
float highB(float x) { return keepMantissa(x, 6); }

uint32_t fidelityPhases(uint32_t fidelity) {
  const Phases p = phasesOf(fidelity);
  return 1u + (p.aLoBHi ? 1u : 0u) + (p.aHiBLo ? 1u : 0u) + (p.aLoBLo ? 1u : 0u);
}

float eltwiseMultiply(uint32_t fidelity, float a, float b) {
  const Phases p = phasesOf(fidelity);
  if (p.aLoBHi && p.aHiBLo && !p.aLoBLo) {
    // HiFi3: every phase but A_lo*B_lo = A*B_hi + A_hi*B_lo.
    const float bHi = highB(b);
    return masked(a, bHi) + masked(highA(a), b - bHi);
  }
  // The other fidelities factor: A keeps its low part with phase 1, B with phase 2.
  return masked(p.aLoBHi ? a : highA(a), p.aHiBLo ? b : highB(b));
}

ReducedReads matmulReads(uint32_t fidelity) {
  const Phases p = phasesOf(fidelity);
  if (p.aLoBHi && p.aHiBLo && p.aLoBLo) return {};  // HiFi4: the operands as they are
  if (p.aLoBHi && p.aHiBLo) return {true, true};    // HiFi3
  return {!p.aHiBLo, !p.aLoBHi};
}

void reduceTile(const Tile& in, bool srcB, Tile& out) { out = keepMantissaTile(in, srcB ? 6 : 4); }

void matmulAccumulate(uint32_t fidelity, const Tile& srcB, const Tile& srcA, Tile& acc) {
  const ReducedReads r = matmulReads(fidelity);
  Tile bHigh, aHigh;
  if (r.srcBHigh) reduceTile(srcB, true, bHigh);
  if (r.srcAHigh) reduceTile(srcA, false, aHigh);
  matmulAccumulate(fidelity, srcB, srcA, r.srcBHigh ? &bHigh : nullptr, r.srcAHigh ? &aHigh : nullptr, acc);
}

void matmulAccumulate(uint32_t fidelity, const Tile& srcB, const Tile& srcA, const Tile* srcBHigh, const Tile* srcAHigh,
                      Tile& acc) {
  const Phases p = phasesOf(fidelity);
  if (p.aLoBHi && p.aHiBLo && p.aLoBLo) {
    addProduct(srcB, srcA, acc);
    return;
  }
  if (p.aLoBHi && p.aHiBLo) {
    // HiFi3 as two products: B_hi x A, then B_lo x A_hi.
    const Tile& bHi = *srcBHigh;
    Tile bLo;
    for (size_t i = 0; i < kValues; ++i) bLo[i] = srcB[i] - bHi[i];
    addProduct(bHi, srcA, acc);
    addProduct(bLo, *srcAHigh, acc);
    return;
  }
  addProduct(p.aHiBLo ? srcB : *srcBHigh, p.aLoBHi ? srcA : *srcAHigh, acc);
}

void matmulAccumulateInt(const IntTile& srcB, const IntTile& srcA, IntTile& acc) {
  for (size_t i = 0; i < kDim; ++i)
    for (size_t k = 0; k < kDim; ++k) {
      const int64_t l = srcB[i * kDim + k];
      for (size_t j = 0; j < kDim; ++j) acc[i * kDim + j] += l * srcA[k * kDim + j];
    }
}

float sfpu(uint32_t func, uint32_t param, float x) {
  switch (func) {
  case c::kSfpuExp: return expClamped(x);
  // 0 is nudged to float epsilon, so neither gives an infinity.
  case c::kSfpuLog: return x == 0.0f ? std::log(std::numeric_limits<float>::epsilon()) : std::log(x);
  case c::kSfpuSqrt: return std::sqrt(x);
  case c::kSfpuReciprocal: return x == 0.0f ? 1.0f / std::numeric_limits<float>::epsilon() : 1.0f / x;
  case c::kSfpuGelu: {
    const double d = x;
    return static_cast<float>(0.5 * d * (1.0 + std::tanh(kSqrt2OverPi * (d + 0.044715 * d * d * d))));
  }
  case c::kSfpuGeluDerivative: {
    const double d = x;
    const double cdf = 0.5 * (1.0 + std::tanh(kSqrt2OverPi * (d + 0.044715 * d * d * d)));
    const double pdf = d * std::exp(-0.5 * d * d) * kInvSqrt2Pi;
    return static_cast<float>(cdf + pdf);
  }
  case c::kSfpuSigmoid: return static_cast<float>(1.0 / (1.0 + static_cast<double>(expClamped(-x))));
  case c::kSfpuTanh: return std::tanh(x);
  case c::kSfpuAbs: return std::fabs(x);
  case c::kSfpuSine: return std::sin(x);
  case c::kSfpuCosine: return std::cos(x);
  case c::kSfpuSquare: return x * x;
  case c::kSfpuPower: {
    float result = 1.0f;  // repeated multiplication, as the SFPU loop does
    for (uint32_t i = 0; i < param; ++i) result *= x;
    return result;
  }
  case c::kSfpuLrelu: return x > 0.0f ? x : x * std::bit_cast<float>(param);
  case c::kSfpuRelu: return x > 0.0f ? x : 0.0f;
  case c::kSfpuReluMin: return relu(1, std::bit_cast<float>(param), x);
  case c::kSfpuReluMax: return relu(2, std::bit_cast<float>(param), x);
  case c::kSfpuAddScalar: return x + std::bit_cast<float>(param);
  case c::kSfpuQuantInt8: {
    // The quantization family's last step (lib/golden special_ops): add the
    // zero point in float, then Int8 (sign-magnitude): ties away, saturated.
    const float y = x + std::bit_cast<float>(param);
    if (std::isnan(y)) return 0.0f;
    const float r = std::round(y);
    return r <= -127.0f ? -127.0f : (r >= 127.0f ? 127.0f : r);
  }
  default: return x;
  }
}

float relu(uint32_t mode, float threshold, float x) {
  if (mode == 1) return x >= threshold ? x : 0.0f;
  if (mode == 2) return x >= threshold ? threshold : (x >= 0.0f ? x : 0.0f);
  return x;
}

int64_t toInt32(double v) {
  if (std::isnan(v)) return 0;
  const double r = std::round(v);
  constexpr double kMax = 2147483647.0;
  if (r >= kMax) return 2147483647;
  if (r <= -kMax) return -2147483647;
  return static_cast<int64_t>(r);
}

int64_t saturateInt32(int64_t v) { return std::clamp<int64_t>(v, -2147483647, 2147483647); }

} // namespace tessera::sim::copmath
