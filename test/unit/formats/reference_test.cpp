// Cross-checks against an independent plain computation: each value is rounded
// with double arithmetic (x / ulp, + 0.5, floor: ties away on the magnitude),
// no bit manipulation. Inputs are random floats with many forced ties.
#include "formats/formats.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

using namespace tessera::formats;
using tessera::netlist::DataFormat;

namespace {

// A random normal float near [2^lo, 2^hi); one time in three its bits below
// the kept mantissa are forced to exactly half an ULP (a tie).
float randomValue(std::mt19937& rng, int lo, int hi, int keptManBits) {
  std::uniform_int_distribution<int> expo(std::max(lo, -126), std::min(hi, 127)); // normal floats only
  std::uniform_int_distribution<uint32_t> man(0, 0x7FFFFF);
  std::uniform_int_distribution<int> coin(0, 5);
  const auto biased = static_cast<uint32_t>(expo(rng) + 127);
  uint32_t m = man(rng);
  const int dropped = 23 - keptManBits;
  if (dropped > 0 && coin(rng) < 2) m = (m & ~((1u << dropped) - 1)) | (1u << (dropped - 1));
  const uint32_t sign = coin(rng) < 3 ? 0x80000000u : 0;
  return std::bit_cast<float>(sign | (biased << 23) | m);
}

// Nearest value with `manBits` mantissa bits, ties away; below 2^minExp -> 0;
// above maxFinite -> `overflow` (inf or maxFinite).
double referenceFloat(float x, int manBits, int minExp, double maxFinite, double overflow) {
  const double a = std::fabs(static_cast<double>(x));
  const double sign = std::signbit(x) ? -1.0 : 1.0;
  if (a < std::ldexp(1.0, -126)) return sign * 0.0;
  const double ulp = std::ldexp(1.0, std::ilogb(a) - manBits);
  const double r = std::floor(a / ulp + 0.5) * ulp;
  if (r > maxFinite) return sign * overflow;
  if (r < std::ldexp(1.0, minExp)) return sign * 0.0;
  return sign * r;
}

struct FloatCase {
  DataFormat df;
  int manBits, minExp, maxExp;
  double maxFinite, overflow;
};

// Bfp block reference: see docs/data-formats.md, "Encoding a block".
std::array<double, 16> referenceBfp(const std::array<float, 16>& x, int magBits, int expMin, int expMax) {
  std::array<double, 16> a{};
  std::array<bool, 16> live{};
  int shared = std::numeric_limits<int>::min();
  for (size_t i = 0; i < 16; ++i) {
    const double v = std::fabs(static_cast<double>(x[i]));
    if (std::isnan(x[i]) || std::isinf(x[i]) || (v >= std::ldexp(1.0, -126) && std::ilogb(v) > expMax)) {
      a[i] = std::ldexp(2.0 - std::ldexp(1.0, -23), expMax); // largest significand, top exponent
    } else if (v < std::ldexp(1.0, -126) || std::ilogb(v) < expMin) {
      continue;
    } else {
      a[i] = v;
    }
    live[i] = true;
    shared = std::max(shared, std::ilogb(a[i]));
  }
  std::array<double, 16> out{};
  const double step = std::ldexp(1.0, shared - magBits + 1);
  const double maxMag = std::ldexp(1.0, magBits) - 1;
  for (size_t i = 0; i < 16; ++i) {
    if (!live[i]) continue;
    const double m = std::min(std::floor(a[i] / step + 0.5), maxMag);
    out[i] = m == 0 ? 0.0 : (std::signbit(x[i]) ? -m : m) * step;
  }
  return out;
}

} // namespace

TEST_CASE("scalar float formats match a plain double-arithmetic rounding", "[formats][reference]") {
  const double inf = std::numeric_limits<double>::infinity();
  const std::array cases{
      FloatCase{DataFormat::Float16, 10, -14, 16, 65504.0, inf},
      FloatCase{DataFormat::Float16_b, 7, -126, 127, std::ldexp(255.0, 120), inf}, // (2 - 2^-7) * 2^127
      FloatCase{DataFormat::Lf8, 2, -14, 17, 114688.0, 114688.0},
      FloatCase{DataFormat::Fp8_e4m3, 3, -6, 9, 448.0, 448.0},
  };
  std::mt19937 rng(99);
  for (const FloatCase& c : cases) {
    INFO(tessera::netlist::dataFormatName(c.df));
    size_t mismatches = 0;
    for (int i = 0; i < 200000; ++i) {
      const float x = randomValue(rng, std::max(c.minExp - 3, -126), std::min(c.maxExp, 127), c.manBits);
      const double want = referenceFloat(x, c.manBits, c.minExp, c.maxFinite, c.overflow);
      const float got = roundToFormat(c.df, x);
      if (static_cast<double>(got) != want || std::signbit(got) != std::signbit(want)) {
        if (++mismatches <= 3) FAIL_CHECK("x=" << x << " got " << got << " want " << want);
      }
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("Bfp formats match a plain double-arithmetic block rounding", "[formats][reference]") {
  struct BfpCase {
    DataFormat df;
    int magBits, expMin, expMax;
  };
  const std::array cases{
      BfpCase{DataFormat::Bfp8, 7, -15, 16},    BfpCase{DataFormat::Bfp8_b, 7, -126, 127},
      BfpCase{DataFormat::Bfp4, 3, -15, 16},    BfpCase{DataFormat::Bfp4_b, 3, -126, 127},
      BfpCase{DataFormat::Bfp2, 1, -15, 16},    BfpCase{DataFormat::Bfp2_b, 1, -126, 127},
  };
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> special(0, 60);
  for (const BfpCase& c : cases) {
    INFO(tessera::netlist::dataFormatName(c.df));
    size_t mismatches = 0;
    for (int blockIndex = 0; blockIndex < 20000; ++blockIndex) {
      // Exponents spread over a window so some values vanish and some tie.
      std::uniform_int_distribution<int> centre(std::max(c.expMin - 2, -126), c.expMax - 6);
      const int lo = centre(rng);
      std::array<float, 16> x{};
      for (float& v : x) {
        const int s = special(rng);
        v = s == 0   ? std::numeric_limits<float>::infinity()
            : s == 1 ? 0.0f
            : s == 2 ? std::ldexp(1.0f, c.expMax + 3)
                     : randomValue(rng, lo, lo + 8, c.magBits - 1);
      }
      const auto want = referenceBfp(x, c.magBits, c.expMin, c.expMax);
      std::array<float, 16> got = x;
      quantize(c.df, std::span<float>(got));
      for (size_t i = 0; i < 16; ++i) {
        if (static_cast<double>(got[i]) != want[i] || std::signbit(got[i]) != std::signbit(want[i])) {
          if (++mismatches <= 3) FAIL_CHECK("x=" << x[i] << " got " << got[i] << " want " << want[i]);
        }
      }
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("integer formats match plain rounding and clamping", "[formats][reference]") {
  struct IntCase {
    DataFormat df;
    double lo, hi;
  };
  const std::array cases{
      IntCase{DataFormat::Int8, -127, 127},          IntCase{DataFormat::UInt8, 0, 255},
      IntCase{DataFormat::UInt16, 0, 65535},         IntCase{DataFormat::Int32, -2147483647.0, 2147483647.0},
      IntCase{DataFormat::RawUInt32, 0, 4294967295.0},
  };
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> wide(-1e5f, 1e5f);
  for (const IntCase& c : cases) {
    INFO(tessera::netlist::dataFormatName(c.df));
    for (int i = 0; i < 20000; ++i) {
      const float x = i % 2 ? wide(rng) : std::floor(wide(rng)) + 0.5f; // half of them exact ties
      double r = std::fabs(static_cast<double>(x)) + 0.5;                 // ties away on the magnitude
      r = std::copysign(std::floor(r), static_cast<double>(x));
      const double want = static_cast<float>(std::clamp(r, c.lo, c.hi)) + 0.0; // +0.0: no negative zero
      REQUIRE(static_cast<double>(roundToFormat(c.df, x)) == want);
    }
  }
}
