// Tiles smaller than 32x32 (tile_dim): sizes from BUDA's size_lib formula
// worked out by hand, the face layout of the stored values and the zero
// padding of the 32x32 register view (docs/data-formats.md "Tiny tiles").
#include "formats/blocking.hpp"
#include "formats/formats.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <random>
#include <vector>

using namespace tessera::formats;
using tessera::DataFormat;

namespace {

using TileValues = std::array<float, kTileValues>;
float& at(TileValues& v, int r, int c) { return v[static_cast<size_t>(r * 32 + c)]; }

std::vector<uint8_t> pack(DataFormat df, TileShape s, const TileValues& v) {
  std::vector<uint8_t> out(tileBytes(df, s), 0xAA);  // poison: every byte must be written
  packTile(df, s, v, out);
  return out;
}

} // namespace

TEST_CASE("tiny tile sizes follow size_lib: values + exponents + 32 bytes", "[formats][tiny]") {
  // Float16: 2 bytes a value, 16 header + 16 padding.
  CHECK(tileBytes(DataFormat::Float16, {1, 32}) == 32 * 2 + 32);
  CHECK(tileBytes(DataFormat::Float16, {16, 32}) == 512 * 2 + 32);
  CHECK(tileBytes(DataFormat::Float16, {32, 16}) == 1056);
  CHECK(tileBytes(DataFormat::Float32, {8, 32}) == 256 * 4 + 32);
  // Bfp8, full faces: one exponent byte per 16 values.
  CHECK(tileBytes(DataFormat::Bfp8, {16, 32}) == 512 + 32 + 32);
  CHECK(tileBytes(DataFormat::Bfp8_b, {32, 16}) == 512 + 32 + 32);
  // Bfp with fewer than 16 rows: a 16-byte exponent section, no padding.
  CHECK(tileBytes(DataFormat::Bfp8, {1, 32}) == 16 + 16 + 32);
  CHECK(tileBytes(DataFormat::Bfp8_b, {8, 32}) == 16 + 16 + 256);
  CHECK(tileBytes(DataFormat::Bfp4, {2, 32}) == 16 + 16 + 32);
  CHECK(tileBytes(DataFormat::Bfp2_b, {4, 32}) == 16 + 16 + 32);
  // 32x32 is unchanged.
  CHECK(tileBytes(DataFormat::Bfp8, {32, 32}) == 1120);
  CHECK(tileBytes(DataFormat::Float16_b, {32, 32}) == 2080);
}

TEST_CASE("tiny tile shapes", "[formats][tiny]") {
  for (uint32_t r : {1u, 2u, 4u, 8u, 16u, 32u}) CHECK(isSupportedTileShape({r, 32}));
  CHECK(isSupportedTileShape({32, 16}));
  CHECK_FALSE(isSupportedTileShape({16, 16}));
  CHECK_FALSE(isSupportedTileShape({3, 32}));
  TileValues v{};
  std::vector<uint8_t> out(4096);
  CHECK_THROWS_AS(packTile(DataFormat::Float16, {16, 16}, v, out), std::invalid_argument);
  std::vector<uint8_t> small(95);
  CHECK_THROWS_AS(packTile(DataFormat::Float16, {1, 32}, v, small), std::invalid_argument);
}

TEST_CASE("1x32 Float16: two 1x16 faces after the header", "[formats][tiny]") {
  TileValues v{};
  at(v, 0, 17) = 1.0f;   // face 1, row 0, col 1: stored value 17
  at(v, 5, 0) = 3.0f;    // outside the tile: not stored
  const auto b = pack(DataFormat::Float16, {1, 32}, v);
  REQUIRE(b.size() == 96);
  CHECK(b[0] == 96 / 16);  // header: size in 16-byte units
  CHECK(b[1] == 0);
  CHECK((b[16 + 17 * 2] | (b[16 + 17 * 2 + 1] << 8)) == 0x3C00);
  for (size_t i = 16 + 64; i < 96; ++i) CHECK(b[i] == 0);  // padding
  TileValues back{};
  back.fill(7.0f);
  unpackTile(DataFormat::Float16, {1, 32}, b, back);
  CHECK(at(back, 0, 17) == 1.0f);
  CHECK(at(back, 5, 0) == 0.0f);  // register view: zeros outside the tile
  CHECK(at(back, 0, 16) == 0.0f);
}

TEST_CASE("32x16 Float16: faces 0 and 2 only", "[formats][tiny]") {
  TileValues v{};
  at(v, 17, 3) = -2.0f;  // lower face, row 1, col 3: stored value 256 + 16 + 3
  at(v, 0, 20) = 5.0f;   // column 20 is outside a 32x16 tile
  const auto b = pack(DataFormat::Float16, {32, 16}, v);
  CHECK((b[16 + 275 * 2] | (b[16 + 275 * 2 + 1] << 8)) == 0xC000);
  TileValues back{};
  unpackTile(DataFormat::Float16, {32, 16}, b, back);
  CHECK(at(back, 17, 3) == -2.0f);
  CHECK(at(back, 0, 20) == 0.0f);
}

TEST_CASE("8x32 Bfp8_b: exponent per face row, then the values", "[formats][tiny]") {
  TileValues v{};
  at(v, 2, 20) = 1.0f;  // face 1 (cols 16..31), row 2: block 8 + 2 = 10; stored value 128 + 32 + 4
  const auto b = pack(DataFormat::Bfp8_b, {8, 32}, v);
  REQUIRE(b.size() == 288);
  CHECK(b[16 + 10] == 127);  // Bfp8_b: 8-bit exponent, 1.0 = 2^(127-127)
  CHECK(b[32 + 164] == 0x40);  // sign 0, magnitude 1.000000 with the hidden bit in bit 6
  TileValues back{};
  unpackTile(DataFormat::Bfp8_b, {8, 32}, b, back);
  CHECK(at(back, 2, 20) == 1.0f);
}

TEST_CASE("tiny tiles round-trip the quantized values of their corner", "[formats][tiny]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  const std::array<TileShape, 7> shapes{{{1, 32}, {2, 32}, {4, 32}, {8, 32}, {16, 32}, {32, 16}, {32, 32}}};
  for (DataFormat df : {DataFormat::Float32, DataFormat::Float16, DataFormat::Float16_b, DataFormat::Bfp8,
                        DataFormat::Bfp8_b, DataFormat::Bfp4_b})
    for (TileShape s : shapes) {
      TileValues v{};
      for (float& x : v) x = u(rng);
      const auto b = pack(df, s, v);
      TileValues back{};
      unpackTile(df, s, b, back);
      // Expected: the corner quantized like a 32x32 tile holding only it
      // (Bfp blocks are face rows, the same 16 values in both layouts).
      TileValues corner{};
      for (uint32_t r = 0; r < s.r; ++r)
        for (uint32_t c = 0; c < s.c; ++c) at(corner, r, c) = at(v, r, c);
      std::vector<uint8_t> full(tileBytes(df));
      packTile(df, corner, full);
      TileValues expect{};
      unpackTile(df, full, expect);
      INFO(tessera::dataFormatName(df) << " " << s.r << "x" << s.c);
      CHECK(back == expect);
      // Packing the unpacked values again gives the same bytes.
      CHECK(pack(df, s, back) == b);
    }
}

TEST_CASE("tilize with a tiny tile stores each tile's corner", "[formats][tiny]") {
  Blocking b;
  b.mblockC = 2;
  b.tile = {2, 32};
  Tensor t(1, 1, 32, 64);
  t.data[t.index(0, 0, 1, 33)] = 1.0f;   // tile 1, row 1, col 1: face 0 of tile 1, stored value 16 + 1
  t.data[t.index(0, 0, 2, 0)] = 9.0f;    // row 2: padding of tile 0, dropped
  const auto cores = tilize(t, 0, b, DataFormat::Float16_b);
  REQUIRE(cores.size() == 1);
  REQUIRE(cores[0].size() == 2 * (64 * 2 + 32));
  const size_t tile1 = 64 * 2 + 32;
  CHECK((cores[0][tile1 + 16 + 17 * 2] | (cores[0][tile1 + 16 + 17 * 2 + 1] << 8)) == 0x3F80);
  Tensor back(1, 1, 32, 64);
  untilize(cores, b, DataFormat::Float16_b, back, 0);
  CHECK(back.data[back.index(0, 0, 1, 33)] == 1.0f);
  CHECK(back.data[back.index(0, 0, 2, 0)] == 0.0f);
}
