// Scalar floating formats: Float32, Float16, Float16_b, Lf8, Fp8_e4m3.
// Every expected bit pattern is derived by hand in the comment beside it.
#include "formats/formats.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

using namespace tessera::formats;
using tessera::DataFormat;

namespace {
float f(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t bits(float v) { return std::bit_cast<uint32_t>(v); }
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
} // namespace

TEST_CASE("Float16 encodes exact values", "[formats][float16]") {
  CHECK(float32ToFloat16(1.0f) == 0x3C00);   // e=0 -> field 15 = 01111, mantissa 0
  CHECK(float32ToFloat16(-2.0f) == 0xC000);  // sign, e=1 -> field 16 = 10000
  CHECK(float32ToFloat16(0.5f) == 0x3800);   // e=-1 -> field 14
  CHECK(float32ToFloat16(65504.0f) == 0x7BFF); // 1.1111111111b * 2^15: field 30, mantissa all ones
  CHECK(float32ToFloat16(std::ldexp(1.0f, -14)) == 0x0400); // min normal: field 1
  CHECK(float32ToFloat16(0.0f) == 0x0000);
  CHECK(float32ToFloat16(-0.0f) == 0x8000);
}

TEST_CASE("Float16 rounds to nearest, ties away from zero", "[formats][float16]") {
  // 1 + 2^-11 = 0x3F801000 lies halfway between 1.0 (0x3C00) and 1 + 2^-10
  // (0x3C01): ties away picks the larger magnitude (RNE would keep 0x3C00).
  CHECK(float32ToFloat16(f(0x3F801000)) == 0x3C01);
  CHECK(float32ToFloat16(f(0xBF801000)) == 0xBC01);
  // One float32 ULP below the tie rounds down.
  CHECK(float32ToFloat16(f(0x3F800FFF)) == 0x3C00);
  CHECK(float32ToFloat16(f(0xBF800FFF)) == 0xBC00);
  // 1 + 3*2^-11 = 0x3F803000: halfway between 0x3C01 and 0x3C02 -> 0x3C02.
  CHECK(float32ToFloat16(f(0x3F803000)) == 0x3C02);
}

TEST_CASE("Float16 overflows to infinity", "[formats][float16]") {
  // ULP at 2^15 is 2^5 = 32; 65520 is halfway between 65504 and 65536 -> away -> 65536 = overflow.
  CHECK(float32ToFloat16(65520.0f) == 0x7C00);
  CHECK(float32ToFloat16(-65520.0f) == 0xFC00);
  CHECK(float32ToFloat16(65519.0f) == 0x7BFF); // below the tie: stays at the max
  CHECK(float32ToFloat16(1e10f) == 0x7C00);
  CHECK(float32ToFloat16(kInf) == 0x7C00);
  CHECK(float32ToFloat16(-kInf) == 0xFC00);
  CHECK(roundToFormat(DataFormat::Float16, 70000.0f) == kInf);
}

TEST_CASE("Float16 flushes denormals and canonicalises NaN", "[formats][float16]") {
  CHECK(float32ToFloat16(std::ldexp(1.0f, -15)) == 0x0000);  // would be a binary16 denormal
  CHECK(float32ToFloat16(-std::ldexp(1.0f, -15)) == 0x8000); // signed zero
  CHECK(float32ToFloat16(std::ldexp(1.0f, -24)) == 0x0000);
  // 2^-15 * 1.111111111111b = 0x387FF800: rounding to 10 mantissa bits carries
  // up to 2.0 * 2^-15 = 2^-14, the smallest normal, so it survives the flush.
  CHECK(float32ToFloat16(f(0x387FF800)) == 0x0400);
  CHECK(float32ToFloat16(kNaN) == 0x7E00);
  CHECK(float32ToFloat16(f(0xFF800001)) == 0x7E00); // signalling negative NaN -> canonical quiet
}

TEST_CASE("Float16 decodes", "[formats][float16]") {
  CHECK(float16ToFloat32(0x3C00) == 1.0f);
  CHECK(float16ToFloat32(0xC000) == -2.0f);
  CHECK(float16ToFloat32(0x7BFF) == 65504.0f);
  // 0x3555 = 0 01101 0101010101: (1 + 341/1024) * 2^-2 = 1365/4096
  CHECK(float16ToFloat32(0x3555) == 1365.0f / 4096.0f);
  CHECK(float16ToFloat32(0x7C00) == kInf);
  CHECK(float16ToFloat32(0xFC00) == -kInf);
  CHECK(std::isnan(float16ToFloat32(0x7C01)));
  // Denormal encodings read as signed zero.
  CHECK(bits(float16ToFloat32(0x0001)) == 0x00000000u);
  CHECK(bits(float16ToFloat32(0x8001)) == 0x80000000u);
}

TEST_CASE("Float16_b encodes and rounds ties away", "[formats][bfloat16]") {
  CHECK(float32ToFloat16b(1.0f) == 0x3F80);  // top half of 0x3F800000
  CHECK(float32ToFloat16b(-2.0f) == 0xC000); // top half of 0xC0000000
  // 1 + 2^-8 = 0x3F808000 is halfway between 0x3F80 and 0x3F81 -> away -> 0x3F81 (RNE: 0x3F80).
  CHECK(float32ToFloat16b(f(0x3F808000)) == 0x3F81);
  CHECK(float32ToFloat16b(f(0xBF808000)) == 0xBF81);
  CHECK(float32ToFloat16b(f(0x3F807FFF)) == 0x3F80);
  CHECK(float32ToFloat16b(f(0x3F818000)) == 0x3F82); // halfway between 0x3F81 and 0x3F82
  // Mantissa carry into the exponent: 0x3FFF8000 (1.99609375 + tie) -> 2.0 = 0x4000.
  CHECK(float32ToFloat16b(f(0x3FFF8000)) == 0x4000);
}

TEST_CASE("Float16_b overflow, denormals, NaN", "[formats][bfloat16]") {
  CHECK(float32ToFloat16b(f(0x7F7F7FFF)) == 0x7F7F); // rounds down to the largest finite
  CHECK(float32ToFloat16b(f(0x7F7F8000)) == 0x7F80); // tie above the largest finite -> inf
  CHECK(float32ToFloat16b(f(0x7F7FFFFF)) == 0x7F80); // float32 max -> inf
  CHECK(float32ToFloat16b(f(0xFF7FFFFF)) == 0xFF80);
  CHECK(float32ToFloat16b(f(0x00800000)) == 0x0080); // min normal stays
  CHECK(float32ToFloat16b(f(0x00400000)) == 0x0000); // float32 denormal input: flushed
  CHECK(float32ToFloat16b(f(0x807FFFFF)) == 0x8000); // flushed before rounding could reach min normal
  CHECK(float32ToFloat16b(kNaN) == 0x7FC0);
  CHECK(float32ToFloat16b(-kInf) == 0xFF80);
  CHECK(float16bToFloat32(0x4049) == f(0x40490000)); // 3.140625
  CHECK(std::isnan(float16bToFloat32(0x7F81)));
  CHECK(bits(float16bToFloat32(0x8001)) == 0x80000000u); // denormal -> -0
}

TEST_CASE("Float32 keeps values, flushes denormals, canonical NaN", "[formats][float32]") {
  CHECK(bits(roundToFormat(DataFormat::Float32, f(0x3F812345))) == 0x3F812345u);
  CHECK(bits(roundToFormat(DataFormat::Float32, f(0x00000001))) == 0x00000000u);
  CHECK(bits(roundToFormat(DataFormat::Float32, f(0x80700000))) == 0x80000000u);
  CHECK(bits(roundToFormat(DataFormat::Float32, f(0x7F800001))) == 0x7FC00000u);
  CHECK(roundToFormat(DataFormat::Float32, -kInf) == -kInf);
}

TEST_CASE("Float16 and Float16_b roundToFormat agree with the bit converters", "[formats]") {
  // 3.14159274 = 0x40490FDB. bf16: the dropped low half 0x0FDB < 0x8000 -> 0x4049 = 3.140625.
  CHECK(roundToFormat(DataFormat::Float16_b, f(0x40490FDB)) == 3.140625f);
  // binary16: mantissa 0x490FDB >> 13 = 0x248 remainder 0x0FDB < 0x1000 -> 0x4248 = 3.140625.
  CHECK(roundToFormat(DataFormat::Float16, f(0x40490FDB)) == 3.140625f);
}

// Lf8 as in BUDA: 1 sign, 5 exponent (bias 15), 2 mantissa; no inf or NaN, so
// the top field 31 is an ordinary binade and overflow saturates.
TEST_CASE("Lf8 values", "[formats][lf8]") {
  const auto lf8 = [](float v) { return roundToFormat(DataFormat::Lf8, v); };
  CHECK(lf8(1.0f) == 1.0f);
  CHECK(lf8(1.25f) == 1.25f);   // mantissa 01
  CHECK(lf8(1.125f) == 1.25f);  // halfway between 1.0 and 1.25: away
  CHECK(lf8(-1.125f) == -1.25f);
  CHECK(lf8(1.12f) == 1.0f);
  CHECK(lf8(65536.0f) == 65536.0f);   // 2^16: field 31, usable
  CHECK(lf8(114688.0f) == 114688.0f); // max = 1.75 * 2^16
  CHECK(lf8(122880.0f) == 114688.0f); // tie between max and 2^17 rounds up, then saturates
  CHECK(lf8(1e9f) == 114688.0f);
  CHECK(lf8(kInf) == 114688.0f);
  CHECK(lf8(-kInf) == -114688.0f);
  CHECK(lf8(kNaN) == 114688.0f); // no NaN encoding: saturates (quiet NaN has sign +)
  CHECK(lf8(std::ldexp(1.0f, -14)) == std::ldexp(1.0f, -14)); // min normal: field 1
  CHECK(bits(lf8(-std::ldexp(1.0f, -15))) == 0x80000000u);  // below: signed zero
}

// OCP E4M3: bias 7, no infinity, S.1111.111 is NaN, max S.1111.110 = 448.
TEST_CASE("Fp8_e4m3 values", "[formats][fp8]") {
  const auto e4m3 = [](float v) { return roundToFormat(DataFormat::Fp8_e4m3, v); };
  CHECK(e4m3(1.0f) == 1.0f);
  CHECK(e4m3(1.0625f) == 1.125f); // halfway between 1.0 and 1.125 (ULP 1/8): away
  CHECK(e4m3(-1.0625f) == -1.125f);
  CHECK(e4m3(240.0f) == 240.0f);  // 1.875 * 2^7: field 14, mantissa 111
  CHECK(e4m3(448.0f) == 448.0f);  // 1.75 * 2^8
  CHECK(e4m3(464.0f) == 448.0f);  // tie towards the NaN encoding: saturate
  CHECK(e4m3(1000.0f) == 448.0f);
  CHECK(e4m3(-kInf) == -448.0f);
  CHECK(std::isnan(e4m3(kNaN)));
  CHECK(e4m3(0.015625f) == 0.015625f);              // 2^-6 min normal
  CHECK(bits(e4m3(0.0078125f)) == 0x00000000u);     // 2^-7: flushed
}
