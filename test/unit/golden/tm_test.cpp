// TMs of the reference model: index mappings on small tensors whose values
// encode their own position, checked against the mapping written out here.
#include "golden/ops.hpp"
#include "golden/tm.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

using namespace tessera::golden;
using tessera::netlist::Pad;
using tessera::netlist::Tm;
using tessera::netlist::TmKind;

namespace {

constexpr int64_t T = 32;

// value = w*10^7 + z*10^5 + r*10^3 + c: distinct and exact in float32 for the
// sizes used here (r, c < 1000, z < 100, w < 2).
float code(int64_t w, int64_t z, int64_t r, int64_t c) { return float(w * 10000000 + z * 100000 + r * 1000 + c); }

Tensor coded(int64_t w, int64_t z, int64_t rows, int64_t cols) {
  Tensor t(w, z, rows, cols);
  for (int64_t wi = 0; wi < w; ++wi)
    for (int64_t zi = 0; zi < z; ++zi)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) t.at(wi, zi, r, c) = code(wi, zi, r, c);
  return t;
}

Tm makeTm(TmKind kind, char dim = 0, int64_t factor = 0) {
  Tm t;
  t.kind = kind;
  t.dim = dim;
  t.factor = factor;
  return t;
}

using Source = std::function<float(int64_t w, int64_t z, int64_t r, int64_t c)>;

// Counts output values that differ from `expected(w, z, r, c)`.
int mismatches(const Tensor& out, const Source& expected) {
  int n = 0;
  for (int64_t w = 0; w < out.w; ++w)
    for (int64_t z = 0; z < out.z; ++z)
      for (int64_t r = 0; r < out.r; ++r)
        for (int64_t c = 0; c < out.c; ++c)
          if (out.at(w, z, r, c) != expected(w, z, r, c)) ++n;
  return n;
}

} // namespace

TEST_CASE("broadcast replicates whole tiles", "[golden][tm][broadcast]") {
  SECTION("r: one tile row to three; out row r reads row r % 32") {
    const Tensor in = coded(1, 1, T, 2 * T);
    const Tensor out = applyTm(in, makeTm(TmKind::Broadcast, 'r', 3));
    REQUIRE(out.r == 3 * T);
    REQUIRE(out.c == 2 * T);
    CHECK(mismatches(out, [](int64_t w, int64_t z, int64_t r, int64_t c) { return code(w, z, r % T, c); }) == 0);
    CHECK(out.at(0, 0, 70, 5) == 6005.0f); // row 70 = tile 2, row 6
  }
  SECTION("r of two tile rows: the whole two-tile block repeats") {
    const Tensor out = applyTm(coded(1, 1, 2 * T, T), makeTm(TmKind::Broadcast, 'r', 2));
    REQUIRE(out.r == 4 * T);
    CHECK(mismatches(out, [](int64_t w, int64_t z, int64_t r, int64_t c) { return code(w, z, r % (2 * T), c); }) == 0);
  }
  SECTION("c: out column c reads column c % 32") {
    const Tensor out = applyTm(coded(1, 2, 2 * T, T), makeTm(TmKind::Broadcast, 'c', 2));
    REQUIRE(out.c == 2 * T);
    CHECK(mismatches(out, [](int64_t w, int64_t z, int64_t r, int64_t c) { return code(w, z, r, c % T); }) == 0);
    CHECK(out.at(0, 1, 3, 33) == 103001.0f); // z 1, row 3, col 33 -> col 1
  }
  SECTION("z: every slice is slice 0") {
    const Tensor out = applyTm(coded(2, 1, T, T), makeTm(TmKind::Broadcast, 'z', 4));
    REQUIRE(out.z == 4);
    CHECK(mismatches(out, [](int64_t w, int64_t, int64_t r, int64_t c) { return code(w, 0, r, c); }) == 0);
  }
  CHECK_THROWS_AS(applyTm(coded(1, 1, T, T), makeTm(TmKind::Broadcast, 'r', 0)), GoldenError);
}

TEST_CASE("tile_broadcast fills each tile from its row 0 or column 0", "[golden][tm][tile_broadcast]") {
  const Tensor in = coded(1, 1, 2 * T, 2 * T);
  const Tensor rows = applyTm(in, makeTm(TmKind::TileBroadcast, 'r'));
  CHECK(mismatches(rows, [](int64_t w, int64_t z, int64_t r, int64_t c) { return code(w, z, r - r % T, c); }) == 0);
  CHECK(rows.at(0, 0, 45, 7) == 32007.0f); // row 45 is in the tile starting at row 32
  const Tensor cols = applyTm(in, makeTm(TmKind::TileBroadcast, 'c'));
  CHECK(mismatches(cols, [](int64_t w, int64_t z, int64_t r, int64_t c) { return code(w, z, r, c - c % T); }) == 0);
  CHECK(cols.at(0, 0, 5, 40) == 5032.0f);
}

TEST_CASE("hslice moves column blocks into t, hstack undoes it", "[golden][tm][slice]") {
  // z 2 of 32x128 -> hslice 2 -> z 4 of 32x64: out slice z*2+s, col j = in slice z, col s*64 + j.
  const Tensor in = coded(1, 2, T, 4 * T);
  const Tensor sliced = applyTm(in, makeTm(TmKind::Hslice, 'c', 2));
  REQUIRE(sliced.z == 4);
  REQUIRE(sliced.c == 2 * T);
  CHECK(mismatches(sliced, [](int64_t w, int64_t z, int64_t r, int64_t c) {
          return code(w, z / 2, r, (z % 2) * 2 * T + c);
        }) == 0);
  CHECK(sliced.at(0, 1, 5, 3) == 5067.0f);   // slice 1 = (z 0, block 1): col 64 + 3
  CHECK(sliced.at(0, 2, 0, 0) == 100000.0f); // slice 2 = (z 1, block 0)

  const Tensor stacked = applyTm(sliced, makeTm(TmKind::Hstack, 'c', 2));
  CHECK(stacked.sameShape(in));
  CHECK(stacked.data == in.data);

  // hstack on its own: out slice z, col s*32 + j = in slice z*2 + s, col j.
  const Tensor out = applyTm(coded(1, 4, T, T), makeTm(TmKind::Hstack, 'c', 2));
  REQUIRE(out.z == 2);
  CHECK(mismatches(out, [](int64_t w, int64_t z, int64_t r, int64_t c) { return code(w, z * 2 + c / T, r, c % T); }) == 0);
}

TEST_CASE("vslice moves row blocks into t, vstack undoes it", "[golden][tm][slice]") {
  // 96x32 -> vslice 3 -> z 3 of 32x32: out slice s, row i = in row s*32 + i.
  const Tensor in = coded(2, 1, 3 * T, T);
  const Tensor sliced = applyTm(in, makeTm(TmKind::Vslice, 'r', 3));
  REQUIRE(sliced.z == 3);
  REQUIRE(sliced.r == T);
  CHECK(mismatches(sliced, [](int64_t w, int64_t z, int64_t r, int64_t c) { return code(w, 0, z * T + r, c); }) == 0);
  CHECK(sliced.at(1, 2, 1, 1) == 10065001.0f); // w 1, row 64 + 1, col 1

  const Tensor stacked = applyTm(sliced, makeTm(TmKind::Vstack, 'r', 3));
  CHECK(stacked.data == in.data);

  // vstack on its own: out row s*32 + i = in slice z*2 + s, row i.
  const Tensor out = applyTm(coded(1, 2, T, 2 * T), makeTm(TmKind::Vstack, 'r', 2));
  REQUIRE(out.z == 1);
  REQUIRE(out.r == 2 * T);
  CHECK(mismatches(out, [](int64_t w, int64_t, int64_t r, int64_t c) { return code(w, r / T, r % T, c); }) == 0);
}

TEST_CASE("transpose swaps rows and columns of every slice", "[golden][tm][transpose]") {
  const Tensor out = applyTm(coded(1, 2, T, 2 * T), makeTm(TmKind::Transpose));
  REQUIRE(out.r == 2 * T);
  REQUIRE(out.c == T);
  CHECK(mismatches(out, [](int64_t w, int64_t z, int64_t r, int64_t c) { return code(w, z, c, r); }) == 0);
  CHECK(out.at(0, 0, 40, 3) == 3040.0f); // = in row 3, col 40
  CHECK(out.at(0, 1, 0, 31) == 131000.0f);
}

TEST_CASE("pad adds tiles of pad_value, unpad removes them", "[golden][tm][pad]") {
  const Tensor in = coded(1, 1, T, T);
  Pad pad;
  pad.rt = 1;
  pad.ct = 2;
  pad.padValue = 7.0;
  const Tensor padded = padTiles(in, pad);
  REQUIRE(padded.r == 2 * T);
  REQUIRE(padded.c == 3 * T);
  CHECK(mismatches(padded, [](int64_t w, int64_t z, int64_t r, int64_t c) {
          return r < T && c < T ? code(w, z, r, c) : 7.0f;
        }) == 0);

  // The pad TM is the same operation.
  Tm padTm = makeTm(TmKind::Pad);
  padTm.pad = pad;
  CHECK(applyTm(in, padTm).data == padded.data);

  const Tensor unpadded = unpadTiles(padded, pad);
  CHECK(unpadded.sameShape(in));
  CHECK(unpadded.data == in.data);

  Pad tooMuch;
  tooMuch.rt = 1;
  CHECK_THROWS_AS(unpadTiles(in, tooMuch), GoldenError); // would leave no rows
}

TEST_CASE("applyTms applies in order", "[golden][tm]") {
  // 32x128 -> hslice 2 -> z 2 of 32x64 -> transpose -> z 2 of 64x32.
  // out slice z, row r, col c = sliced slice z, row c, col r = in row c, col z*64 + r.
  const Tensor out = applyTms(coded(1, 1, T, 4 * T), {makeTm(TmKind::Hslice, 'c', 2), makeTm(TmKind::Transpose)});
  REQUIRE(out.z == 2);
  REQUIRE(out.r == 2 * T);
  REQUIRE(out.c == T);
  CHECK(mismatches(out, [](int64_t w, int64_t z, int64_t r, int64_t c) { return code(w, 0, c, z * 2 * T + r); }) == 0);
  CHECK(applyTms(coded(1, 1, T, T), {}).data == coded(1, 1, T, T).data);
}

TEST_CASE("impossible TM shapes are GoldenErrors", "[golden][tm]") {
  // 2 column tiles cannot be cut in 3; t 2 cannot be stacked by 3.
  CHECK_THROWS_WITH(applyTm(coded(1, 1, T, 2 * T), makeTm(TmKind::Hslice, 'c', 3)), Catch::Contains("hslice"));
  CHECK_THROWS_AS(applyTm(coded(1, 2, T, T), makeTm(TmKind::Hstack, 'c', 3)), GoldenError);
  CHECK_THROWS_AS(applyTm(coded(1, 1, 3 * T, T), makeTm(TmKind::Vslice, 'r', 2)), GoldenError);
  CHECK_THROWS_AS(applyTm(coded(1, 3, T, T), makeTm(TmKind::Vstack, 'r', 2)), GoldenError);
  CHECK_THROWS_AS(applyTm(coded(1, 1, T, T), makeTm(TmKind::Vslice, 'r', 0)), GoldenError);
  // 64 columns are two tiles, but 4 slices of 16 columns would split tiles.
  CHECK_THROWS_AS(applyTm(coded(1, 1, T, 2 * T), makeTm(TmKind::Hslice, 'c', 4)), GoldenError);
  // Not whole tiles.
  CHECK_THROWS_AS(applyTm(coded(1, 1, 16, T), makeTm(TmKind::Transpose)), GoldenError);
}

TEST_CASE("chains of row-moving TMs give what applying them one by one gives", "[golden][tm]") {
  // applyTms gathers a chain of broadcast/hslice/hstack/vslice/vstack in one
  // pass; applyTm applies one TM at a time (with its own index mapping, the
  // one the tests above check against written-out mappings).
  const std::vector<Tm> kinds = {
      makeTm(TmKind::Broadcast, 'z', 2), makeTm(TmKind::Broadcast, 'r', 3), makeTm(TmKind::Broadcast, 'c', 2),
      makeTm(TmKind::Broadcast, 'c', 3), makeTm(TmKind::Hslice, 'c', 2),    makeTm(TmKind::Hstack, 'c', 2),
      makeTm(TmKind::Vslice, 'r', 2),    makeTm(TmKind::Vstack, 'r', 2),    makeTm(TmKind::Hslice, 'c', 3),
      makeTm(TmKind::Vstack, 'r', 3),    makeTm(TmKind::Transpose),
  };
  const Tensor in = coded(2, 6, 2 * T, 6 * T);
  int chains = 0, rejected = 0;
  for (const Tm& a : kinds)
    for (const Tm& b : kinds)
      for (const Tm& c : kinds) {
        const std::vector<Tm> chain{a, b, c};
        std::optional<Tensor> stepwise;
        std::string error;
        try {
          Tensor t = in;
          for (const Tm& tm : chain) t = applyTm(t, tm);
          stepwise = std::move(t);
        } catch (const GoldenError& e) {
          error = e.what();
        }
        if (!stepwise) {
          ++rejected;
          CHECK_THROWS_WITH(applyTms(in, chain), error);
          continue;
        }
        ++chains;
        const Tensor chained = applyTms(in, chain);
        REQUIRE(chained.sameShape(*stepwise));
        CHECK(mismatches(chained, [&](int64_t w, int64_t z, int64_t r, int64_t col) { return stepwise->at(w, z, r, col); }) == 0);
      }
  CHECK(chains > 500);
  CHECK(rejected > 50);
}

// A Bfp8_b operand with a transpose TM: the values are rounded to in_df as
// stored (one exponent per 16 values of a row), then transposed. Worked by
// hand: row 0 = [1 + 1/64, 0 x 15] has exponent 0 and a step of 2^-6, so
// 1.015625 is stored exactly; row 1 starts with 4.0. Transposed, column 0 is
// the block [1.015625, 4.0, 0 ...] with exponent 2 and a step of 2^-4: rounding
// it there (what the reference did before) would give 1.0.
TEST_CASE("unpackedOperand rounds a Bfp operand before its transpose", "[golden][tm]") {
  using tessera::netlist::DataFormat;
  using tessera::netlist::Operand;
  Tensor in(1, 1, T, T, 0.0f);
  in.at(0, 0, 0, 0) = 1.015625f;
  in.at(0, 0, 1, 0) = 4.0f;
  in.at(0, 0, 2, 0) = 0.1f; // alone in its block: 0.1 * 2^10 = 102.4 -> 102 * 2^-10
  Operand operand;
  operand.tms = {makeTm(TmKind::Transpose)};
  bool rounded = false;
  Tensor out = unpackedOperand(in, operand, DataFormat::Bfp8_b, rounded);
  CHECK(rounded);
  CHECK(out.at(0, 0, 0, 0) == 1.015625f);
  CHECK(out.at(0, 0, 0, 1) == 4.0f);
  CHECK(out.at(0, 0, 0, 2) == 0.099609375f);
  CHECK(out.at(0, 0, 1, 0) == 0.0f);

  SECTION("pad values are rounded on their own") {
    Pad pad;
    pad.ct = 1;
    pad.padValue = 0.1;
    operand.pad = pad;
    out = unpackedOperand(in, operand, DataFormat::Bfp8_b, rounded);
    REQUIRE(out.c == 2 * T);
    CHECK(out.at(0, 0, 5, T + 3) == 0.099609375f);
    CHECK(out.at(0, 0, 0, 0) == 1.015625f);
  }
  SECTION("no transpose or no Bfp in_df: TMs only, rounding is the op's") {
    out = unpackedOperand(in, operand, DataFormat::Float16_b, rounded);
    CHECK_FALSE(rounded);
    CHECK(out.at(0, 0, 0, 2) == 0.1f);
    operand.tms = {makeTm(TmKind::Hslice, 0, 1)};
    out = unpackedOperand(in, operand, DataFormat::Bfp8_b, rounded);
    CHECK_FALSE(rounded);
    CHECK(out.at(0, 0, 2, 0) == 0.1f);
  }
  SECTION("evalOp leaves an input marked rounded as it is") {
    OpSpec spec;
    spec.name = "tp";
    spec.type = "datacopy";
    spec.inDf = {DataFormat::Bfp8_b};
    spec.outDf = DataFormat::Float16_b;
    spec.accDf = DataFormat::Float16_b;
    std::vector<Tensor> inputs{out};
    CHECK(evalOp(spec, inputs).at(0, 0, 0, 0) == 1.0f); // rounded along the former column
    spec.inputRounded = {true};
    CHECK(evalOp(spec, inputs).at(0, 0, 0, 0) == 1.015625f);
  }
}
