// Unit tests of lib/host stimulus: config resolution, deterministic seeding,
// and the values of every stimulus type.
#include "host/stimulus.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>

using namespace tessera;
using host::Stimulus;
using host::StimulusKind;

namespace {

SourceLoc someLoc() {
  SourceLoc l;
  l.line = 1;
  l.col = 1;
  return l;
}

netlist::ExtraField extra(const std::string& key, netlist::RawValue v) {
  netlist::ExtraField f;
  f.key = key;
  f.value = std::move(v);
  return f;
}

// Independent references for the seeding, checked against published vectors below.
uint64_t refFnv1a64(const std::string& s) {
  uint64_t h = 14695981039346656037ull; // FNV-1a 64 offset basis
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull; // FNV 64 prime
  return h;
}

uint64_t refSplitMix64(uint64_t state) {
  uint64_t z = state + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Stimulus of(StimulusKind k) {
  Stimulus s;
  s.kind = k;
  return s;
}

} // namespace

TEST_CASE("reference hashes match published test vectors", "[stimulus]") {
  CHECK(refFnv1a64("") == 0xcbf29ce484222325ull);
  CHECK(refFnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(refFnv1a64("foobar") == 0x85944171f73967e8ull);
  CHECK(refSplitMix64(0) == 0xe220a8397b1dcdafull); // first output of SplitMix64 seeded with 0
}

TEST_CASE("entrySeed follows the documented formula", "[stimulus]") {
  for (uint64_t seed : {0ull, 1ull, 0xdeadbeefull})
    for (int64_t entry : {0, 1, 7})
      for (const char* q : {"", "input0", "layer.0.weight"}) {
        uint64_t want =
            refSplitMix64(refSplitMix64(refSplitMix64(seed) ^ refFnv1a64(q)) ^ static_cast<uint64_t>(entry));
        CHECK(host::entrySeed(seed, q, entry) == want);
      }
}

TEST_CASE("generation is deterministic per (seed, queue, entry)", "[stimulus]") {
  Stimulus u = of(StimulusKind::Uniform);
  auto a = host::generateEntry(u, 2, 32, 64, 42, "in0", 3);
  auto b = host::generateEntry(u, 2, 32, 64, 42, "in0", 3);
  CHECK(a.data == b.data);
  CHECK(a.w == 1);
  CHECK(a.z == 2);
  CHECK(a.r == 32);
  CHECK(a.c == 64);
  CHECK(host::generateEntry(u, 2, 32, 64, 42, "in0", 4).data != a.data);
  CHECK(host::generateEntry(u, 2, 32, 64, 42, "in1", 3).data != a.data);
  CHECK(host::generateEntry(u, 2, 32, 64, 43, "in0", 3).data != a.data);
  Stimulus n = of(StimulusKind::Normal);
  CHECK(host::generateEntry(n, 1, 32, 32, 5, "x", 0).data == host::generateEntry(n, 1, 32, 32, 5, "x", 0).data);
}

TEST_CASE("Uniform values: the transform is pinned and the bounds hold", "[stimulus]") {
  Stimulus u = of(StimulusKind::Uniform);
  u.lower = -2.0;
  u.upper = 6.0;
  auto t = host::generateEntry(u, 4, 64, 64, 7, "act", 0);
  // First values by hand: mt19937_64 seeded with the entry seed; top 53 bits / 2^53.
  std::mt19937_64 g(refSplitMix64(refSplitMix64(refSplitMix64(7) ^ refFnv1a64("act")) ^ 0));
  for (int i = 0; i < 3; ++i) {
    double unit = static_cast<double>(g() >> 11) / 9007199254740992.0; // 2^53
    CHECK(t.data[i] == static_cast<float>(-2.0 + 8.0 * unit));
  }
  double sum = 0;
  for (float v : t.data) {
    REQUIRE(v >= -2.0f);
    REQUIRE(v <= 6.0f);
    sum += v;
  }
  // 16384 values of U[-2, 6]: mean 2, stddev 8/sqrt(12) = 2.309; the mean's
  // stddev is 2.309/128 = 0.018; allow 5 of them.
  CHECK(std::fabs(sum / static_cast<double>(t.size()) - 2.0) < 0.09);
}

TEST_CASE("Normal values: Box-Muller pinned, mean and stddev within tolerance", "[stimulus]") {
  Stimulus n = of(StimulusKind::Normal);
  n.mean = 3.0;
  n.stddev = 0.5;
  auto t = host::generateEntry(n, 8, 64, 64, 11, "w", 2);
  std::mt19937_64 g(refSplitMix64(refSplitMix64(refSplitMix64(11) ^ refFnv1a64("w")) ^ 2));
  double u1 = static_cast<double>((g() >> 11) + 1) / 9007199254740992.0; // (0, 1]
  double u2 = static_cast<double>(g() >> 11) / 9007199254740992.0;       // [0, 1)
  double radius = std::sqrt(-2.0 * std::log(u1));
  CHECK(t.data[0] == static_cast<float>(3.0 + 0.5 * radius * std::cos(2.0 * std::numbers::pi * u2)));
  CHECK(t.data[1] == static_cast<float>(3.0 + 0.5 * radius * std::sin(2.0 * std::numbers::pi * u2)));

  double sum = 0, sq = 0;
  for (float v : t.data) sum += v;
  double mean = sum / static_cast<double>(t.size());
  for (float v : t.data) sq += (v - mean) * (v - mean);
  double sd = std::sqrt(sq / static_cast<double>(t.size() - 1));
  // N = 32768: the mean's stddev is 0.5/181 = 0.0028 (allow 5x); the sample
  // stddev's is about 0.5/sqrt(2N) = 0.002 (allow 5x).
  CHECK(std::fabs(mean - 3.0) < 0.014);
  CHECK(std::fabs(sd - 0.5) < 0.01);
}

TEST_CASE("Constant, Step and StepRowwise values by hand", "[stimulus]") {
  Stimulus c = of(StimulusKind::Constant);
  c.constant = -1.5;
  auto ct = host::generateEntry(c, 2, 32, 32, 0, "q", 0);
  for (float v : ct.data) REQUIRE(v == -1.5f);

  Stimulus s = of(StimulusKind::Step);
  s.stepStart = 10;
  s.stepIncrement = 0.5;
  auto st = host::generateEntry(s, 2, 32, 64, 0, "q", 5);
  CHECK(st.at(0, 0, 0, 0) == 10.0f);
  CHECK(st.at(0, 0, 0, 1) == 10.5f);
  CHECK(st.at(0, 0, 1, 0) == 42.0f);      // index 64: 10 + 32
  CHECK(st.at(0, 1, 2, 3) == 1099.5f);    // index (32 + 2) * 64 + 3 = 2179: 10 + 1089.5
  CHECK(st.at(0, 1, 31, 63) == 2057.5f);  // last index 4095: 10 + 2047.5
  // The entry index does not shift the sequence: each entry restarts.
  CHECK(host::generateEntry(s, 2, 32, 64, 0, "q", 0).data == st.data);

  Stimulus rw = of(StimulusKind::StepRowwise);
  rw.stepStart = 0;
  rw.stepIncrement = 1;
  auto rt = host::generateEntry(rw, 2, 64, 96, 0, "idx", 0);
  CHECK(rt.at(0, 0, 0, 0) == 0.0f);
  CHECK(rt.at(0, 0, 0, 95) == 95.0f);
  CHECK(rt.at(0, 1, 63, 40) == 40.0f); // every row counts its columns
}

TEST_CASE("DebugTileId numbers tiles row-major and fills whole tiles", "[stimulus]") {
  Stimulus d = of(StimulusKind::DebugTileId);
  d.tileIdBase = 0.25;
  d.tileIdStep = 0.2;
  d.tileRows = std::pair<int64_t, int64_t>{0, 1}; // ignored for DebugTileId (as BUDA)
  // t = 2, 64 x 96 values = 2 x 3 tiles per t.
  auto t = host::generateEntry(d, 2, 64, 96, 0, "q", 0);
  CHECK(t.at(0, 0, 0, 0) == 0.25f);                            // tile 0
  CHECK(t.at(0, 0, 31, 31) == 0.25f);                          // same tile, last value
  CHECK(t.at(0, 0, 0, 32) == static_cast<float>(0.25 + 0.2));  // tile 1
  CHECK(t.at(0, 0, 32, 0) == static_cast<float>(0.25 + 0.6));  // tile 3: second tile row
  CHECK(t.at(0, 1, 40, 70) == static_cast<float>(0.25 + 2.2)); // t 1, tile row 1, col 2: (1*2+1)*3+2 = 11
}

TEST_CASE("set_tile_rows / set_tile_cols zero the rest of each tile", "[stimulus]") {
  Stimulus c = of(StimulusKind::Constant);
  c.constant = 1.0;
  c.tileRows = std::pair<int64_t, int64_t>{0, 1}; // set_tile_rows: [1, 1]
  auto t = host::generateEntry(c, 1, 64, 64, 0, "bias", 0);
  for (int r = 0; r < 64; ++r)
    for (int col = 0; col < 64; ++col) REQUIRE(t.at(0, 0, r, col) == (r % 32 == 0 ? 1.0f : 0.0f));

  c.tileRows.reset();
  c.tileCols = std::pair<int64_t, int64_t>{8, 16}; // set_tile_cols: [9, 16]
  t = host::generateEntry(c, 1, 32, 64, 0, "bias", 0);
  for (int col = 0; col < 64; ++col) CHECK(t.at(0, 0, 5, col) == ((col % 32 >= 8 && col % 32 < 16) ? 1.0f : 0.0f));

  Stimulus u = of(StimulusKind::Uniform);
  u.lower = 1.0;
  u.upper = 2.0;
  u.tileRows = std::pair<int64_t, int64_t>{0, 4};
  t = host::generateEntry(u, 1, 32, 32, 0, "x", 0);
  for (int r = 0; r < 32; ++r) CHECK((t.at(0, 0, r, 0) >= 1.0f) == (r < 4));
}

TEST_CASE("stimulusFor: null config, base fields, overrides", "[stimulus]") {
  Stimulus d = host::stimulusFor(nullptr, "q");
  CHECK(d.kind == StimulusKind::Uniform);
  CHECK(d.lower == -1.0);
  CHECK(d.upper == 1.0);

  netlist::StimulusConfig cfg;
  cfg.type.set("Uniform", someLoc());
  cfg.uniformLowerBound.set(-2.0, someLoc());
  cfg.uniformUpperBound.set(2.0, someLoc());
  netlist::StimulusConfig weight;
  weight.type.set("Normal", someLoc());
  weight.normalMean.set(0.0, someLoc());
  weight.normalStddev.set(0.01, someLoc());
  netlist::StimulusConfig bias;
  bias.type.set("constant", someLoc()); // BUDA matches type names case-insensitively
  bias.constantValue.set(1.0, someLoc());
  bias.extra.push_back(extra("set_tile_rows", netlist::RawValue::array({1, 1})));
  netlist::StimulusConfig indices;
  indices.type.set("StepRowwise", someLoc());
  indices.stepStart.set(0, someLoc());
  indices.stepIncrement.set(1, someLoc());
  cfg.overrides.emplace_back(".*\\.weight", weight);
  cfg.overrides.emplace_back(".*\\.bias", bias);
  cfg.overrides.emplace_back("indices", indices);

  Stimulus base = host::stimulusFor(&cfg, "act");
  CHECK(base.kind == StimulusKind::Uniform);
  CHECK(base.lower == -2.0);
  CHECK(base.upper == 2.0);
  Stimulus w = host::stimulusFor(&cfg, "l0.weight");
  CHECK(w.kind == StimulusKind::Normal);
  CHECK(w.stddev == 0.01);
  CHECK(w.lower == -2.0); // merged from the base; unused by Normal
  Stimulus b = host::stimulusFor(&cfg, "l0.bias");
  CHECK(b.kind == StimulusKind::Constant);
  REQUIRE(b.tileRows);
  CHECK(*b.tileRows == std::pair<int64_t, int64_t>{0, 1});
  CHECK_FALSE(b.tileCols);
  CHECK(host::stimulusFor(&cfg, "l0.bias.extra").kind == StimulusKind::Uniform); // whole-name match only
  CHECK(host::stimulusFor(&cfg, "indices").kind == StimulusKind::StepRowwise);

  netlist::StimulusConfig untyped; // only overrides (as some corpus netlists): the default type
  CHECK(host::stimulusFor(&untyped, "q").kind == StimulusKind::Uniform);

  netlist::StimulusConfig tile;
  tile.type.set("DebugTileId", someLoc());
  tile.debugTileIdBase.set(1.0, someLoc());
  tile.debugTileIdStep.set(0.25, someLoc());
  Stimulus ts = host::stimulusFor(&tile, "q");
  CHECK(ts.kind == StimulusKind::DebugTileId);
  CHECK(ts.tileIdBase == 1.0);
  CHECK(ts.tileIdStep == 0.25);
}

TEST_CASE("stimulusFor rejects unknown and unsupported types and bad fields", "[stimulus]") {
  netlist::StimulusConfig cfg;
  cfg.type.set("Gaussian", someLoc());
  CHECK_THROWS_AS(host::stimulusFor(&cfg, "q"), std::invalid_argument);
  CHECK_THROWS_WITH(host::stimulusFor(&cfg, "q"), Catch::Contains("unknown stimulus type 'Gaussian'"));

  cfg.type.set("sparse", someLoc());
  CHECK_THROWS_WITH(host::stimulusFor(&cfg, "q"), Catch::Contains("needs matmul_ident_name"));
  cfg.type.set("sparse_encoding", someLoc());
  CHECK_THROWS_WITH(host::stimulusFor(&cfg, "q"), Catch::Contains("needs matmul_ident_name"));
  cfg.type.set("sparse_encoding_nz_counts", someLoc());
  CHECK_THROWS_WITH(host::stimulusFor(&cfg, "q"), Catch::StartsWith("stimulus type sparse_encoding_nz_counts is not supported"));

  netlist::StimulusConfig bounds;
  bounds.uniformLowerBound.set(3.0, someLoc());
  bounds.uniformUpperBound.set(1.0, someLoc());
  CHECK_THROWS_WITH(host::stimulusFor(&bounds, "q"), Catch::Contains("uniform_lower_bound"));

  netlist::StimulusConfig normal;
  normal.type.set("Normal", someLoc());
  normal.normalStddev.set(-1.0, someLoc());
  CHECK_THROWS_WITH(host::stimulusFor(&normal, "q"), Catch::Contains("normal_stddev"));

  netlist::StimulusConfig range;
  range.extra.push_back(extra("set_tile_cols", netlist::RawValue::array({0, 32})));
  CHECK_THROWS_WITH(host::stimulusFor(&range, "q"), Catch::Contains("set_tile_cols"));
  range.extra[0].value = netlist::RawValue::array({1, 33});
  CHECK_THROWS_AS(host::stimulusFor(&range, "q"), std::invalid_argument);

  netlist::StimulusConfig regex;
  regex.overrides.emplace_back("[", netlist::StimulusConfig{});
  CHECK_THROWS_WITH(host::stimulusFor(&regex, "q"), Catch::Contains("not a valid regex"));
}
