// Tile maps of net2pipe (lib/pipe/tile_map.cpp): every TM against
// hand-worked expectations, then against the golden model's TMs (which move
// values, lib/golden/tm.cpp) on tensors whose every tile holds its own
// coordinates; tile location, kernel orders, runs, periods, windows.
#include "pipe/tile_map.hpp"

#include "golden/tm.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace tessera;
using namespace tessera::pipe;
using netlist::Tm;
using netlist::TmKind;
using netlist::UblockOrder;

namespace {

Tm mk(TmKind kind, int64_t factor = 0, char dim = 0) {
  Tm t;
  t.kind = kind;
  t.factor = factor;
  t.dim = dim;
  return t;
}
Tm padTm(int64_t rt, int64_t ct, double value) {
  Tm t;
  t.kind = TmKind::Pad;
  t.pad.rt = rt;
  t.pad.ct = ct;
  t.pad.padValue = value;
  return t;
}

OperandMap mapOf(TensorShape producer, std::vector<Tm> tms, std::optional<netlist::Pad> unpad = std::nullopt,
                 std::optional<netlist::Pad> pad = std::nullopt) {
  std::string why;
  auto m = OperandMap::build(producer, unpad, tms, pad, &why);
  INFO(why);
  REQUIRE(m);
  return *m;
}

TileRef src(const OperandMap& m, int64_t t, int64_t r, int64_t c) {
  TileSource s = m.source(TileRef{t, r, c});
  REQUIRE_FALSE(s.padding);
  return s.tile;
}

// A tile's coordinates as one exactly representable float.
float code(int64_t t, int64_t r, int64_t c) { return static_cast<float>(t * 10000 + r * 100 + c); }

// Every tile of every entry filled with its own code.
formats::Tensor codedTensor(TensorShape s) {
  formats::Tensor x(1, s.t, s.r * 32, s.c * 32);
  for (int64_t t = 0; t < s.t; ++t)
    for (int64_t r = 0; r < s.r * 32; ++r)
      for (int64_t c = 0; c < s.c * 32; ++c) x.at(0, t, r, c) = code(t, r / 32, c / 32);
  return x;
}

// The golden model applied to a coded tensor; then every operand tile must
// hold (in every value) the code of the tile the map names, or the pad value.
void checkAgainstGolden(TensorShape producer, const std::vector<Tm>& tms, std::optional<netlist::Pad> unpad = std::nullopt,
                        std::optional<netlist::Pad> pad = std::nullopt) {
  const OperandMap m = mapOf(producer, tms, unpad, pad);
  formats::Tensor x = codedTensor(producer);
  if (unpad) x = golden::unpadTiles(x, *unpad);
  x = golden::applyTms(x, tms);
  if (pad) x = golden::padTiles(x, *pad);
  const TensorShape out = m.operandShape();
  REQUIRE(x.z == out.t);
  REQUIRE(x.r == out.r * 32);
  REQUIRE(x.c == out.c * 32);
  for (int64_t t = 0; t < out.t; ++t)
    for (int64_t r = 0; r < out.r; ++r)
      for (int64_t c = 0; c < out.c; ++c) {
        const TileSource s = m.source(TileRef{t, r, c});
        const float want = s.padding ? static_cast<float>(s.padValue) : code(s.tile.t, s.tile.r, s.tile.c);
        // Corners and the middle of the tile (a transpose moves values inside it).
        for (auto [dr, dc] : {std::pair{0, 0}, {31, 31}, {5, 27}, {27, 5}}) {
          INFO("operand tile t=" << t << " r=" << r << " c=" << c);
          REQUIRE(x.at(0, t, r * 32 + dr, c * 32 + dc) == want);
        }
      }
}

} // namespace

TEST_CASE("broadcast maps every copy back to the one producer tile", "[pipe][tm]") {
  // Producer [t=1, 1x2]: broadcast r 3 gives [1, 3x2], every row reads row 0.
  OperandMap r = mapOf({1, 1, 2}, {mk(TmKind::Broadcast, 3, 'r')});
  CHECK(r.operandShape() == TensorShape{1, 3, 2});
  CHECK(src(r, 0, 2, 1) == TileRef{0, 0, 1});
  // [1, 2x1] broadcast c 4: [1, 2x4], column c reads column 0.
  OperandMap c = mapOf({1, 2, 1}, {mk(TmKind::Broadcast, 4, 'c')});
  CHECK(c.operandShape() == TensorShape{1, 2, 4});
  CHECK(src(c, 0, 1, 3) == TileRef{0, 1, 0});
  // [2, 1x1] broadcast z 3: [6, 1x1], slice z reads slice z % 2.
  OperandMap z = mapOf({2, 1, 1}, {mk(TmKind::Broadcast, 3, 'z')});
  CHECK(z.operandShape() == TensorShape{6, 1, 1});
  CHECK(src(z, 5, 0, 0) == TileRef{1, 0, 0});
  CHECK(src(z, 2, 0, 0) == TileRef{0, 0, 0});
}

TEST_CASE("hslice and hstack", "[pipe][tm]") {
  // [1, 2x6] hslice 3: [3, 2x2]; slice s holds columns 2s..2s+1.
  OperandMap hs = mapOf({1, 2, 6}, {mk(TmKind::Hslice, 3)});
  CHECK(hs.operandShape() == TensorShape{3, 2, 2});
  CHECK(src(hs, 0, 0, 0) == TileRef{0, 0, 0});
  CHECK(src(hs, 1, 0, 0) == TileRef{0, 0, 2});
  CHECK(src(hs, 2, 1, 1) == TileRef{0, 1, 5});
  // [2, 1x4] hslice 2: slices 0,1 from t 0, slices 2,3 from t 1.
  OperandMap hs2 = mapOf({2, 1, 4}, {mk(TmKind::Hslice, 2)});
  CHECK(src(hs2, 3, 0, 1) == TileRef{1, 0, 3});
  // [4, 2x1] hstack 2: [2, 2x2]; column c of slice z is slice 2z + c.
  OperandMap hk = mapOf({4, 2, 1}, {mk(TmKind::Hstack, 2)});
  CHECK(hk.operandShape() == TensorShape{2, 2, 2});
  CHECK(src(hk, 0, 1, 1) == TileRef{1, 1, 0});
  CHECK(src(hk, 1, 0, 0) == TileRef{2, 0, 0});
  CHECK(src(hk, 1, 1, 1) == TileRef{3, 1, 0});
  // hstack of 2-column slices: column 3 of slice 0 is column 1 of slice 1.
  OperandMap hk2 = mapOf({2, 1, 2}, {mk(TmKind::Hstack, 2)});
  CHECK(src(hk2, 0, 0, 3) == TileRef{1, 0, 1});
}

TEST_CASE("vslice and vstack", "[pipe][tm]") {
  // [1, 6x2] vslice 3: [3, 2x2]; slice s holds rows 2s..2s+1.
  OperandMap vs = mapOf({1, 6, 2}, {mk(TmKind::Vslice, 3)});
  CHECK(vs.operandShape() == TensorShape{3, 2, 2});
  CHECK(src(vs, 1, 0, 1) == TileRef{0, 2, 1});
  CHECK(src(vs, 2, 1, 0) == TileRef{0, 5, 0});
  // [4, 1x2] vstack 4: [1, 4x2]; row r is slice r.
  OperandMap vk = mapOf({4, 1, 2}, {mk(TmKind::Vstack, 4)});
  CHECK(vk.operandShape() == TensorShape{1, 4, 2});
  CHECK(src(vk, 0, 3, 1) == TileRef{3, 0, 1});
  // [4, 2x1] vstack 2: [2, 4x1]; rows 2-3 of slice 1 are slice 3.
  OperandMap vk2 = mapOf({4, 2, 1}, {mk(TmKind::Vstack, 2)});
  CHECK(src(vk2, 1, 3, 0) == TileRef{3, 1, 0});
}

TEST_CASE("transpose swaps tile rows and columns", "[pipe][tm]") {
  OperandMap t = mapOf({2, 2, 3}, {mk(TmKind::Transpose)});
  CHECK(t.operandShape() == TensorShape{2, 3, 2});
  CHECK(src(t, 1, 2, 0) == TileRef{1, 0, 2});
  CHECK(src(t, 0, 0, 1) == TileRef{0, 1, 0});
}

TEST_CASE("pad adds constant tiles at the bottom and right; unpad drops them", "[pipe][tm]") {
  OperandMap p = mapOf({1, 2, 2}, {padTm(1, 2, 0.5)});
  CHECK(p.operandShape() == TensorShape{1, 3, 4});
  CHECK(src(p, 0, 1, 1) == TileRef{0, 1, 1});
  TileSource s = p.source(TileRef{0, 2, 0});
  CHECK(s.padding);
  CHECK(s.padValue == 0.5);
  CHECK(p.source(TileRef{0, 0, 3}).padding);
  netlist::Pad un;
  un.rt = 1;
  un.ct = 1;
  OperandMap u = mapOf({1, 3, 3}, {}, un);
  CHECK(u.operandShape() == TensorShape{1, 2, 2});
  CHECK(src(u, 0, 1, 1) == TileRef{0, 1, 1});
  // input_N_pad comes after the TMs: [1, 2x1] transposed is 1x2, padded to 2x3.
  netlist::Pad pd;
  pd.rt = 1;
  pd.ct = 1;
  pd.padValue = -1.0;
  OperandMap tp = mapOf({1, 2, 1}, {mk(TmKind::Transpose)}, std::nullopt, pd);
  CHECK(tp.operandShape() == TensorShape{1, 2, 3});
  CHECK(src(tp, 0, 0, 1) == TileRef{0, 1, 0});
  CHECK(tp.source(TileRef{0, 1, 0}).padding);
  CHECK(tp.source(TileRef{0, 0, 2}).padValue == -1.0);
}

TEST_CASE("tile_broadcast moves no tiles", "[pipe][tm]") {
  OperandMap m = mapOf({1, 2, 2}, {mk(TmKind::TileBroadcast, 0, 'r')});
  CHECK(m.identity());
  CHECK(src(m, 0, 1, 0) == TileRef{0, 1, 0});
}

TEST_CASE("chains of TMs compose (hand-worked)", "[pipe][tm]") {
  // [1, 2x4] hslice 2 -> [2, 2x2], transpose -> [2, 2x2], vstack 2 -> [1, 4x2].
  // Operand (0, 3, 0): vstack row 3 = slice 1 row 1; transpose: (1, 0, 1);
  // hslice slice 1 col 1 = producer col 2 + 1 = 3: producer (0, 0, 3).
  OperandMap m = mapOf({1, 2, 4}, {mk(TmKind::Hslice, 2), mk(TmKind::Transpose), mk(TmKind::Vstack, 2)});
  CHECK(m.operandShape() == TensorShape{1, 4, 2});
  CHECK(src(m, 0, 3, 0) == TileRef{0, 0, 3});
  CHECK(src(m, 0, 0, 1) == TileRef{0, 1, 0});
}

TEST_CASE("tile maps agree with the golden model's TMs", "[pipe][tm][golden]") {
  checkAgainstGolden({1, 2, 3}, {mk(TmKind::Broadcast, 3, 'r')});
  checkAgainstGolden({1, 2, 3}, {mk(TmKind::Broadcast, 2, 'c')});
  checkAgainstGolden({2, 2, 1}, {mk(TmKind::Broadcast, 3, 'z')});
  checkAgainstGolden({2, 2, 6}, {mk(TmKind::Hslice, 3)});
  checkAgainstGolden({6, 2, 2}, {mk(TmKind::Hstack, 3)});
  checkAgainstGolden({2, 6, 2}, {mk(TmKind::Vslice, 2)});
  checkAgainstGolden({6, 1, 2}, {mk(TmKind::Vstack, 3)});
  checkAgainstGolden({2, 3, 2}, {mk(TmKind::Transpose)});
  checkAgainstGolden({1, 2, 3}, {padTm(2, 1, 3.0)});
  checkAgainstGolden({2, 2, 2}, {mk(TmKind::TileBroadcast, 0, 'c')});
  // Chains, as netlists write them.
  checkAgainstGolden({1, 4, 6}, {mk(TmKind::Hslice, 2), mk(TmKind::Transpose), mk(TmKind::Vstack, 2)});
  checkAgainstGolden({4, 1, 2}, {mk(TmKind::Hstack, 2), mk(TmKind::Broadcast, 2, 'r'), mk(TmKind::Vslice, 2)});
  checkAgainstGolden({1, 1, 1}, {mk(TmKind::Broadcast, 2, 'r'), mk(TmKind::Broadcast, 3, 'c'), mk(TmKind::Broadcast, 2, 'z')});
  checkAgainstGolden({3, 2, 4}, {mk(TmKind::Vslice, 2), mk(TmKind::Hstack, 6), mk(TmKind::Transpose)});
  netlist::Pad un;
  un.rt = 1;
  un.ct = 2;
  netlist::Pad pd;
  pd.rt = 2;
  pd.ct = 0;
  pd.padValue = -4.0;
  checkAgainstGolden({2, 3, 4}, {mk(TmKind::Hstack, 2), mk(TmKind::Transpose)}, un, pd);
}

TEST_CASE("locateTile inverts coreTileOrder", "[pipe][blocking]") {
  for (auto order : {UblockOrder::R, UblockOrder::C}) {
    formats::Blocking b;
    b.gridR = 2;
    b.gridC = 3;
    b.t = 2;
    b.mblockR = 2;
    b.mblockC = 3;
    b.ublockR = 2;
    b.ublockC = 1;
    b.order = order;
    for (int64_t cr = 0; cr < b.gridR; ++cr)
      for (int64_t cc = 0; cc < b.gridC; ++cc) {
        const auto tiles = formats::coreTileOrder(b, cr, cc);
        for (size_t k = 0; k < tiles.size(); ++k) {
          const TileLocation loc = locateTile(b, TileRef{tiles[k].t, tiles[k].rt, tiles[k].ct});
          REQUIRE(loc == TileLocation{cr, cc, static_cast<int64_t>(k)});
        }
      }
  }
  // Hand-worked: mblock [2, 2] of [1, 2] ublocks, column-major ublocks, one
  // core: tile (1, 2) is in ublock (1, 1) = the 4th (index 3): 3*2 + 0.
  formats::Blocking b;
  b.mblockR = 2;
  b.mblockC = 2;
  b.ublockR = 1;
  b.ublockC = 2;
  b.order = UblockOrder::C;
  CHECK(locateTile(b, TileRef{0, 1, 2}).index == 6);
  CHECK(locateTile(b, TileRef{0, 1, 1}).index == 3); // ublock (1, 0) = 2nd in column order
}

TEST_CASE("matmul operands: kernel order and origins", "[pipe][matmul]") {
  // The BUDA example netlist_gradient_accumulation: matmul grid [2, 2],
  // mblock [2, 2], ublock [2, 2], m_k 4, u_kt 2: in0 is [1, 8x8] from a
  // [2, 2] queue of mblock [2, 2] ublock [2, 2] (4x4 tiles per cell).
  KernelLayout in0{1, {2, 4}, {2, 2}, UblockOrder::C}; // {t, [m, m_k], [r, u_kt], c}
  const TensorShape operand{1, 8, 8};
  std::string why;
  auto o = coreOrigin(in0, operand, 2, 2, 1, 1, &why);
  REQUIRE(o);
  CHECK(o->row == 4); // core row 1: rows 4..7
  CHECK(o->col == 0); // every core of a row reads all of K: a row multicast
  auto o0 = coreOrigin(in0, operand, 2, 2, 0, 1, &why);
  REQUIRE(o0);
  CHECK(o0->row == 0);
  const auto tiles = consumerTiles(in0, o0->row, o0->col);
  REQUIRE(tiles.size() == 32);
  // Block kb=0 (columns 0-1): ublock rows 0-1 then 2-3, each 2x2 row-major.
  CHECK(tiles[0] == TileRef{0, 0, 0});
  CHECK(tiles[1] == TileRef{0, 0, 1});
  CHECK(tiles[2] == TileRef{0, 1, 0});
  CHECK(tiles[4] == TileRef{0, 2, 0});
  CHECK(tiles[8] == TileRef{0, 0, 2}); // block kb=1
  // In the queue cell (0, 0) (mblock [2, 2] of [2, 2] ublocks, row order),
  // those are tiles 0, 8, 4, 12 (chunks of 4), as BUDA's pipe lists them.
  formats::Blocking q;
  q.gridR = 2;
  q.gridC = 2;
  q.mblockR = 2;
  q.mblockC = 2;
  q.ublockR = 2;
  q.ublockC = 2;
  CHECK(locateTile(q, tiles[0]).index == 0);
  CHECK(locateTile(q, tiles[4]).index == 8);
  CHECK(locateTile(q, tiles[8]).index == 4);
  CHECK(locateTile(q, tiles[12]).index == 12);
  CHECK(locateTile(q, tiles[16]) == TileLocation{0, 1, 0});
  // in1 {t, [m_k, n], [u_kt, c], r}: all of K for the core's columns.
  KernelLayout in1{1, {4, 2}, {2, 2}, UblockOrder::R};
  auto o1 = coreOrigin(in1, operand, 2, 2, 1, 1, &why);
  REQUIRE(o1);
  CHECK(o1->row == 0);
  CHECK(o1->col == 4);
  // A layout that fits neither a share nor the whole operand is refused.
  CHECK_FALSE(coreOrigin(KernelLayout{1, {3, 1}, {1, 1}, UblockOrder::R}, operand, 2, 2, 0, 0, &why));
  CHECK(why.find("3 tile rows") != std::string::npos);
  CHECK_FALSE(coreOrigin(KernelLayout{2, {4, 4}, {1, 1}, UblockOrder::R}, operand, 2, 2, 0, 0, &why));
}

TEST_CASE("runs, periods and reorder windows", "[pipe][chunks]") {
  std::vector<SourceTile> tiles{{1, 0}, {1, 1}, {1, 2}, {2, 0}, {2, 1}, {1, 4}, {1, 5}, {1, 5}};
  const auto runs = toRuns(tiles);
  REQUIRE(runs.size() == 4);
  CHECK(runs[0] == Run{1, 0, 3});
  CHECK(runs[1] == Run{2, 0, 2});
  CHECK(runs[2] == Run{1, 4, 2});
  CHECK(runs[3] == Run{1, 5, 1});
  CHECK(smallestPeriod(std::vector<int>{7, 8, 7, 8, 7, 8}) == 2);
  CHECK(smallestPeriod(std::vector<int>{7, 8, 7, 8, 7}) == 5);
  CHECK(smallestPeriod(std::vector<int>{3, 3, 3}) == 1);
  CHECK(smallestPeriod(std::vector<int>{}) == 0);
  // In order: one slot. Reversed 4 tiles: the first read needs tile 3 while
  // nothing is freed: 4 slots. Transposed 2x3 (0 3 1 4 2 5): tile 0 is freed
  // after its read, so reading 3 needs slots for 1, 2, 3; reading 4 later
  // needs 2, 3, 4 (1 freed): 3 slots.
  CHECK(reorderWindow({0, 1, 2, 3}) == 1);
  CHECK(reorderWindow({3, 2, 1, 0}) == 4);
  CHECK(reorderWindow({0, 3, 1, 4, 2, 5}) == 3);
  // Broadcast: tile 0 read again at the end keeps it (and all later tiles) live.
  CHECK(reorderWindow({0, 1, 2, 0}) == 3);
  // Tiles this reader never takes are free at once.
  CHECK(reorderWindow({4, 5}) == 1);
  CHECK(reorderWindow({5, 4}) == 2);
}
