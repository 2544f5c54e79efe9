// Tilize/untilize and the per-core tile stream order, checked against
// hand-written tile lists.
#include "formats/blocking.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

using namespace tessera::formats;
using tessera::DataFormat;
using tessera::UblockOrder;

namespace {

Blocking grid2x2(UblockOrder order, int64_t t = 1) {
  // Per core: mblock 2x2 ublocks of 1x2 tiles -> 2 tile rows, 4 tile cols.
  // Whole entry: 4 tile rows, 8 tile cols.
  Blocking b;
  b.gridR = 2;
  b.gridC = 2;
  b.t = t;
  b.mblockR = 2;
  b.mblockC = 2;
  b.ublockR = 1;
  b.ublockC = 2;
  b.order = order;
  return b;
}

std::vector<std::pair<int64_t, int64_t>> tilesOf(const std::vector<TileCoord>& order) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const TileCoord& c : order) out.emplace_back(c.rt, c.ct);
  return out;
}

using Tiles = std::vector<std::pair<int64_t, int64_t>>;

} // namespace

TEST_CASE("coreTileOrder, ublock_order r: ublock rows outer", "[formats][blocking]") {
  const Blocking b = grid2x2(UblockOrder::R);
  CHECK(b.rowTiles() == 4);
  CHECK(b.colTiles() == 8);
  CHECK(b.tilesPerCore() == 8);
  // Core (1,0): tile rows 2..3, cols 0..3. Ublocks (0,0) (0,1) (1,0) (1,1), each 1x2 tiles.
  CHECK(tilesOf(coreTileOrder(b, 1, 0)) == Tiles{{2, 0}, {2, 1}, {2, 2}, {2, 3}, {3, 0}, {3, 1}, {3, 2}, {3, 3}});
  // Core (0,1): tile rows 0..1, cols 4..7.
  CHECK(tilesOf(coreTileOrder(b, 0, 1)) == Tiles{{0, 4}, {0, 5}, {0, 6}, {0, 7}, {1, 4}, {1, 5}, {1, 6}, {1, 7}});
}

TEST_CASE("coreTileOrder, ublock_order c: ublock cols outer", "[formats][blocking]") {
  const Blocking b = grid2x2(UblockOrder::C);
  // Core (1,0): ublocks (0,0) (1,0) (0,1) (1,1); tiles inside a ublock stay row-major.
  CHECK(tilesOf(coreTileOrder(b, 1, 0)) == Tiles{{2, 0}, {2, 1}, {3, 0}, {3, 1}, {2, 2}, {2, 3}, {3, 2}, {3, 3}});
  CHECK(tilesOf(coreTileOrder(b, 1, 1)) == Tiles{{2, 4}, {2, 5}, {3, 4}, {3, 5}, {2, 6}, {2, 7}, {3, 6}, {3, 7}});
}

TEST_CASE("coreTileOrder: t outermost, tiles row-major inside a ublock", "[formats][blocking]") {
  Blocking b; // one core, mblock 1x2, ublock 2x2
  b.mblockC = 2;
  b.ublockR = 2;
  b.ublockC = 2;
  b.t = 2;
  const auto order = coreTileOrder(b, 0, 0);
  REQUIRE(order.size() == 16);
  const Tiles oneT{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}};
  for (size_t i = 0; i < order.size(); ++i) {
    CHECK(order[i].t == static_cast<int64_t>(i / 8));
    CHECK(std::pair(order[i].rt, order[i].ct) == oneT[i % 8]);
  }
  CHECK_THROWS_AS(coreTileOrder(b, 1, 0), std::invalid_argument);
}

TEST_CASE("tilize puts each tile where the stream order says", "[formats][blocking]") {
  const Blocking b = grid2x2(UblockOrder::C, 2);
  Tensor x(2, 2, 4 * 32, 8 * 32);
  // Every value of tile (t, rt, ct) of entry 1 is t*1000 + rt*100 + ct (exact in Float32).
  for (int64_t t = 0; t < 2; ++t)
    for (int64_t r = 0; r < x.r; ++r)
      for (int64_t c = 0; c < x.c; ++c) x.at(1, t, r, c) = static_cast<float>(t * 1000 + (r / 32) * 100 + c / 32);
  const auto cores = tilize(x, 1, b, DataFormat::Float32);
  REQUIRE(cores.size() == 4);
  const size_t tile = tileBytes(DataFormat::Float32);
  for (const auto& core : cores) CHECK(core.size() == 16 * tile);
  // Core index 2 = core (1,0); its 7th tile (k = 6) in t = 0 is (3,2) under order c,
  // and its 9th (k = 8) is the first of t = 1: (2,0).
  const auto first = [&](size_t coreIndex, size_t k) {
    float v;
    std::memcpy(&v, cores[coreIndex].data() + k * tile + kTileHeaderBytes, sizeof v);
    return v;
  };
  CHECK(first(2, 6) == 302.0f);
  CHECK(first(2, 8) == 1200.0f);
  CHECK(first(1, 2) == 104.0f); // core (0,1), third tile under order c: (1,4)
  CHECK(first(3, 15) == 1307.0f); // core (1,1), last tile: t 1, (3,7)

  Tensor back(2, 2, x.r, x.c, -1.0f);
  untilize(cores, b, DataFormat::Float32, back, 1);
  for (int64_t t = 0; t < 2; ++t)
    for (int64_t r = 0; r < x.r; ++r)
      for (int64_t c = 0; c < x.c; ++c) REQUIRE(back.at(1, t, r, c) == x.at(1, t, r, c));
  CHECK(back.at(0, 0, 0, 0) == -1.0f); // other entries untouched
}

TEST_CASE("tilize/untilize round trip equals quantize", "[formats][blocking]") {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (DataFormat df : {DataFormat::Float16_b, DataFormat::Bfp8, DataFormat::Bfp4_b, DataFormat::Int8,
                        DataFormat::RawUInt16}) {
    INFO(tessera::dataFormatName(df));
    for (UblockOrder order : {UblockOrder::R, UblockOrder::C}) {
      const Blocking b = grid2x2(order);
      Tensor x(1, 1, 4 * 32, 8 * 32);
      for (float& v : x.data) v = normal(rng);
      Tensor back(1, 1, x.r, x.c);
      untilize(tilize(x, 0, b, df), b, df, back, 0);
      quantize(df, x);
      CHECK(back.data == x.data);
    }
  }
}

TEST_CASE("tilize and untilize reject shape mismatches", "[formats][blocking]") {
  const Blocking b = grid2x2(UblockOrder::R);
  Tensor wrongRows(1, 1, 3 * 32, 8 * 32);
  CHECK_THROWS_AS(tilize(wrongRows, 0, b, DataFormat::Float16), std::invalid_argument);
  Tensor wrongT(1, 2, 4 * 32, 8 * 32);
  CHECK_THROWS_AS(tilize(wrongT, 0, b, DataFormat::Float16), std::invalid_argument);
  Tensor ok(1, 1, 4 * 32, 8 * 32);
  CHECK_THROWS_AS(tilize(ok, 1, b, DataFormat::Float16), std::invalid_argument); // no entry 1
  auto cores = tilize(ok, 0, b, DataFormat::Float16);
  cores.pop_back();
  CHECK_THROWS_AS(untilize(cores, b, DataFormat::Float16, ok, 0), std::invalid_argument);
  cores = tilize(ok, 0, b, DataFormat::Float16);
  cores[1].resize(10);
  CHECK_THROWS_AS(untilize(cores, b, DataFormat::Float16, ok, 0), std::invalid_argument);
}


TEST_CASE("tilize: RawUInt32 words from rawBits stay exact above 2^24", "[formats][blocking]") {
  // One tile; a sparse-matmul-like header word 0x01000001 becomes 0x01000000
  // through a float (24 significant bits).
  Blocking b;
  Tensor t(1, 1, 32, 32);
  t.rawBits.assign(t.data.size(), 0);
  const uint32_t words[3] = {0x01000001u, 0xC0000003u, 0xFFFFFFFFu};
  const size_t at[3] = {0, 1, 32 * 5 + 7}; // row-major positions [0,0], [0,1], [5,7]
  for (int i = 0; i < 3; ++i) {
    t.rawBits[at[i]] = words[i];
    t.data[at[i]] = static_cast<float>(words[i]);
  }
  auto cores = tilize(t, 0, b, DataFormat::RawUInt32);
  REQUIRE(cores.size() == 1);
  for (int i = 0; i < 3; ++i) {
    uint32_t got = 0;
    for (int byte = 0; byte < 4; ++byte) got |= uint32_t{cores[0][16 + at[i] * 4 + byte]} << (8 * byte);
    CHECK(got == words[i]);
  }
  // Without rawBits the float path rounds: the header word loses its low bit.
  t.rawBits.clear();
  auto rounded = tilize(t, 0, b, DataFormat::RawUInt32);
  uint32_t first = 0;
  for (int byte = 0; byte < 4; ++byte) first |= uint32_t{rounded[0][16 + byte]} << (8 * byte);
  CHECK(first == 0x01000000u);
}
