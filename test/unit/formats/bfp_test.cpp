// Block floating point: one shared exponent per 16 values, worked by hand.
// Value of a Bfp8 magnitude m under shared exponent E: m * 2^(E-6)
// (the hidden bit sits at magnitude bit 6); Bfp4: m * 2^(E-2); Bfp2: m * 2^E.
#include "formats/formats.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

using namespace tessera::formats;
using tessera::DataFormat;

namespace {
std::array<float, 16> block(std::initializer_list<float> head) {
  std::array<float, 16> b{};
  std::copy(head.begin(), head.end(), b.begin());
  return b;
}
std::array<float, 16> quantized(DataFormat df, std::array<float, 16> b) {
  quantize(df, std::span<float>(b));
  return b;
}
} // namespace

TEST_CASE("Bfp8_b: shared exponent is the block maximum, mantissas shift", "[formats][bfp]") {
  // Exponents: 1.0 -> 0, 0.5 -> -1, 0.25 -> -2, -3.0 = -1.5*2 -> 1. Shared E = 1,
  // step 2^(1-6) = 1/32: magnitudes 32, 16, 8, 96 -- all exact.
  const auto q = quantized(DataFormat::Bfp8_b, block({1.0f, 0.5f, 0.25f, -3.0f}));
  CHECK(q[0] == 1.0f);
  CHECK(q[1] == 0.5f);
  CHECK(q[2] == 0.25f);
  CHECK(q[3] == -3.0f);
  CHECK(q[4] == 0.0f);
  // 1 + 2^-6 under E = 1: (1 + 1/64) * 32 = 32.5 -> ties away -> 33 -> 33/32.
  const auto tie = quantized(DataFormat::Bfp8_b, block({2.0f, 1.0f + 0x1p-6f, -(1.0f + 0x1p-6f)}));
  CHECK(tie[1] == 33.0f / 32.0f);
  CHECK(tie[2] == -33.0f / 32.0f);
  // Just below the tie: 32.5 - 2^-14 -> 32 -> 1.0.
  const auto below = quantized(DataFormat::Bfp8_b, block({2.0f, 1.0f + 0x1p-6f - 0x1p-20f}));
  CHECK(below[1] == 1.0f);
}

TEST_CASE("Bfp8_b: small values lose bits and can vanish to +0", "[formats][bfp]") {
  // E = 10, step 2^4 = 16. 8 -> 0.5 step -> ties away -> 1 step = 16.
  // 4 -> 0.25 step -> 0. -4 -> 0 with the sign dropped (BUDA writes +0).
  // 100 -> 6.25 steps -> 6 -> 96.
  const auto q = quantized(DataFormat::Bfp8_b, block({1024.0f, 8.0f, 4.0f, -4.0f, 100.0f}));
  CHECK(q[0] == 1024.0f);
  CHECK(q[1] == 16.0f);
  CHECK(q[2] == 0.0f);
  CHECK(q[3] == 0.0f);
  CHECK_FALSE(std::signbit(q[3]));
  CHECK(q[4] == 96.0f);
}

TEST_CASE("Bfp8_b: mantissa overflow saturates instead of bumping the exponent", "[formats][bfp]") {
  // 2 - 2^-8 = 1.99609375, E = 0, step 1/64: 127.75 -> 128 does not fit 7 bits -> 127 -> 127/64.
  const auto q = quantized(DataFormat::Bfp8_b, block({1.99609375f, -1.99609375f}));
  CHECK(q[0] == 127.0f / 64.0f);
  CHECK(q[1] == -127.0f / 64.0f);
  // Float16_b would instead round the same value up to 2.0.
  CHECK(roundToFormat(DataFormat::Float16_b, 1.99609375f) == 2.0f);
}

TEST_CASE("Bfp8_b: infinities and NaN saturate to the largest magnitude", "[formats][bfp]") {
  const float inf = std::numeric_limits<float>::infinity();
  // Largest: exponent 127, magnitude 127: 127 * 2^(127-6) = 127 * 2^121.
  const float largest = std::ldexp(127.0f, 121);
  const auto q = quantized(DataFormat::Bfp8_b, block({inf, -inf, std::numeric_limits<float>::quiet_NaN(), 1.0f}));
  CHECK(q[0] == largest);
  CHECK(q[1] == -largest);
  CHECK(q[2] == largest);
  CHECK(q[3] == 0.0f); // 2^0 under E = 127: far below half a step
}

TEST_CASE("Bfp8 (A): 5-bit exponent range [-15, 16]", "[formats][bfp]") {
  // Above 2^17 saturates: E = 16, magnitude 127 -> 127 * 2^10 = 130048.
  CHECK(roundToFormat(DataFormat::Bfp8, 1e6f) == 130048.0f);
  CHECK(roundToFormat(DataFormat::Bfp8, -1e6f) == -130048.0f);
  // 70000 has e = 16 (65536 <= 70000 < 131072): step 2^10: 68.36 -> 68 -> 69632.
  CHECK(roundToFormat(DataFormat::Bfp8, 70000.0f) == 69632.0f);
  // 2^-15 is the smallest shared exponent (byte 0); 2^-16 is below range -> 0.
  CHECK(roundToFormat(DataFormat::Bfp8, 0x1p-15f) == 0x1p-15f);
  CHECK(roundToFormat(DataFormat::Bfp8, 0x1p-16f) == 0.0f);
  // Each value is brought into the range before the exponent is shared: 2^-16
  // flushes even beside 2^-15 (where 32 steps of 2^-21 could have held it).
  const auto q = quantized(DataFormat::Bfp8, block({0x1p-15f, 0x1p-16f, 1.5f * 0x1p-15f}));
  CHECK(q[0] == 0x1p-15f);
  CHECK(q[1] == 0.0f);
  CHECK(q[2] == 1.5f * 0x1p-15f);
  // The _b family reaches much further down.
  CHECK(roundToFormat(DataFormat::Bfp8_b, 0x1p-100f) == 0x1p-100f);
}

TEST_CASE("Bfp4_b: 3 magnitude bits", "[formats][bfp]") {
  // E = 0 (from 1.0 and -1.5), step 2^-2 = 0.25:
  // 0.75 -> 3 steps exact; 0.3 -> 1.2 -> 1 -> 0.25; -1.5 -> 6 exact;
  // 0.375 -> 1.5 -> ties away -> 2 -> 0.5; 0.125 -> 0.5 -> 1 -> 0.25; 0.1 -> 0.4 -> 0;
  // 1.875 -> 7.5 -> 8 -> saturate at 7 -> 1.75.
  const auto q = quantized(DataFormat::Bfp4_b,
                           block({1.0f, 0.75f, 0.3f, -1.5f, 0.375f, 0.125f, 0.1f, 1.875f, -0.125f}));
  CHECK(q[0] == 1.0f);
  CHECK(q[1] == 0.75f);
  CHECK(q[2] == 0.25f);
  CHECK(q[3] == -1.5f);
  CHECK(q[4] == 0.5f);
  CHECK(q[5] == 0.25f);
  CHECK(q[6] == 0.0f);
  CHECK(q[7] == 1.75f);
  CHECK(q[8] == -0.25f);
}

TEST_CASE("Bfp2_b: 1 magnitude bit, values are 0 or +-2^E", "[formats][bfp]") {
  // E = 0, step 1: 1.5 -> 2 -> saturate 1 -> 1.0; 0.5 -> ties away -> 1;
  // 0.49 -> 0; -1.0 -> -1; 0.25 -> 0.
  const auto q = quantized(DataFormat::Bfp2_b, block({1.5f, 0.5f, 0.49f, -1.0f, 0.25f}));
  CHECK(q[0] == 1.0f);
  CHECK(q[1] == 1.0f);
  CHECK(q[2] == 0.0f);
  CHECK(q[3] == -1.0f);
  CHECK(q[4] == 0.0f);
}

TEST_CASE("Bfp4 and Bfp2 (A) share the Float16-like exponent", "[formats][bfp]") {
  CHECK(roundToFormat(DataFormat::Bfp4, 3.0f) == 3.0f);        // E = 1, step 0.5: 6 steps
  CHECK(roundToFormat(DataFormat::Bfp4, 1e9f) == 7.0f * 16384.0f); // E = 16, step 2^14, 7 steps
  CHECK(roundToFormat(DataFormat::Bfp2, -3.0f) == -2.0f);      // E = 1, step 2: 1.5 -> saturate 1
}

TEST_CASE("Bfp blocks are independent and aligned to 16 values", "[formats][bfp]") {
  std::vector<float> v(32, 0.0f);
  v[0] = 1024.0f;
  v[1] = 1.0f;  // shares E = 10 with 1024: step 16 -> 1/16 of a step -> 0
  v[16] = 1.0f; // second block: alone, exact
  quantize(DataFormat::Bfp8_b, std::span<float>(v));
  CHECK(v[1] == 0.0f);
  CHECK(v[16] == 1.0f);
  std::vector<float> odd(17, 1.0f);
  CHECK_THROWS_AS(quantize(DataFormat::Bfp8, std::span<float>(odd)), std::invalid_argument);
  Tensor t(1, 1, 2, 24);
  CHECK_THROWS_AS(quantize(DataFormat::Bfp8_b, t), std::invalid_argument);
}

TEST_CASE("Bfp: zero and denormal blocks", "[formats][bfp]") {
  const auto zeros = quantized(DataFormat::Bfp8_b, block({0.0f, -0.0f, 0x1p-140f}));
  for (float v : zeros) CHECK(std::bit_cast<uint32_t>(v) == 0u); // +0 everywhere, denormal flushed
}

// unpackTile of Bfp8_b, Bfp4_b and Bfp2_b bytes against the definition
// above, for every code (sign bit above the magnitude m) under every exponent
// byte 0..254 (unbiased E = byte - 127): sign * m * 2^(E-(magnitude bits-1)),
// worked in double, zero (keeping the sign) below the smallest normal float.
// Codes fill each byte from its lowest bits. Byte 255 (inf/NaN units) is left out.
TEST_CASE("Bfp _b tile unpack: every code under every exponent", "[formats][bfp]") {
  struct Case {
    DataFormat df;
    unsigned magBits;
  };
  for (const Case c : {Case{DataFormat::Bfp8_b, 7}, Case{DataFormat::Bfp4_b, 3}, Case{DataFormat::Bfp2_b, 1}}) {
    INFO(tessera::dataFormatName(c.df));
    const unsigned bits = c.magBits + 1, perByte = 8 / bits, codes = 1u << bits;
    size_t wrong = 0;
    for (unsigned codeBase = 0; codeBase < codes; codeBase += 16)
      for (unsigned expBase = 0; expBase < 255; expBase += 64) {
        std::vector<uint8_t> tile(tileBytes(c.df), 0);
        for (unsigned b = 0; b < 64; ++b) tile[kTileHeaderBytes + b] = static_cast<uint8_t>(std::min(expBase + b, 254u));
        auto codeOf = [&](unsigned v) { return (codeBase + v % 16 + v / 16 % 16) % codes; };
        for (unsigned v = 0; v < 1024; ++v)
          tile[kTileHeaderBytes + 64 + v / perByte] |= static_cast<uint8_t>(codeOf(v) << (v % perByte * bits));
        std::array<float, 1024> out{};
        unpackTile(c.df, tile, out);
        for (unsigned v = 0; v < 1024; ++v) {
          // Storage order: faces f0 f1 / f2 f3 of 16x16, row-major inside.
          const unsigned face = v / 256, r = v % 256 / 16, col = v % 16;
          const unsigned rowMajor = (face / 2 * 16 + r) * 32 + face % 2 * 16 + col;
          const unsigned code = codeOf(v), e = std::min(expBase + v / 16, 254u);
          double x = static_cast<double>(code & ((1u << c.magBits) - 1)) *
                     std::ldexp(1.0, static_cast<int>(e) - 127 - static_cast<int>(c.magBits - 1));
          if (x < static_cast<double>(std::numeric_limits<float>::min())) x = 0.0;
          const float want = (code >> c.magBits) & 1 ? -static_cast<float>(x) : static_cast<float>(x);
          if (std::bit_cast<uint32_t>(out[rowMajor]) != std::bit_cast<uint32_t>(want) && ++wrong <= 3)
            FAIL_CHECK("code " << code << " exponent byte " << e << ": got " << out[rowMajor] << ", want " << want);
        }
      }
    CHECK(wrong == 0);
  }
}
