// Tile byte layout: [16-byte header][Bfp: 64 exponent bytes][values face by
// face, each face row-major][zero padding to a multiple of 32 bytes].
#include "formats/formats.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

using namespace tessera::formats;
using tessera::DataFormat;

namespace {

constexpr std::array kAllFormats{
    DataFormat::Float32,   DataFormat::Float16,  DataFormat::Float16_b, DataFormat::Bfp8,     DataFormat::Bfp8_b,
    DataFormat::Bfp4,      DataFormat::Bfp4_b,   DataFormat::Bfp2,      DataFormat::Bfp2_b,   DataFormat::Lf8,
    DataFormat::Fp8_e4m3,  DataFormat::Int8,     DataFormat::Int32,     DataFormat::UInt8,    DataFormat::UInt16,
    DataFormat::RawUInt8,  DataFormat::RawUInt16, DataFormat::RawUInt32,
};

using TileValues = std::array<float, kTileValues>;

std::vector<uint8_t> pack(DataFormat df, const TileValues& v) {
  std::vector<uint8_t> out(tileBytes(df), 0xAA); // poison: packTile must write every byte
  packTile(df, v, out);
  return out;
}
TileValues unpack(DataFormat df, const std::vector<uint8_t>& bytes) {
  TileValues v{};
  unpackTile(df, bytes, v);
  return v;
}
float& at(TileValues& v, int r, int c) { return v[static_cast<size_t>(r * 32 + c)]; }
uint32_t le32(const std::vector<uint8_t>& b, size_t off) {
  return b[off] | (b[off + 1] << 8) | (b[off + 2] << 16) | (static_cast<uint32_t>(b[off + 3]) << 24);
}
uint16_t le16(const std::vector<uint8_t>& b, size_t off) { return static_cast<uint16_t>(b[off] | (b[off + 1] << 8)); }

// Values across many binades plus specials; integer formats get integers too.
TileValues randomTile(std::mt19937& rng, DataFormat df) {
  TileValues v{};
  std::uniform_int_distribution<int> kind(0, 19);
  std::uniform_int_distribution<int> expo(-30, 30);
  std::uniform_real_distribution<float> unit(-2.0f, 2.0f);
  std::uniform_int_distribution<uint32_t> anyBits;
  std::uniform_int_distribution<int> smallInt(-300, 70000);
  for (float& x : v) {
    switch (kind(rng)) {
    case 0: x = std::bit_cast<float>(anyBits(rng)); break; // anything, NaN and denormals included
    case 1: x = std::numeric_limits<float>::infinity(); break;
    case 2: x = -0.0f; break;
    case 3: x = static_cast<float>(smallInt(rng)); break;
    case 4: x = static_cast<float>(smallInt(rng)) + 0.5f; break; // integer ties
    default: x = std::ldexp(unit(rng), isBfpFormat(df) && kind(rng) < 10 ? 0 : expo(rng)); break;
    }
  }
  return v;
}

bool sameValue(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

} // namespace

TEST_CASE("tile sizes match the netlist library and BUDA padding", "[formats][tile]") {
  for (DataFormat df : kAllFormats) {
    INFO(tessera::dataFormatName(df));
    CHECK(tileBytes(df) == tessera::tileSizeBytes(df));
    CHECK(tileBytes(df) % 32 == 0);
  }
  CHECK(tileBytes(DataFormat::Float32) == 4128); // 16 + 4096 = 4112 -> 4128
  CHECK(tileBytes(DataFormat::Float16) == 2080); // 16 + 2048 = 2064 -> 2080
  CHECK(tileBytes(DataFormat::Bfp8) == 1120);    // 16 + 64 + 1024 = 1104 -> 1120
  CHECK(tileBytes(DataFormat::Bfp4_b) == 608);   // 16 + 64 + 512 = 592 -> 608
  CHECK(tileBytes(DataFormat::Bfp2) == 352);     // 16 + 64 + 256 = 336 -> 352
  CHECK(tileBytes(DataFormat::Lf8) == 1056);     // 16 + 1024 = 1040 -> 1056
}

TEST_CASE("tile header: size in 16-byte units, rest zero", "[formats][tile]") {
  TileValues v{};
  for (DataFormat df : kAllFormats) {
    INFO(tessera::dataFormatName(df));
    const auto bytes = pack(df, v);
    CHECK(le32(bytes, 0) == tileBytes(df) / 16);
    for (size_t i = 4; i < kTileHeaderBytes; ++i) CHECK(bytes[i] == 0);
  }
  CHECK(le32(pack(DataFormat::Float16, v), 0) == 130); // 2080 / 16
}

TEST_CASE("Float16 tile: faces in order f0 f1 / f2 f3, row-major inside", "[formats][tile]") {
  TileValues v{};
  at(v, 0, 0) = 1.0f;    // face 0, index 0      -> offset 16
  at(v, 1, 0) = 3.0f;    // face 0, index 16     -> offset 16 + 32 = 48
  at(v, 0, 16) = 2.0f;   // face 1, index 256    -> offset 16 + 512 = 528
  at(v, 16, 0) = -1.0f;  // face 2, index 512    -> offset 16 + 1024 = 1040
  at(v, 31, 31) = 0.5f;  // face 3, index 768 + 15*16 + 15 = 1023 -> offset 16 + 2046 = 2062
  const auto b = pack(DataFormat::Float16, v);
  CHECK(le16(b, 16) == 0x3C00);
  CHECK(le16(b, 48) == 0x4200); // 3.0 = 1.5 * 2^1: field 16, mantissa 0x200
  CHECK(le16(b, 528) == 0x4000);
  CHECK(le16(b, 1040) == 0xBC00);
  CHECK(le16(b, 2062) == 0x3800);
  CHECK(b[16] == 0x00); // little-endian: low byte first
  CHECK(b[17] == 0x3C);
  for (size_t i = 2064; i < 2080; ++i) CHECK(b[i] == 0);
  CHECK(unpack(DataFormat::Float16, b) == v);
}

TEST_CASE("Float32 and Int32 tiles are little-endian words", "[formats][tile]") {
  TileValues v{};
  at(v, 0, 1) = 1.0f;  // index 1 -> offset 16 + 4
  at(v, 0, 2) = -1.0f; // index 2 -> offset 16 + 8
  const auto f32 = pack(DataFormat::Float32, v);
  CHECK(le32(f32, 20) == 0x3F800000u);
  CHECK(le32(f32, 24) == 0xBF800000u);
  const auto i32 = pack(DataFormat::Int32, v);
  CHECK(le32(i32, 20) == 0x00000001u);
  CHECK(le32(i32, 24) == 0x80000001u); // sign bit + magnitude 1 (not two's complement 0xFFFFFFFF)
  CHECK(unpack(DataFormat::Int32, i32) == v);
}

TEST_CASE("Bfp8_b tile: exponent bytes per face row, then sign-magnitude bytes", "[formats][tile]") {
  TileValues v{};
  at(v, 17, 3) = 4.0f;  // face 2, face row 1 -> exponent byte 16 + 2*16 + 1 = 49
                        // value index 512 + 16 + 3 = 531 -> offset 16 + 64 + 531 = 611
  at(v, 5, 20) = -8.0f; // face 1, face row 5 -> exponent byte 16 + 16 + 5 = 37
                        // value index 256 + 5*16 + 4 = 340 -> offset 420
  const auto b = pack(DataFormat::Bfp8_b, v);
  CHECK(b[49] == 129); // 4 = 2^2: 2 + 127
  CHECK(b[611] == 0x40); // alone in its block: hidden bit only, magnitude 64
  CHECK(b[37] == 130);   // 8 = 2^3
  CHECK(b[420] == 0xC0); // sign | 64
  CHECK(b[16] == 0);     // all-zero block: exponent 0
  CHECK(b[80] == 0);
  for (size_t i = 1104; i < 1120; ++i) CHECK(b[i] == 0);
  CHECK(unpack(DataFormat::Bfp8_b, b) == v);
}

TEST_CASE("Bfp8 (A) tile: exponent rebiased by 15", "[formats][tile]") {
  TileValues v{};
  at(v, 0, 0) = 1.0f;
  at(v, 0, 1) = 0.5f;      // same block, one step down: 32
  at(v, 1, 0) = 0x1p-15f;  // next block: exponent byte 0 yet a nonzero value
  const auto b = pack(DataFormat::Bfp8, v);
  CHECK(b[16] == 15);
  CHECK(b[80] == 0x40);
  CHECK(b[81] == 0x20);
  CHECK(b[17] == 0);
  CHECK(b[80 + 16] == 0x40);
  CHECK(unpack(DataFormat::Bfp8, b) == v);
}

TEST_CASE("Bfp tiles unpack hand-made bytes, extreme exponents included", "[formats][tile]") {
  // Bfp8_b, block 0 (face 0 row 0) with exponent byte 130 (2^3): magnitude
  // 0x40 is 1.0 x 8 = 8, 0x01 is 8 / 64 = 0.125, sign bit 0x80 negates, and
  // 0x80 alone is -0. Block 1 with exponent byte 1 (2^-126): 0x40 is 2^-126,
  // the smallest normal; 0x20 would be 2^-127, a denormal: flushed to +0,
  // and 0xA0 to -0. Block 2 with exponent byte 0: every value is 0. Block 3
  // with exponent byte 255 (2^128 overflows): 0x40 is +inf.
  std::vector<uint8_t> b(tileBytes(DataFormat::Bfp8_b), 0);
  b[16] = 130;
  b[80] = 0x40;
  b[81] = 0x01;
  b[82] = 0xC0;
  b[83] = 0x80;
  b[17] = 1;
  b[96] = 0x40;
  b[97] = 0x20;
  b[98] = 0xA0;
  b[18] = 0;
  b[112] = 0x7F;
  b[19] = 255;
  b[128] = 0x40;
  TileValues v{};
  unpackTile(DataFormat::Bfp8_b, b, v);
  CHECK(at(v, 0, 0) == 8.0f);
  CHECK(at(v, 0, 1) == 0.125f);
  CHECK(at(v, 0, 2) == -8.0f);
  CHECK(at(v, 0, 3) == 0.0f);
  CHECK(std::signbit(at(v, 0, 3)));
  CHECK(at(v, 1, 0) == std::numeric_limits<float>::min());
  CHECK(at(v, 1, 1) == 0.0f);
  CHECK_FALSE(std::signbit(at(v, 1, 1)));
  CHECK(std::signbit(at(v, 1, 2)));
  CHECK(at(v, 2, 0) == 0.0f);
  CHECK(at(v, 3, 0) == std::numeric_limits<float>::infinity());
  // Bfp2 (A): exponent byte 15 is 2^0; 1 magnitude bit, 4 values a byte,
  // the first in the low bits: codes 01 (1.0), 11 (-1.0), 00, 10 (-0).
  std::vector<uint8_t> b2(tileBytes(DataFormat::Bfp2), 0);
  b2[16] = 15;
  b2[80] = 0b10'00'11'01;
  TileValues v2{};
  unpackTile(DataFormat::Bfp2, b2, v2);
  CHECK(at(v2, 0, 0) == 1.0f);
  CHECK(at(v2, 0, 1) == -1.0f);
  CHECK(at(v2, 0, 2) == 0.0f);
  CHECK(at(v2, 0, 3) == 0.0f);
  CHECK(std::signbit(at(v2, 0, 3)));
}

TEST_CASE("Bfp4 and Bfp2 tiles pack the first value in the low bits", "[formats][tile]") {
  TileValues v{};
  // Block 0 of Bfp4_b: E = 0, step 0.25: 1.0 -> 4, 0.75 -> 3, -1.5 -> 8|6.
  at(v, 0, 0) = 1.0f;
  at(v, 0, 1) = 0.75f;
  at(v, 0, 2) = -1.5f;
  const auto b4 = pack(DataFormat::Bfp4_b, v);
  CHECK(b4[16] == 127);
  CHECK(b4[80] == 0x34); // value 1 in the high nibble, value 0 in the low nibble
  CHECK(b4[81] == 0x0E);
  // Bfp2_b: E = 0, step 1: 1.0 -> 01, 0.75 -> 1 (0.75 rounds up), -1.5 -> sign|1 = 11.
  const auto b2 = pack(DataFormat::Bfp2_b, v);
  CHECK(b2[80] == (0x1 | (0x1 << 2) | (0x3 << 4)));
  const auto u2 = unpack(DataFormat::Bfp2_b, b2);
  CHECK(u2[1] == 1.0f);
  CHECK(u2[2] == -1.0f);
}

TEST_CASE("byte formats: Int8 sign-magnitude, Lf8 and Fp8 codes", "[formats][tile]") {
  TileValues v{};
  at(v, 0, 0) = -5.0f;
  at(v, 0, 1) = 5.0f;
  // Int8's data starts after the exponent section when the netlist library reserves one.
  const size_t int8Data = tessera::tileSizeBytes(DataFormat::Int8) == 1120 ? 80 : 16;
  const auto i8 = pack(DataFormat::Int8, v);
  CHECK(i8[int8Data] == 0x85);
  CHECK(i8[int8Data + 1] == 0x05);
  for (size_t i = 16; i < int8Data; ++i) CHECK(i8[i] == 0);
  CHECK(unpack(DataFormat::Int8, i8) == v);

  TileValues g{};
  at(g, 0, 0) = 1.0f;   // Lf8: 0 01111 00 = 0x3C; E4M3: 0 0111 000 = 0x38
  at(g, 0, 1) = -1e9f;  // Lf8 saturates to 1 11111 11 = 0xFF; E4M3 to 1 1111 110 = 0xFE
  at(g, 0, 2) = std::numeric_limits<float>::quiet_NaN(); // E4M3: 0x7F; Lf8 saturates: 0x7F
  const auto lf8 = pack(DataFormat::Lf8, g);
  CHECK(lf8[16] == 0x3C);
  CHECK(lf8[17] == 0xFF);
  CHECK(lf8[18] == 0x7F);
  const auto e4 = pack(DataFormat::Fp8_e4m3, g);
  CHECK(e4[16] == 0x38);
  CHECK(e4[17] == 0xFE);
  CHECK(e4[18] == 0x7F);
}

TEST_CASE("raw formats are one row-major megarow", "[formats][tile]") {
  TileValues v{};
  at(v, 0, 16) = 7.0f; // row-major index 16 (face order would put it at 256)
  at(v, 1, 0) = 9.0f;  // row-major index 32
  const auto r8 = pack(DataFormat::RawUInt8, v);
  CHECK(r8[16 + 16] == 7);
  CHECK(r8[16 + 32] == 9);
  const auto r16 = pack(DataFormat::RawUInt16, v);
  CHECK(le16(r16, 16 + 32) == 7);
  const auto r32 = pack(DataFormat::RawUInt32, v);
  CHECK(le32(r32, 16 + 64) == 7);
  CHECK(unpack(DataFormat::RawUInt32, r32) == v);
}

TEST_CASE("pack/unpack round trips and agrees with quantize, every format", "[formats][tile]") {
  std::mt19937 rng(20240607);
  for (DataFormat df : kAllFormats) {
    INFO(tessera::dataFormatName(df));
    for (int trial = 0; trial < 20; ++trial) {
      const TileValues x = randomTile(rng, df);
      const auto bytes = pack(df, x);
      const TileValues y = unpack(df, bytes);
      CHECK(pack(df, y) == bytes); // pack -> unpack -> pack: identical bytes
      TileValues q = x;
      quantize(df, std::span<float>(q));
      size_t mismatches = 0;
      for (size_t i = 0; i < kTileValues; ++i) mismatches += sameValue(q[i], y[i]) ? 0 : 1;
      CHECK(mismatches == 0);
      TileValues yy = y; // quantize is idempotent on representable values
      quantize(df, std::span<float>(yy));
      for (size_t i = 0; i < kTileValues; ++i) mismatches += sameValue(yy[i], y[i]) ? 0 : 1;
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("pack and unpack check their buffer sizes", "[formats][tile]") {
  TileValues v{};
  std::vector<uint8_t> small(tileBytes(DataFormat::Float16) - 1);
  CHECK_THROWS_AS(packTile(DataFormat::Float16, v, small), std::invalid_argument);
  CHECK_THROWS_AS(unpackTile(DataFormat::Float16, small, v), std::invalid_argument);
}

// Every Float16_b code through unpackTile against the scalar decode
// (float16bToFloat32), bit for bit: signed zeros, denormal fields (read as
// zero), infinities and NaNs included.
TEST_CASE("Float16_b tile unpack: every code", "[formats][tile]") {
  size_t wrong = 0;
  for (uint32_t base = 0; base < 65536; base += 1024) {
    std::vector<uint8_t> tile(tileBytes(DataFormat::Float16_b), 0);
    for (uint32_t v = 0; v < 1024; ++v) {
      tile[kTileHeaderBytes + 2 * v] = static_cast<uint8_t>((base + v) & 0xFF);
      tile[kTileHeaderBytes + 2 * v + 1] = static_cast<uint8_t>((base + v) >> 8);
    }
    std::array<float, kTileValues> out{};
    unpackTile(DataFormat::Float16_b, tile, out);
    for (uint32_t v = 0; v < 1024; ++v) {
      // Storage order: faces f0 f1 / f2 f3 of 16x16, row-major inside.
      const uint32_t face = v / 256, r = v % 256 / 16, c = v % 16;
      const float got = out[(face / 2 * 16 + r) * 32 + face % 2 * 16 + c];
      const float want = float16bToFloat32(static_cast<uint16_t>(base + v));
      if (std::bit_cast<uint32_t>(got) != std::bit_cast<uint32_t>(want) && ++wrong <= 3)
        FAIL_CHECK("code 0x" << std::hex << base + v << ": got 0x" << std::bit_cast<uint32_t>(got) << " want 0x"
                             << std::bit_cast<uint32_t>(want));
    }
  }
  CHECK(wrong == 0);
}

// packTile of Float16_b against the scalar encode (float32ToFloat16b), bit
// for bit, on every Float16_b value and its neighbours (ties, values that
// round up into the next binade or to infinity) and random float bits
// (NaNs, infinities, denormals).
TEST_CASE("Float16_b tile pack: every code's value, neighbours and random bits", "[formats][tile]") {
  std::mt19937 rng(16);
  std::uniform_int_distribution<uint32_t> anyBits;
  size_t wrong = 0;
  for (uint32_t round = 0; round < 256; ++round) {
    std::array<float, kTileValues> x{};
    for (uint32_t v = 0; v < 1024; ++v) {
      const uint32_t code = (round * 256 + v / 4) & 0xFFFF;
      const uint32_t bits = code << 16;
      const uint32_t pick = v % 4;  // the value, +half a step (a tie), +half-1, random bits
      x[v] = std::bit_cast<float>(pick == 0 ? bits : pick == 1 ? bits + 0x8000 : pick == 2 ? bits + 0x7FFF : anyBits(rng));
    }
    std::vector<uint8_t> tile(tileBytes(DataFormat::Float16_b));
    packTile(DataFormat::Float16_b, x, tile);
    for (uint32_t v = 0; v < 1024; ++v) {
      const uint32_t face = v / 256, r = v % 256 / 16, c = v % 16;
      const float in = x[(face / 2 * 16 + r) * 32 + face % 2 * 16 + c];
      const uint32_t got = tile[kTileHeaderBytes + 2 * v] | (uint32_t{tile[kTileHeaderBytes + 2 * v + 1]} << 8);
      const uint32_t want = float32ToFloat16b(in);
      if (got != want && ++wrong <= 3)
        FAIL_CHECK("0x" << std::hex << std::bit_cast<uint32_t>(in) << ": got 0x" << got << " want 0x" << want);
    }
  }
  CHECK(wrong == 0);
}
