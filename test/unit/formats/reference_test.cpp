// Cross-checks against an independent plain computation: each value is rounded
// with double arithmetic (x / ulp, + 0.5, floor: ties away on the magnitude),
// no bit manipulation. Inputs are random floats with many forced ties.
#include "formats/formats.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace tessera::formats;
using tessera::DataFormat;

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

// The bytes after the header of a Bfp tile, from the same double-arithmetic
// rounding (docs/data-formats.md, "Bfp tiles"): per face row the exponent byte
// (block maximum + bias; 0 for a block with no live value), then the
// sign|magnitude codes (a zero code has no sign), first value in a byte's
// lowest bits.
std::vector<uint8_t> referenceBfpTileBody(const std::array<float, kTileValues>& x, int magBits, int expMin, int expMax) {
  const int bias = expMin == -126 ? 127 : 15;
  const size_t bits = static_cast<size_t>(magBits) + 1, perByte = 8 / bits;
  std::vector<uint8_t> body(kTileValues / 16 + kTileValues / perByte, 0);
  for (size_t block = 0; block < kTileValues / 16; ++block) {
    const size_t face = block / 16, row = block % 16;
    const size_t first = ((face / 2) * 16 + row) * 32 + (face % 2) * 16;
    std::array<double, 16> a{};
    std::array<bool, 16> live{};
    int shared = std::numeric_limits<int>::min();
    for (size_t i = 0; i < 16; ++i) {
      const float v = x[first + i];
      const double m = std::fabs(static_cast<double>(v));
      if (std::isnan(v) || std::isinf(v) || (m >= std::ldexp(1.0, -126) && std::ilogb(m) > expMax))
        a[i] = std::ldexp(2.0 - std::ldexp(1.0, -23), expMax);
      else if (m < std::ldexp(1.0, -126) || std::ilogb(m) < expMin)
        continue;
      else
        a[i] = m;
      live[i] = true;
      shared = std::max(shared, std::ilogb(a[i]));
    }
    if (shared == std::numeric_limits<int>::min()) continue;  // exponent byte 0, codes 0
    body[block] = static_cast<uint8_t>(shared + bias);
    const double step = std::ldexp(1.0, shared - magBits + 1);
    for (size_t i = 0; i < 16; ++i) {
      if (!live[i]) continue;
      const auto m = static_cast<unsigned>(std::min(std::floor(a[i] / step + 0.5), std::ldexp(1.0, magBits) - 1));
      if (m == 0) continue;
      const unsigned code = m | (std::signbit(x[first + i]) ? 1u << magBits : 0u);
      const size_t v = block * 16 + i;
      body[kTileValues / 16 + v / perByte] |= static_cast<uint8_t>(code << ((v % perByte) * bits));
    }
  }
  return body;
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
    INFO(tessera::dataFormatName(c.df));
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
    INFO(tessera::dataFormatName(c.df));
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
    INFO(tessera::dataFormatName(c.df));
    for (int i = 0; i < 20000; ++i) {
      const float x = i % 2 ? wide(rng) : std::floor(wide(rng)) + 0.5f; // half of them exact ties
      double r = std::fabs(static_cast<double>(x)) + 0.5;                 // ties away on the magnitude
      r = std::copysign(std::floor(r), static_cast<double>(x));
      const double want = static_cast<float>(std::clamp(r, c.lo, c.hi)) + 0.0; // +0.0: no negative zero
      REQUIRE(static_cast<double>(roundToFormat(c.df, x)) == want);
    }
  }
}

// quantize() rounds whole Bfp blocks with a vectorized path; packTile and
// unpackTile encode and decode blocks one value at a time. Both must give the
// same bits (sign of zero included) on blocks built to hit the edges: shared
// exponents at both ends of the range (denormal products, exponent bytes 0/1),
// values 23-26 binades below the block maximum (the last shifts that can still
// round up), ties, saturation, NaN/inf of either sign, denormal inputs.
TEST_CASE("Bfp quantize of whole blocks matches the tile packer bit for bit, and its bytes a plain encoding", "[formats][reference]") {
  struct BfpCase {
    DataFormat df;
    int magBits, expMin, expMax;
  };
  const std::array cases{
      BfpCase{DataFormat::Bfp8, 7, -15, 16},    BfpCase{DataFormat::Bfp8_b, 7, -126, 127},
      BfpCase{DataFormat::Bfp4, 3, -15, 16},    BfpCase{DataFormat::Bfp4_b, 3, -126, 127},
      BfpCase{DataFormat::Bfp2, 1, -15, 16},    BfpCase{DataFormat::Bfp2_b, 1, -126, 127},
  };
  std::mt19937 rng(4242);
  std::uniform_int_distribution<int> pick(0, 15);
  std::uniform_int_distribution<uint32_t> anyBits;
  for (const BfpCase& c : cases) {
    INFO(tessera::dataFormatName(c.df));
    size_t mismatches = 0;
    for (int tile = 0; tile < 300; ++tile) {
      std::array<float, kTileValues> x{};
      for (size_t block = 0; block < kTileValues / 16; ++block) {
        // Top exponent of the block: near either end of the range or anywhere.
        const int where = pick(rng);
        std::uniform_int_distribution<int> anyTop(std::max(c.expMin - 3, -126), std::min(c.expMax + 3, 127));
        const int top = where < 5   ? std::max(c.expMin - 2 + where, -126)
                        : where < 9 ? std::min(c.expMax - 6 + where, 127)
                                    : anyTop(rng);
        for (size_t i = 0; i < 16; ++i) {
          float& v = x[block * 16 + i];
          const int kind = pick(rng);
          if (kind == 0) {
            v = std::bit_cast<float>(anyBits(rng)); // NaN, inf, denormals, anything
          } else if (kind == 1) {
            v = (anyBits(rng) & 1) ? -0.0f : std::bit_cast<float>(anyBits(rng) & 0x807FFFFFu); // zero or denormal
          } else {
            // A value 0..26 binades below the top, one in three an exact tie at
            // the block's step (or a neighbour of one).
            std::uniform_int_distribution<int> below(0, kind < 6 ? 3 : 26);
            const int e = std::max(top - below(rng), -126);
            uint32_t man = anyBits(rng) & 0x7FFFFF;
            if (kind % 3 == 0) {
              const int dropped = std::clamp(23 - (c.magBits - 1) + (top - e), 1, 23);
              man = (man & ~((1u << dropped) - 1)) | (1u << (dropped - 1));
              man += static_cast<uint32_t>(static_cast<int>(anyBits(rng) % 3) - 1) & 0x7FFFFF;
              man &= 0x7FFFFF;
            }
            v = std::bit_cast<float>((anyBits(rng) & 0x80000000u) | (static_cast<uint32_t>(e + 127) << 23) | man);
          }
        }
      }
      std::vector<uint8_t> bytes(tileBytes(c.df));
      packTile(c.df, x, bytes);
      const std::vector<uint8_t> body = referenceBfpTileBody(x, c.magBits, c.expMin, c.expMax);
      for (size_t k = 0; k < body.size(); ++k)
        if (bytes[kTileHeaderBytes + k] != body[k] && ++mismatches <= 3)
          FAIL_CHECK("tile byte " << kTileHeaderBytes + k << ": packer " << int(bytes[kTileHeaderBytes + k])
                                  << ", reference " << int(body[k]));
      std::array<float, kTileValues> plain{};
      unpackTile(c.df, bytes, plain);
      std::array<float, kTileValues> fast = x;
      quantize(c.df, std::span<float>(fast));
      for (size_t i = 0; i < kTileValues; ++i)
        if (std::bit_cast<uint32_t>(fast[i]) != std::bit_cast<uint32_t>(plain[i]) && ++mismatches <= 3)
          FAIL_CHECK("x=" << x[i] << " (0x" << std::hex << std::bit_cast<uint32_t>(x[i]) << ") quantize 0x"
                          << std::bit_cast<uint32_t>(fast[i]) << " packer 0x" << std::bit_cast<uint32_t>(plain[i]));
    }
    CHECK(mismatches == 0);
  }
}

// quantize() rounds scalar formats with a branch-free select chain; the tile
// packer encodes one value at a time with the branchy rounding. Every
// exponent field and sign, with mantissas at and around each format's
// rounding point, zero, all ones and random, must give the same bits.
TEST_CASE("scalar quantize matches the tile packer bit for bit", "[formats][reference]") {
  struct ScalarCase {
    DataFormat df;
    int manBits;
  };
  const std::array cases{ScalarCase{DataFormat::Float32, 23}, ScalarCase{DataFormat::Float16, 10},
                         ScalarCase{DataFormat::Float16_b, 7}, ScalarCase{DataFormat::Lf8, 2},
                         ScalarCase{DataFormat::Fp8_e4m3, 3}};
  std::mt19937 rng(77);
  std::uniform_int_distribution<uint32_t> anyBits;
  for (const ScalarCase& c : cases) {
    INFO(tessera::dataFormatName(c.df));
    std::vector<uint32_t> inputs;
    const int dropped = 23 - c.manBits;
    for (uint32_t field = 0; field < 256; ++field)
      for (uint32_t sign : {0u, 0x80000000u})
        for (int k = 0; k < 32; ++k) {
          uint32_t man = anyBits(rng) & 0x7FFFFF;
          if (dropped > 0 && k < 12) {
            const uint32_t half = 1u << (dropped - 1);
            man = (man & ~((1u << dropped) - 1)) | half; // a tie
            man = (man + static_cast<uint32_t>(k % 3) - 1) & 0x7FFFFF; // or a neighbour
          }
          if (k == 12) man = 0;
          if (k == 13) man = 0x7FFFFF;
          if (k == 14) man = 1;
          inputs.push_back(sign | (field << 23) | man);
        }
    while (inputs.size() % kTileValues != 0) inputs.push_back(anyBits(rng));
    size_t mismatches = 0;
    for (size_t base = 0; base < inputs.size(); base += kTileValues) {
      std::array<float, kTileValues> x{};
      for (size_t i = 0; i < kTileValues; ++i) x[i] = std::bit_cast<float>(inputs[base + i]);
      std::vector<uint8_t> bytes(tileBytes(c.df));
      packTile(c.df, x, bytes);
      std::array<float, kTileValues> plain{};
      unpackTile(c.df, bytes, plain);
      std::array<float, kTileValues> fast = x;
      quantize(c.df, std::span<float>(fast));
      for (size_t i = 0; i < kTileValues; ++i)
        if (std::bit_cast<uint32_t>(fast[i]) != std::bit_cast<uint32_t>(plain[i]) && ++mismatches <= 3)
          FAIL_CHECK("x=0x" << std::hex << inputs[base + i] << " quantize 0x" << std::bit_cast<uint32_t>(fast[i])
                            << " packer 0x" << std::bit_cast<uint32_t>(plain[i]));
      // One value at a time (the path roundToFormat takes) agrees too.
      for (size_t i = 0; i < kTileValues; i += 97)
        if (std::bit_cast<uint32_t>(roundToFormat(c.df, x[i])) != std::bit_cast<uint32_t>(plain[i]) && ++mismatches <= 3)
          FAIL_CHECK("roundToFormat x=0x" << std::hex << inputs[base + i]);
    }
    CHECK(mismatches == 0);
  }
}
