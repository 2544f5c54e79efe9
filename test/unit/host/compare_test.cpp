// Unit tests of lib/compare: Exact, AllClose, AllCloseHw on hand-made tensors,
// configFor() with overrides and tile ranges, and formatResult().
#include "compare/compare.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

using namespace tessera;
using compare::Config;
using compare::Method;
using formats::Tensor;

namespace {

// A [1][1][r][c] tensor holding 0, 1, 2, ... in row-major order (varied data
// so PCC is defined).
Tensor ramp(int64_t r, int64_t c) {
  Tensor t(1, 1, r, c);
  for (size_t i = 0; i < t.size(); ++i) t.data[i] = static_cast<float>(i);
  return t;
}

Config method(Method m, double atol = 0.01, double rtol = 0.0, double pct = 1.0, double pcc = 0.99) {
  Config c;
  c.method = m;
  c.atol = atol;
  c.rtol = rtol;
  c.checkPct = pct;
  c.checkPcc = pcc;
  return c;
}

netlist::ExtraField extra(const std::string& key, netlist::RawValue v) {
  netlist::ExtraField f;
  f.key = key;
  f.value = std::move(v);
  return f;
}

SourceLoc someLoc() {
  SourceLoc l;
  l.line = 1;
  l.col = 1;
  return l;
}

} // namespace

TEST_CASE("identical tensors pass every method with PCC 1", "[compare]") {
  Tensor a = ramp(32, 64);
  for (Method m : {Method::Exact, Method::AllClose, Method::AllCloseHw}) {
    auto r = compare::compareTensors(a, a, method(m));
    CHECK(r.pass);
    CHECK(r.pcc == 1.0);
    CHECK(r.maxAbsError == 0.0);
    CHECK(r.compared == 32 * 64);
    CHECK(r.mismatches == 0);
    CHECK(r.pctWithin == 1.0);
    CHECK(r.first.empty());
  }
}

TEST_CASE("one value beyond atol fails AllClose and is the first mismatch", "[compare]") {
  Tensor e = ramp(32, 32), a = e;
  a.at(0, 0, 3, 5) += 0.5f; // 101 -> 101.5: |diff| 0.5 > atol 0.01 (rtol 0)
  auto r = compare::compareTensors(e, a, method(Method::AllClose));
  CHECK_FALSE(r.pass);
  CHECK(r.mismatches == 1);
  CHECK(r.compared == 1024);
  CHECK(r.maxAbsError == Approx(0.5));
  REQUIRE(r.first.size() == 1);
  CHECK(r.first[0].r == 3);
  CHECK(r.first[0].c == 5);
  CHECK(r.first[0].expected == 101.0f); // 3 * 32 + 5
  CHECK(r.first[0].actual == 101.5f);
  CHECK(r.pctWithin == Approx(1023.0 / 1024.0));
  CHECK(r.failedTiles == 1);
  CHECK(r.reason.find("1 of 1 tiles fail") != std::string::npos);
}

TEST_CASE("mismatches are reported in row-major order, at most 8", "[compare]") {
  Tensor e(1, 2, 32, 64, 1.0f), a = e;
  // Put 10 mismatches in reverse order of position; the report is row-major.
  for (int i = 9; i >= 0; --i) a.at(0, i % 2, i, 40 - i) = 5.0f;
  auto r = compare::compareTensors(e, a, method(Method::Exact));
  CHECK_FALSE(r.pass);
  CHECK(r.mismatches == 10);
  REQUIRE(r.first.size() == 8);
  // z = 0 holds the even i (0, 2, ..., 8), all before z = 1.
  CHECK(r.first[0].z == 0);
  CHECK(r.first[0].r == 0);
  CHECK(r.first[0].c == 40);
  CHECK(r.first[4].z == 0);
  CHECK(r.first[4].r == 8);
  CHECK(r.first[5].z == 1);
  CHECK(r.first[5].r == 1);
  CHECK(r.first[5].c == 39);
  CHECK(r.reason == "10 of 4096 values differ");
}

TEST_CASE("rtol scales with the larger magnitude of the pair", "[compare]") {
  Tensor e(1, 1, 1, 2), a(1, 1, 1, 2);
  e.data = {100.0f, 100.0f};
  a.data = {109.0f, 111.0f};
  // atol 0, rtol 0.1: 109 vs 100 -> 9 <= 0.1*109 = 10.9 close; 111 -> 11 <= 11.1 close too.
  auto r = compare::compareTensors(e, a, method(Method::AllClose, 0.0, 0.1));
  CHECK(r.mismatches == 0);
  a.data[1] = 112.0f; // 12 > 11.2
  r = compare::compareTensors(e, a, method(Method::AllClose, 0.0, 0.1));
  CHECK(r.mismatches == 1);
}

TEST_CASE("AllClose passes when the tile's share within tolerance reaches check_pct", "[compare]") {
  Tensor e = ramp(32, 32), a = e;
  for (int c = 0; c < 32; ++c) a.at(0, 0, 0, c) += 1.0f; // one row of 32 off: 992 of 1024 within
  // 992 / 1024 = 0.96875
  CHECK(compare::compareTensors(e, a, method(Method::AllClose, 0.01, 0.0, 0.96)).pass);
  auto r = compare::compareTensors(e, a, method(Method::AllClose, 0.01, 0.0, 0.97));
  CHECK_FALSE(r.pass);
  CHECK(r.pctWithin == Approx(0.96875));
  CHECK(r.minTilePct == Approx(0.96875));
}

TEST_CASE("check_pct is judged per tile, not over the whole tensor", "[compare]") {
  Tensor e = ramp(32, 64), a = e;
  // 64 bad values, all in tile (0, 0): tile 0 has 960/1024 = 0.9375 within,
  // tile 1 is perfect; overall 1984/2048 = 0.96875.
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 32; ++c) a.at(0, 0, r, c) += 1.0f;
  auto res = compare::compareTensors(e, a, method(Method::AllClose, 0.01, 0.0, 0.95));
  CHECK(res.pctWithin == Approx(0.96875)); // over 0.95 ...
  CHECK_FALSE(res.pass);                   // ... but tile (0, 0) is below it
  CHECK(res.tiles == 2);
  CHECK(res.failedTiles == 1);
  CHECK(res.minTilePct == Approx(0.9375));
  CHECK(res.reason.find("tile [0,0,0,0]: within 93.75% < 95.00%") != std::string::npos);
}

TEST_CASE("AllCloseHw PCC on a 4-value example", "[compare]") {
  // expected x = 1, 2, 3, 4 (mean 2.5); actual y = 1, 3, 2, 4 (mean 2.5).
  // dx = -1.5 -0.5 0.5 1.5; dy = -1.5 0.5 -0.5 1.5
  // sum dx*dy = 2.25 - 0.25 - 0.25 + 2.25 = 4; sum dx^2 = sum dy^2 = 5
  // PCC = 4 / sqrt(5 * 5) = 0.8
  Tensor e(1, 1, 1, 4), a(1, 1, 1, 4);
  e.data = {1, 2, 3, 4};
  a.data = {1, 3, 2, 4};
  // atol 2: every pair is within (|diff| <= 1), so only PCC decides.
  auto pass = compare::compareTensors(e, a, method(Method::AllCloseHw, 2.0, 0.0, 1.0, 0.79));
  CHECK(pass.pcc == Approx(0.8).epsilon(1e-12));
  CHECK(pass.pass);
  auto fail = compare::compareTensors(e, a, method(Method::AllCloseHw, 2.0, 0.0, 1.0, 0.81));
  CHECK_FALSE(fail.pass);
  CHECK(fail.minTilePcc == Approx(0.8));
  CHECK(fail.reason.find("pcc 0.80000 < 0.81000") != std::string::npos);
  // check_pcc 0 disables the PCC check (BUDA).
  Tensor neg = a;
  neg.data = {4, 3, 2, 1}; // PCC -1
  CHECK(compare::compareTensors(e, neg, method(Method::AllCloseHw, 5.0, 0.0, 1.0, 0.0)).pass);
}

TEST_CASE("the whole output's PCC spans tiles with different means", "[compare]") {
  // Two tiles side by side. expected: tile 0 all 1, tile 1 all 3 (mean 2).
  // actual: tile 0 rows 0-15 are 1 and rows 16-31 are 2, tile 1 all 3
  // (mean 4608 / 2048 = 2.25). About the means: sxx = 2048 * 1 = 2048;
  // syy = 512 * 1.25^2 + 512 * 0.25^2 + 1024 * 0.75^2 = 1408;
  // sxy = 512 * 1.25 + 512 * 0.25 + 1024 * 0.75 = 1536;
  // pcc = 1536 / sqrt(2048 * 1408) = 1536 / (512 sqrt(11)) = 3 / sqrt(11).
  Tensor e(1, 1, 32, 64), a(1, 1, 32, 64);
  for (int64_t r = 0; r < 32; ++r)
    for (int64_t c = 0; c < 64; ++c) {
      e.at(0, 0, r, c) = c < 32 ? 1.0f : 3.0f;
      a.at(0, 0, r, c) = c < 32 ? (r < 16 ? 1.0f : 2.0f) : 3.0f;
    }
  auto r = compare::compareTensors(e, a, method(Method::AllClose, 1.0));
  CHECK(r.pass);
  CHECK(r.tiles == 2);
  CHECK(r.pcc == Approx(3.0 / std::sqrt(11.0)).epsilon(1e-12));
}

TEST_CASE("AllCloseHw fails on check_pct even with perfect PCC", "[compare]") {
  Tensor e(1, 1, 1, 4), a(1, 1, 1, 4);
  e.data = {1, 2, 3, 4};
  a.data = {2, 4, 6, 8}; // a = 2e: PCC exactly 1, but diffs 1, 2, 3, 4
  // atol 2.5, rtol 0: 1 and 2 within, 3 and 4 not: 2/4 = 0.5
  auto r = compare::compareTensors(e, a, method(Method::AllCloseHw, 2.5, 0.0, 0.6, 0.99));
  CHECK(r.pcc == Approx(1.0));
  CHECK(r.pctWithin == Approx(0.5));
  CHECK_FALSE(r.pass);
  CHECK(compare::compareTensors(e, a, method(Method::AllCloseHw, 2.5, 0.0, 0.5, 0.99)).pass);
}

TEST_CASE("PCC of constant tensors", "[compare]") {
  Tensor e(1, 1, 32, 32, 1.0f), a = e;
  auto same = compare::compareTensors(e, a, method(Method::AllCloseHw));
  CHECK(same.pcc == 1.0);
  CHECK(same.pass);
  // Constants that differ beyond tolerance: 0 (and the values fail anyway).
  Tensor b(1, 1, 32, 32, 2.0f);
  CHECK(compare::compareTensors(e, b, method(Method::AllCloseHw)).pcc == 0.0);
  // Constant close to constant (within atol): 1, as BUDA's "tiles identical" case.
  Tensor c(1, 1, 32, 32, 1.005f);
  CHECK(compare::compareTensors(e, c, method(Method::AllCloseHw, 0.01)).pcc == 1.0);
  // Negative constants too (BUDA's mean test is signed; ours uses magnitudes).
  Tensor n(1, 1, 32, 32, -1.0f);
  CHECK(compare::compareTensors(n, n, method(Method::AllCloseHw)).pass);
  // One side constant, the other not: 0.
  CHECK(compare::compareTensors(e, ramp(32, 32), method(Method::AllCloseHw)).pcc == 0.0);
}

TEST_CASE("NaN and infinity handling", "[compare]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Tensor e(1, 1, 1, 4), a(1, 1, 1, 4);
  e.data = {nan, inf, -inf, 1.0f};
  a.data = {nan, inf, -inf, 1.0f};
  CHECK(compare::compareTensors(e, a, method(Method::Exact)).pass);
  CHECK(compare::compareTensors(e, a, method(Method::AllClose)).pass);
  auto hw = compare::compareTensors(e, a, method(Method::AllCloseHw));
  CHECK(hw.pass);
  CHECK(hw.pcc == Approx(1.0)); // NaN -> 0, inf -> +-FLT_MAX on both sides

  a.data = {1.0f, -inf, 0x1p127f, 1.0f}; // NaN vs 1; inf vs -inf; -inf vs huge positive
  auto r = compare::compareTensors(e, a, method(Method::AllClose));
  CHECK(r.mismatches == 3);
  CHECK(std::isinf(r.maxAbsError));

  // A finite value of the same sign and magnitude >= 2^126 matches infinity.
  a.data = {nan, 0x1p126f, -0x1p127f, 1.0f};
  CHECK(compare::compareTensors(e, a, method(Method::AllClose)).mismatches == 0);
  a.data = {nan, 0x1p125f, -inf, 1.0f};
  CHECK(compare::compareTensors(e, a, method(Method::AllClose)).mismatches == 1);
}

TEST_CASE("Exact treats +0 and -0 as equal, as BUDA's float compare does", "[compare]") {
  Tensor e(1, 1, 1, 2), a(1, 1, 1, 2);
  e.data = {0.0f, 1.0f};
  a.data = {-0.0f, 1.0f};
  CHECK(compare::compareTensors(e, a, method(Method::Exact)).pass);
  a.data = {0.0f, std::nextafter(1.0f, 2.0f)}; // one ulp off
  CHECK_FALSE(compare::compareTensors(e, a, method(Method::Exact)).pass);
}

TEST_CASE("shape mismatch fails naming both shapes", "[compare]") {
  Tensor e(1, 1, 32, 32), a(1, 2, 32, 32);
  auto r = compare::compareTensors(e, a, method(Method::AllCloseHw));
  CHECK_FALSE(r.pass);
  CHECK(r.reason == "shape [1,1,32,32] expected vs [1,2,32,32] actual");
  CHECK(compare::formatResult("out", r) == "out: FAIL (shape [1,1,32,32] expected vs [1,2,32,32] actual)\n");
}

TEST_CASE("tile row/col ranges limit what is compared", "[compare]") {
  Tensor e = ramp(64, 64), a = e;
  // Garbage in rows 1..31 of every tile (value rows r % 32 != 0).
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c)
      if (r % 32 != 0) a.at(0, 0, r, c) = -7.0f;
  Config c = method(Method::AllCloseHw);
  CHECK_FALSE(compare::compareTensors(e, a, c).pass);
  c.tileRows = std::pair<int64_t, int64_t>{0, 1}; // check_tile_rows_range: [1, 1]
  auto r = compare::compareTensors(e, a, c);
  CHECK(r.pass);
  CHECK(r.compared == 4 * 32); // 4 tiles x 1 row x 32 cols
  CHECK(r.tiles == 4);
  // Columns too: [1, 16] keeps 16 of each row.
  c.tileCols = std::pair<int64_t, int64_t>{0, 16};
  CHECK(compare::compareTensors(e, a, c).compared == 4 * 16);
}

TEST_CASE("configFor reads base fields, extra ranges and BUDA defaults", "[compare]") {
  netlist::ComparisonConfig cc;
  cc.type.set("AllClose", someLoc());
  cc.atol.set(0.5, someLoc());
  cc.extra.push_back(extra("check_tile_rows_range", netlist::RawValue::array({1, 4})));
  cc.extra.push_back(extra("check_tile_cols_range", netlist::RawValue::array({2, 32})));
  cc.extra.push_back(extra("method", "tilizedtensor"));
  Config c = compare::configFor(cc, "q");
  CHECK(c.method == Method::AllClose);
  CHECK(c.atol == 0.5);
  CHECK(c.rtol == 1e-4);     // BUDA DEFAULT_RTOL
  CHECK(c.checkPct == 1.0);  // BUDA DEFAULT_PCT_MATCHED
  CHECK(c.checkPcc == 0.999); // BUDA DEFAULT_PCC_THRESH
  REQUIRE(c.tileRows);
  CHECK(*c.tileRows == std::pair<int64_t, int64_t>{0, 4}); // 1-based inclusive [1, 4] -> [0, 4)
  REQUIRE(c.tileCols);
  CHECK(*c.tileCols == std::pair<int64_t, int64_t>{1, 32});

  netlist::ComparisonConfig lowerCase;
  lowerCase.type.set("allclosehw", someLoc());
  CHECK(compare::configFor(lowerCase, "q").method == Method::AllCloseHw);
}

TEST_CASE("configFor: the first matching override merges over the base", "[compare]") {
  netlist::ComparisonConfig cc;
  cc.type.set("AllCloseHw", someLoc());
  cc.atol.set(0.01, someLoc());
  cc.rtol.set(0.15, someLoc());
  cc.checkPct.set(0.5, someLoc());
  cc.checkPcc.set(0.99, someLoc());
  netlist::ComparisonConfig weights;
  weights.checkPcc.set(0.9, someLoc());
  netlist::ComparisonConfig any;
  any.type.set("Exact", someLoc());
  netlist::ComparisonConfig exactName;
  exactName.atol.set(3.0, someLoc());
  cc.overrides.emplace_back(".*\\.weight", weights);
  cc.overrides.emplace_back(".*", any);
  cc.overrides.emplace_back("named.q", exactName);

  Config w = compare::configFor(cc, "layer.0.weight");
  CHECK(w.checkPcc == 0.9);              // from the override
  CHECK(w.method == Method::AllCloseHw); // from the base
  CHECK(w.checkPct == 0.5);
  // regex_match needs the whole name: "x.weight.grad" skips the first pattern.
  CHECK(compare::configFor(cc, "x.weight.grad").method == Method::Exact);
  // An exact name wins over earlier patterns (BUDA looks names up first).
  Config n = compare::configFor(cc, "named.q");
  CHECK(n.atol == 3.0);
  CHECK(n.method == Method::AllCloseHw);
}

TEST_CASE("configFor rejects bad input", "[compare]") {
  netlist::ComparisonConfig cc;
  cc.type.set("Fuzzy", someLoc());
  CHECK_THROWS_AS(compare::configFor(cc, "q"), std::invalid_argument);
  CHECK_THROWS_WITH(compare::configFor(cc, "q"), Catch::Contains("Fuzzy"));

  netlist::ComparisonConfig range;
  range.extra.push_back(extra("check_tile_rows_range", netlist::RawValue::array({0, 4})));
  CHECK_THROWS_WITH(compare::configFor(range, "q"), Catch::Contains("check_tile_rows_range"));
  range.extra[0].value = netlist::RawValue::array({5, 33});
  CHECK_THROWS_AS(compare::configFor(range, "q"), std::invalid_argument);
  range.extra[0].value = netlist::RawValue::array({5, 4});
  CHECK_THROWS_AS(compare::configFor(range, "q"), std::invalid_argument);
  range.extra[0].value = 4;
  CHECK_THROWS_AS(compare::configFor(range, "q"), std::invalid_argument);

  netlist::ComparisonConfig regex;
  regex.overrides.emplace_back("(", netlist::ComparisonConfig{});
  CHECK_THROWS_WITH(compare::configFor(regex, "q"), Catch::Contains("not a valid regex"));
}

TEST_CASE("formatResult lines", "[compare]") {
  Tensor e(1, 1, 1, 4), a(1, 1, 1, 4);
  e.data = {1, 2, 3, 4};
  CHECK(compare::formatResult("out0", compare::compareTensors(e, e, method(Method::AllCloseHw))) ==
        "out0: PASS max_abs=0.000000 pcc=1.00000 within=100.00%\n");
  a.data = {1, 2, 3, 4.5f};
  // One of four off by 0.5 > atol 0.01: within 75%. PCC of (1,2,3,4) and
  // (1,2,3,4.5): means 2.5 and 2.625; dx = -1.5 -.5 .5 1.5; dy = -1.625 -.625
  // .375 1.875; sxy = 2.4375+.3125+.1875+2.8125 = 5.75; sxx = 5;
  // syy = 2.640625+.390625+.140625+3.515625 = 6.6875;
  // pcc = 5.75 / sqrt(33.4375) = 5.75 / 5.78252 = 0.994377 -> "0.99438"
  auto r = compare::compareTensors(e, a, method(Method::AllCloseHw));
  CHECK(r.pcc == Approx(5.75 / std::sqrt(33.4375)));
  CHECK(compare::formatResult("out0", r) ==
        "out0: FAIL max_abs=0.500000 pcc=0.99438 within=75.00% (1 of 1 tiles fail; first tile [0,0,0,0]: within "
        "75.00% < 100.00%)\n"
        "  mismatch at [0,0,0,3]: expected 4 got 4.5\n");
}
