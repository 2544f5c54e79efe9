// The Tensix coprocessor model, instruction by instruction: tiles are written
// to L1 with lib/formats, instruction words pushed as the harts would, and the
// packed results read back and compared with values computed here by plain
// loops (or worked by hand). Most tiles hold small integers or short
// fractions, so every expected value is exact and independent of summation
// order.
#include "sim/coprocessor.hpp"
#include "sim/coprocessor_math.hpp"

#include "device/device_contract.h"
#include "formats/formats.hpp"
#include "netlist/enums.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

using namespace tessera;
using namespace tessera::contract;
using sim::CopResult;
using sim::Coprocessor;
using netlist::DataFormat;

namespace {

using Tile = std::array<float, 1024>;

constexpr uint32_t kA = kDataBufferBase;            // input tile slots
constexpr uint32_t kB = kDataBufferBase + 0x2000;
constexpr uint32_t kC = kDataBufferBase + 0x4000;
constexpr uint32_t kOut = kDataBufferBase + 0x8000;  // output slot
constexpr uint32_t kL1Size = kGrayskullL1Size;

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
size_t at(size_t r, size_t c) { return r * 32 + c; }

Tile tileOf(const std::function<float(size_t, size_t)>& fn) {
  Tile t;
  for (size_t r = 0; r < 32; ++r)
    for (size_t c = 0; c < 32; ++c) t[at(r, c)] = fn(r, c);
  return t;
}

// Instruction words (device_contract.h layout).
uint32_t fmtField(DataFormat df) { return static_cast<uint32_t>(df) << kFormatShift; }
uint32_t unpackWord(bool toB, DataFormat df, uint32_t extra = 0) {
  return encode(kOpUnpack, (toB ? kUnpackToSrcB : 0) | fmtField(df) | extra);
}
uint32_t bcastField(Broadcast b) { return static_cast<uint32_t>(b) << kUnpackBcastShift; }
uint32_t eltWord(EltwiseOp op, uint32_t d, uint32_t extra = 0) {
  return encode(kOpEltwise, d | (static_cast<uint32_t>(op) << kEltwiseOpShift) | extra);
}
uint32_t reduceWord(ReduceDim dim, ReduceType type, uint32_t d, uint32_t extra = 0) {
  return encode(kOpReduce, d | (static_cast<uint32_t>(dim) << kReduceDimShift) |
                               (static_cast<uint32_t>(type) << kReduceTypeShift) | extra);
}
uint32_t sfpuWord(SfpuFunc f, uint32_t d) { return encode(kOpSfpu, d | (static_cast<uint32_t>(f) << kSfpuFuncShift)); }
uint32_t packWord(uint32_t d, DataFormat df, uint32_t extra = 0) { return encode(kOpPack, d | fmtField(df) | extra); }

// A core's L1 and its coprocessor; helpers push whole instructions and
// require them to be accepted.
struct Rig {
  std::vector<uint8_t> l1 = std::vector<uint8_t>(kL1Size, 0);
  Coprocessor cop{std::span<uint8_t>(l1)};

  Rig() = default;
  // A dest of `destTiles16` 16-bit tiles (wormhole A0: 64).
  explicit Rig(uint32_t destTiles16) : cop(std::span<uint8_t>(l1), {}, destTiles16) {}

  CopResult push(uint32_t thread, uint32_t word) { return cop.push(thread, word); }
  uint32_t run(uint32_t thread, uint32_t word) {
    const CopResult r = cop.push(thread, word);
    INFO("word 0x" << std::hex << word << " fault " << r.fault << " wait '" << cop.describeWait(thread) << "'");
    REQUIRE(r.accepted());
    return r.cycles;
  }
  uint32_t run(uint32_t thread, uint32_t word, uint32_t arg) {
    const CopResult first = cop.push(thread, word);
    REQUIRE(first.accepted());
    REQUIRE(first.cycles == 0);
    return run(thread, arg);
  }
  void config(ConfigReg reg, uint32_t value) { run(kMathThread, encode(kOpSetConfig, reg), value); }

  void putTile(uint32_t addr, DataFormat df, const Tile& t) {
    formats::packTile(df, std::span<const float, 1024>(t), std::span<uint8_t>(l1).subspan(addr));
  }
  Tile getTile(uint32_t addr, DataFormat df) {
    Tile t;
    formats::unpackTile(df, std::span<const uint8_t>(l1).subspan(addr), std::span<float, 1024>(t));
    return t;
  }
  void unpack(bool toB, DataFormat df, uint32_t addr, uint32_t extra = 0) {
    run(kUnpackThread, unpackWord(toB, df, extra), addr);
  }
  // dest[d] -> kOut as Float32 (exact for a Float32 dest), then read back.
  Tile packOut(uint32_t d = 0, DataFormat df = DataFormat::Float32) {
    run(kPackThread, packWord(d, df), kOut);
    return getTile(kOut, df);
  }
  // srcA <- tile (Float32), dest[d] = srcA.
  void loadDest(const Tile& t, uint32_t d = 0) {
    putTile(kC, DataFormat::Float32, t);
    unpack(false, DataFormat::Float32, kC);
    run(kMathThread, encode(kOpDatacopy, d));
  }
};

void requireTilesEqual(const Tile& got, const Tile& want) {
  for (size_t i = 0; i < 1024; ++i) {
    INFO("row " << i / 32 << " col " << i % 32);
    REQUIRE(got[i] == want[i]);
  }
}

void requireTilesNear(const Tile& got, const Tile& want, double rel, double abs) {
  for (size_t i = 0; i < 1024; ++i) {
    INFO("row " << i / 32 << " col " << i % 32 << " got " << got[i] << " want " << want[i]);
    REQUIRE(std::fabs(static_cast<double>(got[i]) - want[i]) <= abs + rel * std::fabs(static_cast<double>(want[i])));
  }
}

// Mantissa truncated to its top `keep` bits (the fidelity's operand high part).
float truncMantissa(float x, int keep) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(x) & ~((uint32_t{1} << (23 - keep)) - 1));
}

// Small integers, different per tile (seed), exact in every format used here.
Tile smallInts(int seed, int range = 15) {
  return tileOf([=](size_t r, size_t c) {
    return static_cast<float>(static_cast<int>((r * 7 + c * 3 + static_cast<size_t>(seed) * 11) % (2 * range + 1)) - range);
  });
}

} // namespace

// ---------------------------------------------------------------- UNPACK
TEST_CASE("unpack decodes each L1 format into the source register", "[sim][coprocessor][unpack]") {
  Rig rig;
  // Integers in [-63, 63] are exact in Float16_b, Bfp8_b (shared exponent <= 5,
  // step <= 0.5), Float32 and Int8.
  const Tile ints = tileOf([](size_t r, size_t c) { return static_cast<float>(static_cast<int>((r * 32 + c) % 127) - 63); });
  for (DataFormat df : {DataFormat::Float16_b, DataFormat::Bfp8_b, DataFormat::Float32, DataFormat::Int8}) {
    INFO(netlist::dataFormatName(df));
    rig.putTile(kA, df, ints);
    rig.unpack(false, df, kA);
    rig.run(kMathThread, encode(kOpDatacopy, 0));
    requireTilesEqual(rig.packOut(), ints);
  }
  // Fractions: Float16_b keeps 8 significant bits (1 + 2^-7 exact); Float32 all.
  const Tile fine = tileOf([](size_t r, size_t c) { return 1.0f + static_cast<float>(r * 32 + c) / 1024.0f * (1.0f / 128.0f) * 128.0f; });
  rig.putTile(kA, DataFormat::Float32, fine);
  rig.unpack(false, DataFormat::Float32, kA);
  rig.run(kMathThread, encode(kOpDatacopy, 0));
  requireTilesEqual(rig.packOut(), fine);
}

TEST_CASE("unpack of a Bfp8_b block worked by hand", "[sim][coprocessor][unpack]") {
  Rig rig;
  // Face 0 row 0 shares exponent 1 (from -3.0): step 2^-5, so 1 + 2^-6 is 32.5
  // steps and rounds away to 33 steps = 1.03125 (docs/data-formats.md).
  Tile t{};
  t[0] = 1.0f; t[1] = 0.5f; t[2] = 0.25f; t[3] = -3.0f; t[4] = 1.0f + 1.0f / 64.0f;
  rig.putTile(kA, DataFormat::Bfp8_b, t);
  rig.unpack(false, DataFormat::Bfp8_b, kA);
  rig.run(kMathThread, encode(kOpDatacopy, 0));
  const Tile got = rig.packOut();
  CHECK(got[0] == 1.0f);
  CHECK(got[1] == 0.5f);
  CHECK(got[2] == 0.25f);
  CHECK(got[3] == -3.0f);
  CHECK(got[4] == 1.03125f);
  CHECK(got[5] == 0.0f);
}

TEST_CASE("unpack transpose and broadcasts", "[sim][coprocessor][unpack]") {
  Rig rig;
  const Tile in = tileOf([](size_t r, size_t c) { return static_cast<float>(r * 32 + c); });  // exact in Float32
  rig.putTile(kA, DataFormat::Float32, in);

  SECTION("transpose") {
    rig.unpack(false, DataFormat::Float32, kA, kUnpackTranspose);
    rig.run(kMathThread, encode(kOpDatacopy, 0));
    requireTilesEqual(rig.packOut(), tileOf([&](size_t r, size_t c) { return in[at(c, r)]; }));
  }
  SECTION("row broadcast") {
    rig.unpack(false, DataFormat::Float32, kA, bcastField(kBcastRow));
    rig.run(kMathThread, encode(kOpDatacopy, 0));
    requireTilesEqual(rig.packOut(), tileOf([](size_t, size_t c) { return static_cast<float>(c); }));
  }
  SECTION("column broadcast") {
    rig.unpack(false, DataFormat::Float32, kA, bcastField(kBcastCol));
    rig.run(kMathThread, encode(kOpDatacopy, 0));
    requireTilesEqual(rig.packOut(), tileOf([](size_t r, size_t) { return static_cast<float>(r * 32); }));
  }
  SECTION("scalar broadcast") {
    Tile s = in;
    s[0] = 7.5f;
    rig.putTile(kA, DataFormat::Float32, s);
    rig.unpack(false, DataFormat::Float32, kA, bcastField(kBcastScalar));
    rig.run(kMathThread, encode(kOpDatacopy, 0));
    requireTilesEqual(rig.packOut(), tileOf([](size_t, size_t) { return 7.5f; }));
  }
  SECTION("transpose, then row broadcast: column 0 of the L1 tile everywhere") {
    rig.unpack(false, DataFormat::Float32, kA, kUnpackTranspose | bcastField(kBcastRow));
    rig.run(kMathThread, encode(kOpDatacopy, 0));
    requireTilesEqual(rig.packOut(), tileOf([](size_t, size_t c) { return static_cast<float>(c * 32); }));
  }
  SECTION("broadcast into srcB, used by an eltwise add") {
    rig.putTile(kB, DataFormat::Float32, smallInts(1));
    rig.unpack(false, DataFormat::Float32, kB);
    rig.unpack(true, DataFormat::Float32, kA, bcastField(kBcastRow));
    rig.run(kMathThread, eltWord(kEltAdd, 0));
    const Tile a = smallInts(1);
    requireTilesEqual(rig.packOut(), tileOf([&](size_t r, size_t c) { return a[at(r, c)] + static_cast<float>(c); }));
  }
  SECTION("zeros ignore the address") {
    rig.run(kUnpackThread, unpackWord(false, DataFormat::Float32, kUnpackZero), 0 /* would be a bad address */);
    rig.run(kMathThread, encode(kOpDatacopy, 0));
    requireTilesEqual(rig.packOut(), Tile{});
  }
}

// ---------------------------------------------------------------- DATACOPY / ELTWISE
TEST_CASE("datacopy, with and without accumulation", "[sim][coprocessor][math]") {
  Rig rig;
  const Tile a = smallInts(1), b = smallInts(2);
  rig.loadDest(a, 3);
  requireTilesEqual(rig.packOut(3), a);
  rig.putTile(kA, DataFormat::Float32, b);
  rig.unpack(false, DataFormat::Float32, kA);
  rig.run(kMathThread, encode(kOpDatacopy, 3 | kFieldAccumulate));
  requireTilesEqual(rig.packOut(3), tileOf([&](size_t r, size_t c) { return a[at(r, c)] + b[at(r, c)]; }));
}

TEST_CASE("eltwise add, sub, mul, max", "[sim][coprocessor][math]") {
  Rig rig;
  rig.config(kCfgMathFidelity, kHiFi4);
  const Tile a = smallInts(1), b = smallInts(2);
  rig.putTile(kA, DataFormat::Float16_b, a);
  rig.putTile(kB, DataFormat::Float16_b, b);
  struct Case {
    EltwiseOp op;
    float (*fn)(float, float);
  };
  const Case cases[] = {
      {kEltAdd, [](float x, float y) { return x + y; }},
      {kEltSub, [](float x, float y) { return x - y; }},
      {kEltMul, [](float x, float y) { return x * y; }},
      {kEltMax, [](float x, float y) { return x > y ? x : y; }},
  };
  for (const Case& cs : cases) {
    INFO("op " << cs.op);
    rig.unpack(false, DataFormat::Float16_b, kA);
    rig.unpack(true, DataFormat::Float16_b, kB);
    rig.run(kMathThread, eltWord(cs.op, 1));
    requireTilesEqual(rig.packOut(1), tileOf([&](size_t r, size_t c) { return cs.fn(a[at(r, c)], b[at(r, c)]); }));
  }
}

TEST_CASE("eltwise with dest as an operand, and accumulation", "[sim][coprocessor][math]") {
  Rig rig;
  rig.config(kCfgMathFidelity, kHiFi4);
  const Tile d = smallInts(3), b = smallInts(4), a = smallInts(5);
  rig.putTile(kB, DataFormat::Float32, b);
  rig.putTile(kA, DataFormat::Float32, a);

  SECTION("A from dest: dest = dest - srcB") {
    rig.loadDest(d, 2);
    rig.unpack(true, DataFormat::Float32, kB);
    rig.run(kMathThread, eltWord(kEltSub, 2, kEltwiseAFromDest));
    requireTilesEqual(rig.packOut(2), tileOf([&](size_t r, size_t c) { return d[at(r, c)] - b[at(r, c)]; }));
    CHECK_FALSE(rig.cop.srcValid(false, 0));  // srcA untouched by the instruction: none was loaded
  }
  SECTION("B from dest: dest = srcA - dest") {
    rig.loadDest(d, 2);
    rig.unpack(false, DataFormat::Float32, kA);
    rig.run(kMathThread, eltWord(kEltSub, 2, kEltwiseBFromDest));
    requireTilesEqual(rig.packOut(2), tileOf([&](size_t r, size_t c) { return a[at(r, c)] - d[at(r, c)]; }));
  }
  SECTION("accumulate: dest += srcA * srcB") {
    rig.loadDest(d, 2);
    rig.unpack(false, DataFormat::Float32, kA);
    rig.unpack(true, DataFormat::Float32, kB);
    rig.run(kMathThread, eltWord(kEltMul, 2, kFieldAccumulate));
    requireTilesEqual(rig.packOut(2),
                      tileOf([&](size_t r, size_t c) { return d[at(r, c)] + a[at(r, c)] * b[at(r, c)]; }));
  }
}

TEST_CASE("eltwise multiply: fidelity and the zero mask", "[sim][coprocessor][math]") {
  Rig rig;
  // A = 1.984375 (1.111111b): A_hi keeps 4 mantissa bits = 1.9375.
  // B = 1.9921875 (1.1111111b): B_hi keeps 6 = 1.984375.
  Tile a = tileOf([](size_t, size_t) { return 1.984375f; });
  Tile b = tileOf([](size_t, size_t) { return 1.9921875f; });
  a[1] = 0.0f;
  b[1] = std::numeric_limits<float>::infinity();  // 0 * inf = 0, not NaN
  b[2] = 0.0f;
  a[2] = std::numeric_limits<float>::quiet_NaN();  // NaN * 0 = 0
  rig.putTile(kA, DataFormat::Float32, a);
  rig.putTile(kB, DataFormat::Float32, b);
  const float aHi = 1.9375f, bHi = 1.984375f, aLo = 1.984375f - aHi, bLo = 1.9921875f - bHi;
  struct Case {
    FidelityCode f;
    float want;
  };
  const Case cases[] = {
      {kLoFi, aHi * bHi},
      {kHiFi2, 1.984375f * bHi},
      {kHiFi3, 1.984375f * bHi + aHi * bLo},
      {kHiFi4, 1.984375f * 1.9921875f},
  };
  for (const Case& cs : cases) {
    INFO("fidelity " << cs.f);
    rig.config(kCfgMathFidelity, cs.f);
    rig.unpack(false, DataFormat::Float32, kA);
    rig.unpack(true, DataFormat::Float32, kB);
    rig.run(kMathThread, eltWord(kEltMul, 0));
    const Tile got = rig.packOut();
    CHECK(got[0] == cs.want);
    CHECK(got[1] == 0.0f);
    CHECK(got[2] == 0.0f);
    CHECK(got[5] == cs.want);
  }
  CHECK(aLo * bLo != 0.0f);  // HiFi3 and HiFi4 differ
}

// ---------------------------------------------------------------- MATMUL
namespace {
// Values k/64, |k| < 128: products of fidelity-reduced operands and their
// sums over 32 terms are multiples of 2^-12 below 2^19, exact in float32, so
// the expected value does not depend on the summation order.
Tile sixtyFourths(int seed) {
  return tileOf([=](size_t r, size_t c) {
    const int k = static_cast<int>((r * 37 + c * 91 + static_cast<size_t>(seed) * 53) % 255) - 127;
    return static_cast<float>(k) / 64.0f;
  });
}

// dest = in0 x in1 where srcB holds in0 and srcA in1; `reduceA/B` are the
// fidelity's operand reductions (written out from docs/golden-model.md).
Tile naiveMatmul(const Tile& in0, const Tile& in1, float (*reduceB)(float), float (*reduceA)(float)) {
  Tile out;
  for (size_t i = 0; i < 32; ++i)
    for (size_t j = 0; j < 32; ++j) {
      double s = 0;
      for (size_t k = 0; k < 32; ++k) s += static_cast<double>(reduceB(in0[at(i, k)])) * reduceA(in1[at(k, j)]);
      out[at(i, j)] = static_cast<float>(s);
    }
  return out;
}
float keep(float x) { return x; }
float hiA(float x) { return truncMantissa(x, 4); }
float hiB(float x) { return truncMantissa(x, 6); }
} // namespace

TEST_CASE("matmul at each fidelity", "[sim][coprocessor][math][matmul]") {
  Rig rig;
  const Tile in0 = sixtyFourths(1), in1 = sixtyFourths(2);
  rig.putTile(kB, DataFormat::Float32, in0);  // in0 -> srcB
  rig.putTile(kA, DataFormat::Float32, in1);  // in1 -> srcA
  struct Case {
    FidelityCode f;
    Tile want;
    uint32_t cycles;
  };
  const Case cases[] = {
      {kLoFi, naiveMatmul(in0, in1, hiB, hiA), 16},
      {kHiFi2, naiveMatmul(in0, in1, hiB, keep), 32},
      {kHiFi2_B, naiveMatmul(in0, in1, keep, hiA), 32},
      {kHiFi4, naiveMatmul(in0, in1, keep, keep), 64},
  };
  for (const Case& cs : cases) {
    INFO("fidelity " << cs.f);
    rig.config(kCfgMathFidelity, cs.f);
    rig.unpack(false, DataFormat::Float32, kA);
    rig.unpack(true, DataFormat::Float32, kB);
    CHECK(rig.run(kMathThread, encode(kOpMatmul, 5)) == cs.cycles);
    requireTilesEqual(rig.packOut(5), cs.want);
  }
  // LoFi visibly differs from HiFi4 on these operands.
  CHECK(cases[0].want != cases[3].want);

  SECTION("HiFi3 = B_hi x A + B_lo x A_hi") {
    rig.config(kCfgMathFidelity, kHiFi3);
    rig.unpack(false, DataFormat::Float32, kA);
    rig.unpack(true, DataFormat::Float32, kB);
    rig.run(kMathThread, encode(kOpMatmul, 0));
    const Tile hi = naiveMatmul(in0, in1, hiB, keep);
    const Tile lo = naiveMatmul(in0, in1, [](float x) { return x - truncMantissa(x, 6); }, hiA);
    requireTilesEqual(rig.packOut(), tileOf([&](size_t r, size_t c) { return hi[at(r, c)] + lo[at(r, c)]; }));
  }
}

TEST_CASE("matmul hand-worked 2x2 corner and accumulation", "[sim][coprocessor][math][matmul]") {
  Rig rig;
  rig.config(kCfgMathFidelity, kHiFi4);
  // in0 = [[1,2],[3,4]] in its top-left corner, in1 = [[5,6],[7,8]], zeros elsewhere:
  // in0 x in1 = [[19,22],[43,50]].
  Tile in0{}, in1{};
  in0[at(0, 0)] = 1; in0[at(0, 1)] = 2; in0[at(1, 0)] = 3; in0[at(1, 1)] = 4;
  in1[at(0, 0)] = 5; in1[at(0, 1)] = 6; in1[at(1, 0)] = 7; in1[at(1, 1)] = 8;
  rig.putTile(kB, DataFormat::Float16_b, in0);
  rig.putTile(kA, DataFormat::Float16_b, in1);
  rig.unpack(false, DataFormat::Float16_b, kA);
  rig.unpack(true, DataFormat::Float16_b, kB);
  rig.run(kMathThread, encode(kOpMatmul, 0));
  Tile got = rig.packOut();
  CHECK(got[at(0, 0)] == 19);
  CHECK(got[at(0, 1)] == 22);
  CHECK(got[at(1, 0)] == 43);
  CHECK(got[at(1, 1)] == 50);
  CHECK(got[at(2, 2)] == 0);
  // A second product accumulated: doubles it.
  rig.unpack(false, DataFormat::Float16_b, kA);
  rig.unpack(true, DataFormat::Float16_b, kB);
  rig.run(kMathThread, encode(kOpMatmul, 0 | kFieldAccumulate));
  got = rig.packOut();
  CHECK(got[at(0, 0)] == 38);
  CHECK(got[at(1, 1)] == 100);
}

TEST_CASE("matmul result rounded to a Float16_b dest", "[sim][coprocessor][math][matmul]") {
  Rig rig;
  rig.config(kCfgMathFidelity, kHiFi4);
  rig.config(kCfgDestFormat, kFloat16_b);
  // Row 0 of in0 = 1 + 2^-7 in column 0 and 2^-8 in column 1; in1 column 0 = 1:
  // the sum 1 + 2^-7 + 2^-8 lies halfway between bfloat16 neighbours 1 + 2^-7
  // and 1 + 2^-6 and rounds away from zero.
  Tile in0{}, in1{};
  in0[at(0, 0)] = 1.0f + 1.0f / 128.0f;
  in0[at(0, 1)] = 1.0f / 256.0f;
  in1[at(0, 0)] = 1.0f;
  in1[at(1, 0)] = 1.0f;
  rig.putTile(kB, DataFormat::Float32, in0);
  rig.putTile(kA, DataFormat::Float32, in1);
  rig.unpack(false, DataFormat::Float32, kA);
  rig.unpack(true, DataFormat::Float32, kB);
  rig.run(kMathThread, encode(kOpMatmul, 0));
  CHECK(rig.packOut()[0] == 1.0f + 1.0f / 64.0f);
}

TEST_CASE("Int32 dest: Int8 matmul accumulates exactly", "[sim][coprocessor][math][matmul]") {
  Rig rig;
  rig.config(kCfgDestFormat, kInt32);
  rig.config(kCfgMathFidelity, kLoFi);  // ignored for integers
  const Tile in0 = tileOf([](size_t r, size_t c) { return static_cast<float>(static_cast<int>((r * 5 + c * 3) % 255) - 127); });
  const Tile in1 = tileOf([](size_t r, size_t c) { return static_cast<float>(static_cast<int>((r * 11 + c * 7) % 255) - 127); });
  rig.putTile(kB, DataFormat::Int8, in0);
  rig.putTile(kA, DataFormat::Int8, in1);
  for (int rep = 0; rep < 2; ++rep) {
    rig.unpack(false, DataFormat::Int8, kA);
    rig.unpack(true, DataFormat::Int8, kB);
    rig.run(kMathThread, encode(kOpMatmul, 1 | (rep ? kFieldAccumulate : 0)));
  }
  const Tile got = rig.packOut(1, DataFormat::Int32);
  for (size_t i = 0; i < 32; ++i)
    for (size_t j = 0; j < 32; ++j) {
      int64_t s = 0;
      for (size_t k = 0; k < 32; ++k) s += static_cast<int64_t>(in0[at(i, k)]) * static_cast<int64_t>(in1[at(k, j)]);
      INFO("row " << i << " col " << j);
      REQUIRE(got[at(i, j)] == static_cast<float>(2 * s));
    }
  // Int8 output saturates at 127.
  const Tile sat = rig.packOut(1, DataFormat::Int8);
  CHECK(std::fabs(sat[0]) <= 127.0f);
}

TEST_CASE("Int32 dest packed as Int32 keeps integers beyond 2^24", "[sim][coprocessor][pack]") {
  // dest = srcA + dest with srcA = +-2^24 (exact as a float) and dest = 1, 3:
  // +-(2^24 + 1) and +-(2^24 + 3) are not floats, so only an exact pack
  // writes their words. Row r of srcA has sign (-1)^r; dest column c holds
  // 1 + 2 * (c % 2).
  Rig rig;
  rig.config(kCfgDestFormat, kInt32);
  rig.putTile(kA, DataFormat::Int32, tileOf([](size_t, size_t c) { return 1.0f + 2.0f * static_cast<float>(c % 2); }));
  rig.unpack(false, DataFormat::Int32, kA);
  rig.run(kMathThread, encode(kOpDatacopy, 2));
  rig.putTile(kB, DataFormat::Int32, tileOf([](size_t r, size_t) { return r % 2 ? -16777216.0f : 16777216.0f; }));
  rig.unpack(false, DataFormat::Int32, kB);
  rig.run(kMathThread, eltWord(kEltAdd, 2, kEltwiseBFromDest));
  auto word = [&](size_t r, size_t c) {
    // Int32 tiles: 16-byte header, faces f0 f1 / f2 f3 of 16x16 values, 4 bytes each.
    const size_t face = (r / 16) * 2 + c / 16, index = face * 256 + (r % 16) * 16 + c % 16;
    uint32_t w = 0;
    std::memcpy(&w, &rig.l1[kOut + 16 + index * 4], 4);
    return w;
  };
  rig.run(kPackThread, packWord(2, DataFormat::Int32), kOut);
  CHECK(word(0, 0) == 16777217u);                 // 2^24 + 1
  CHECK(word(0, 1) == 16777219u);                 // 2^24 + 3
  CHECK(word(1, 0) == (0x80000000u | 16777215u)); // -2^24 + 1
  CHECK(word(31, 31) == (0x80000000u | 16777213u)); // -2^24 + 3
  CHECK(word(30, 17) == 16777219u);
  // relu min 0 zeroes the negative rows; untilized rows carry the same words.
  rig.config(kCfgReluMode, 1);
  rig.run(kPackThread, packWord(2, DataFormat::Int32), kOut);
  CHECK(word(0, 1) == 16777219u);
  CHECK(word(1, 0) == 0u);
  rig.config(kCfgReluMode, 0);
  rig.config(kCfgUntilizeStride, 128);
  rig.run(kPackThread, packWord(2, DataFormat::Int32, kPackUntilize), kOut);
  uint32_t w = 0;
  std::memcpy(&w, &rig.l1[kOut + 0 * 128 + 2 * 4], 4);
  CHECK(w == 16777217u);
  std::memcpy(&w, &rig.l1[kOut + 3 * 128 + 5 * 4], 4);
  CHECK(w == (0x80000000u | 16777213u));
}

// ---------------------------------------------------------------- REDUCE
TEST_CASE("reduce rows, cols and scalar; sum and max; scale", "[sim][coprocessor][math][reduce]") {
  Rig rig;
  const Tile a = smallInts(6);
  rig.putTile(kA, DataFormat::Float32, a);
  auto reduceTo = [&](ReduceDim dim, ReduceType type, float scale, uint32_t extra = 0) {
    rig.unpack(false, DataFormat::Float32, kA);
    rig.run(kMathThread, reduceWord(dim, type, 0, extra), bits(scale));
    return rig.packOut();
  };
  SECTION("rows: column sums in row 0, times 1/32 (avg)") {
    const Tile got = reduceTo(kReduceRows, kReduceSum, 1.0f / 32.0f);
    for (size_t c = 0; c < 32; ++c) {
      double s = 0;
      for (size_t r = 0; r < 32; ++r) s += a[at(r, c)];
      CHECK(got[at(0, c)] == static_cast<float>(s / 32.0));
      for (size_t r = 1; r < 32; ++r) REQUIRE(got[at(r, c)] == 0.0f);
    }
  }
  SECTION("cols: row maxima in column 0") {
    const Tile got = reduceTo(kReduceCols, kReduceMax, 1.0f);
    for (size_t r = 0; r < 32; ++r) {
      float m = a[at(r, 0)];
      for (size_t c = 1; c < 32; ++c) m = std::max(m, a[at(r, c)]);
      CHECK(got[at(r, 0)] == m);
      for (size_t c = 1; c < 32; ++c) REQUIRE(got[at(r, c)] == 0.0f);
    }
  }
  SECTION("cols: row sums") {
    const Tile got = reduceTo(kReduceCols, kReduceSum, 1.0f);
    for (size_t r = 0; r < 32; ++r) {
      double s = 0;
      for (size_t c = 0; c < 32; ++c) s += a[at(r, c)];
      CHECK(got[at(r, 0)] == static_cast<float>(s));
    }
  }
  SECTION("rows: column maxima") {
    const Tile got = reduceTo(kReduceRows, kReduceMax, 1.0f);
    for (size_t c = 0; c < 32; ++c) {
      float m = a[at(0, c)];
      for (size_t r = 1; r < 32; ++r) m = std::max(m, a[at(r, c)]);
      CHECK(got[at(0, c)] == m);
    }
  }
  SECTION("scalar: sum times 2, max") {
    double s = 0;
    float m = a[0];
    for (float v : a) {
      s += v;
      m = std::max(m, v);
    }
    Tile got = reduceTo(kReduceScalar, kReduceSum, 2.0f);
    CHECK(got[0] == static_cast<float>(2 * s));
    for (size_t i = 1; i < 1024; ++i) REQUIRE(got[i] == 0.0f);
    got = reduceTo(kReduceScalar, kReduceMax, 1.0f);
    CHECK(got[0] == m);
  }
  SECTION("accumulate over two tiles: sum adds, max keeps the larger") {
    const Tile b = smallInts(7, 40);
    rig.putTile(kB, DataFormat::Float32, b);
    rig.unpack(false, DataFormat::Float32, kA);
    rig.run(kMathThread, reduceWord(kReduceRows, kReduceSum, 0), bits(1.0f));
    rig.unpack(false, DataFormat::Float32, kB);
    rig.run(kMathThread, reduceWord(kReduceRows, kReduceSum, 0, kFieldAccumulate), bits(1.0f));
    Tile got = rig.packOut();
    for (size_t c = 0; c < 32; ++c) {
      double s = 0;
      for (size_t r = 0; r < 32; ++r) s += a[at(r, c)] + b[at(r, c)];
      CHECK(got[at(0, c)] == static_cast<float>(s));
    }
    rig.unpack(false, DataFormat::Float32, kA);
    rig.run(kMathThread, reduceWord(kReduceCols, kReduceMax, 1), bits(1.0f));
    rig.unpack(false, DataFormat::Float32, kB);
    rig.run(kMathThread, reduceWord(kReduceCols, kReduceMax, 1, kFieldAccumulate), bits(1.0f));
    got = rig.packOut(1);
    for (size_t r = 0; r < 32; ++r) {
      float m = a[at(r, 0)];
      for (size_t c = 0; c < 32; ++c) m = std::max({m, a[at(r, c)], b[at(r, c)]});
      CHECK(got[at(r, 0)] == m);
    }
  }
}

// ---------------------------------------------------------------- SFPU
TEST_CASE("each SFPU function against the std:: formula", "[sim][coprocessor][sfpu]") {
  Rig rig;
  // x in [-4, 3.875] in steps of 1/8; positive-only functions get [0.125, 8].
  const Tile any = tileOf([](size_t r, size_t c) { return static_cast<float>(static_cast<int>((r * 32 + c) % 64) - 32) / 8.0f; });
  const Tile pos = tileOf([](size_t r, size_t c) { return static_cast<float>((r * 32 + c) % 64 + 1) / 8.0f; });
  struct Case {
    SfpuFunc f;
    uint32_t param;
    bool positive;
    std::function<double(double)> want;
    bool exact;
  };
  const double kS = std::sqrt(2.0 / M_PI);
  const Case cases[] = {
      {kSfpuExp, 0, false, [](double x) { return std::exp(x); }, false},
      {kSfpuLog, 0, true, [](double x) { return std::log(x); }, false},
      {kSfpuSqrt, 0, true, [](double x) { return std::sqrt(x); }, false},
      {kSfpuReciprocal, 0, true, [](double x) { return 1.0 / x; }, false},
      {kSfpuGelu, 0, false, [=](double x) { return 0.5 * x * (1 + std::tanh(kS * (x + 0.044715 * x * x * x))); }, false},
      {kSfpuGeluDerivative, 0, false,
       [=](double x) {
         return 0.5 * (1 + std::tanh(kS * (x + 0.044715 * x * x * x))) + x * std::exp(-x * x / 2) / std::sqrt(2 * M_PI);
       },
       false},
      {kSfpuSigmoid, 0, false, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, false},
      {kSfpuTanh, 0, false, [](double x) { return std::tanh(x); }, false},
      {kSfpuAbs, 0, false, [](double x) { return std::fabs(x); }, true},
      {kSfpuSine, 0, false, [](double x) { return std::sin(x); }, false},
      {kSfpuCosine, 0, false, [](double x) { return std::cos(x); }, false},
      {kSfpuSquare, 0, false, [](double x) { return x * x; }, true},
      {kSfpuPower, 3, false, [](double x) { return x * x * x; }, true},
      {kSfpuPower, 0, false, [](double) { return 1.0; }, true},
      {kSfpuLrelu, bits(0.25f), false, [](double x) { return x > 0 ? x : 0.25 * x; }, true},
      {kSfpuRelu, 0, false, [](double x) { return x > 0 ? x : 0.0; }, true},
      {kSfpuReluMin, bits(0.5f), false, [](double x) { return x >= 0.5 ? x : 0.0; }, true},
      {kSfpuReluMax, bits(1.0f), false, [](double x) { return x >= 1.0 ? 1.0 : (x >= 0 ? x : 0.0); }, true},
  };
  for (const Case& cs : cases) {
    INFO("function " << cs.f << " param " << cs.param);
    const Tile& in = cs.positive ? pos : any;
    rig.loadDest(in, 4);
    rig.run(kMathThread, sfpuWord(cs.f, 4), cs.param);
    const Tile got = rig.packOut(4);
    Tile want;
    for (size_t i = 0; i < 1024; ++i) want[i] = static_cast<float>(cs.want(in[i]));
    if (cs.exact)
      requireTilesEqual(got, want);
    else
      requireTilesNear(got, want, 4e-7, 1e-7);
  }
  SECTION("log(0) and 1/0 are finite, as in the reference") {
    rig.loadDest(Tile{}, 0);
    rig.run(kMathThread, sfpuWord(kSfpuLog, 0), 0);
    CHECK(rig.packOut()[0] == std::log(std::numeric_limits<float>::epsilon()));
    rig.loadDest(Tile{}, 0);
    rig.run(kMathThread, sfpuWord(kSfpuReciprocal, 0), 0);
    CHECK(rig.packOut()[0] == 8388608.0f);  // 2^23
  }
  SECTION("SFPU reads no source register") {
    rig.loadDest(any, 0);
    CHECK(rig.run(kMathThread, sfpuWord(kSfpuExp, 0), 0) == 32 * 16);
    CHECK(rig.run(kMathThread, sfpuWord(kSfpuPower, 0), 5) == 32 * (3 + 5));
  }
}

// ---------------------------------------------------------------- PACK
TEST_CASE("pack relu modes", "[sim][coprocessor][pack]") {
  Rig rig;
  const Tile in = tileOf([](size_t r, size_t c) { return static_cast<float>(static_cast<int>((r * 32 + c) % 16) - 8) / 4.0f; });
  rig.loadDest(in, 0);
  SECTION("min: x >= threshold kept, else 0") {
    rig.config(kCfgReluMode, 1);
    rig.config(kCfgReluThreshold, bits(0.5f));
    requireTilesEqual(rig.packOut(), tileOf([&](size_t r, size_t c) { return in[at(r, c)] >= 0.5f ? in[at(r, c)] : 0.0f; }));
  }
  SECTION("max: clamp to [0, threshold]") {
    rig.config(kCfgReluMode, 2);
    rig.config(kCfgReluThreshold, bits(1.0f));
    requireTilesEqual(rig.packOut(), tileOf([&](size_t r, size_t c) { return std::clamp(in[at(r, c)], 0.0f, 1.0f); }));
  }
  SECTION("off") { requireTilesEqual(rig.packOut(), in); }
}

TEST_CASE("pack writes Bfp8_b shared exponents and the header", "[sim][coprocessor][pack]") {
  Rig rig;
  Tile t{};
  // Face 0 row 0: [1.0, 0.5, 0.25, -3.0] -> exponent 1 (byte 128), magnitudes
  // 32, 16, 8, 96|sign (docs/data-formats.md worked example).
  t[0] = 1.0f; t[1] = 0.5f; t[2] = 0.25f; t[3] = -3.0f;
  // Face 1 row 0 (row 0, cols 16..31): 2.0 alone -> exponent byte 128, magnitude 64.
  t[16] = 2.0f;
  // Face 2 row 0 (row 16, cols 0..15): 0.75 -> exponent -1 (byte 126), 0.75 = 96 * 2^-7.
  t[at(16, 0)] = 0.75f;
  rig.loadDest(t, 0);
  rig.run(kPackThread, packWord(0, DataFormat::Bfp8_b), kOut);
  const uint8_t* p = &rig.l1[kOut];
  uint32_t header;
  std::memcpy(&header, p, 4);
  CHECK(header == 1120 / 16);
  CHECK(p[16 + 0] == 128);        // face 0 row 0
  CHECK(p[16 + 1] == 0);          // face 0 row 1: all zero
  CHECK(p[16 + 16] == 128);       // face 1 row 0
  CHECK(p[16 + 32] == 126);       // face 2 row 0
  const uint8_t* data = p + 80;
  CHECK(data[0] == 0x20);
  CHECK(data[1] == 0x10);
  CHECK(data[2] == 0x08);
  CHECK(data[3] == 0xE0);
  CHECK(data[4] == 0x00);
  CHECK(data[256] == 64);         // first value of face 1
  CHECK(data[512] == 96);         // first value of face 2
}

TEST_CASE("tiny tiles: UNPACK zeros what the shape lacks, PACK stores the corner", "[sim][coprocessor][tiny]") {
  Rig rig;
  const Tile in = smallInts(4);
  // A 2x32 Float16_b tile in L1 (2 x 32 x 2 bytes + 32 = 160 bytes).
  formats::packTile(DataFormat::Float16_b, {2, 32}, std::span<const float, 1024>(in), std::span<uint8_t>(rig.l1).subspan(kA));
  std::fill(rig.l1.begin() + kA + 160, rig.l1.begin() + kA + 2080, uint8_t{0x7F});  // not part of the tile
  rig.unpack(false, DataFormat::Float16_b, kA, kTile2x32 << kTileShapeShift);
  rig.run(kMathThread, encode(kOpDatacopy, 0));
  // Rows 0-1 are the tile's, rows 2-31 zero (the bytes after it were not read).
  requireTilesEqual(rig.packOut(0), tileOf([&](size_t r, size_t c) { return r < 2 ? in[at(r, c)] : 0.0f; }));
  // PACK as 32x16: 16-byte header, faces 0 and 2 (rows 0-15 then 16-31, columns 0-15), 16 zero bytes.
  rig.loadDest(in, 1);
  std::fill(rig.l1.begin() + kOut, rig.l1.begin() + kOut + 4128, uint8_t{0xAB});
  rig.run(kPackThread, packWord(1, DataFormat::Float32, kTile32x16 << kTileShapeShift), kOut);
  uint32_t header, v0, v256;
  std::memcpy(&header, &rig.l1[kOut], 4);
  std::memcpy(&v0, &rig.l1[kOut + 16], 4);
  std::memcpy(&v256, &rig.l1[kOut + 16 + 256 * 4], 4);
  CHECK(header == (512 * 4 + 32) / 16);
  CHECK(v0 == bits(in[at(0, 0)]));
  CHECK(v256 == bits(in[at(16, 0)]));  // the lower face follows the upper one
  CHECK(rig.l1[kOut + 2080 - 1] == 0);   // padding
  CHECK(rig.l1[kOut + 2080] == 0xAB);    // nothing written past the tile
  // PACK untilize of a 1x32 tile: one row of 32 values.
  std::fill(rig.l1.begin() + kOut, rig.l1.begin() + kOut + 256, uint8_t{0xAB});
  rig.config(kCfgUntilizeStride, 128);
  rig.run(kPackThread, packWord(1, DataFormat::Float32, kPackUntilize | kTile1x32 << kTileShapeShift), kOut);
  uint32_t last;
  std::memcpy(&last, &rig.l1[kOut + 31 * 4], 4);
  CHECK(last == bits(in[at(0, 31)]));
  CHECK(rig.l1[kOut + 128] == 0xAB);  // row 1 is not the tile's
}

TEST_CASE("pack untilize writes rows at address + r * stride", "[sim][coprocessor][pack]") {
  Rig rig;
  const Tile in = tileOf([](size_t r, size_t c) { return static_cast<float>(r * 32 + c); });  // exact in Float16_b up to 256
  const Tile small = tileOf([](size_t r, size_t c) { return static_cast<float>(static_cast<int>(r + c) - 31); });
  SECTION("Float16_b, stride of two tiles") {
    rig.loadDest(small, 0);
    std::fill(rig.l1.begin() + kOut, rig.l1.begin() + kOut + 32 * 128, uint8_t{0xAB});
    rig.config(kCfgUntilizeStride, 128);
    rig.run(kPackThread, packWord(0, DataFormat::Float16_b, kPackUntilize), kOut);
    for (size_t r = 0; r < 32; ++r) {
      for (size_t c = 0; c < 32; ++c) {
        uint16_t v;
        std::memcpy(&v, &rig.l1[kOut + r * 128 + c * 2], 2);
        INFO("row " << r << " col " << c);
        REQUIRE(v == static_cast<uint16_t>(bits(small[at(r, c)]) >> 16));  // exact bfloat16
      }
      for (size_t b = 64; b < 128; ++b) REQUIRE(rig.l1[kOut + r * 128 + b] == 0xAB);  // the neighbour tile untouched
    }
  }
  SECTION("Int8 rows are sign-magnitude bytes") {
    rig.loadDest(small, 0);
    rig.config(kCfgUntilizeStride, 32);
    rig.run(kPackThread, packWord(0, DataFormat::Int8, kPackUntilize), kOut);
    for (size_t r = 0; r < 32; ++r)
      for (size_t c = 0; c < 32; ++c) {
        const int v = static_cast<int>(r + c) - 31;
        const uint8_t want = v < 0 ? static_cast<uint8_t>(0x80 | -v) : static_cast<uint8_t>(v);
        REQUIRE(rig.l1[kOut + r * 32 + c] == want);
      }
  }
  SECTION("Float32 with l1 accumulate reads the rows back first") {
    rig.config(kCfgUntilizeStride, 256);
    rig.loadDest(in, 0);
    rig.run(kPackThread, packWord(0, DataFormat::Float32, kPackUntilize), kOut);
    rig.loadDest(small, 1);
    rig.run(kPackThread, packWord(1, DataFormat::Float32, kPackUntilize | kPackL1Accumulate), kOut);
    for (size_t r = 0; r < 32; ++r)
      for (size_t c = 0; c < 32; ++c) {
        float v;
        std::memcpy(&v, &rig.l1[kOut + r * 256 + c * 4], 4);
        REQUIRE(v == in[at(r, c)] + small[at(r, c)]);
      }
  }
  SECTION("Bfp formats cannot be untilized") {
    rig.config(kCfgUntilizeStride, 128);
    REQUIRE(rig.push(kPackThread, packWord(0, DataFormat::Bfp8_b, kPackUntilize)).accepted());
    const CopResult r = rig.push(kPackThread, kOut);
    CHECK(r.faulted());
    CHECK(r.fault == kCopBadFormat);
  }
}

TEST_CASE("pack l1 accumulate adds the tile already in L1", "[sim][coprocessor][pack]") {
  Rig rig;
  const Tile x = smallInts(8), y = smallInts(9);
  rig.putTile(kOut, DataFormat::Float16_b, x);
  rig.loadDest(y, 0);
  const uint32_t cycles = rig.run(kPackThread, packWord(0, DataFormat::Float16_b, kPackL1Accumulate), kOut);
  CHECK(cycles == 8 + 2 * 2080 / 16);
  requireTilesEqual(rig.getTile(kOut, DataFormat::Float16_b),
                    tileOf([&](size_t r, size_t c) { return x[at(r, c)] + y[at(r, c)]; }));
  SECTION("then relu applies to the sum") {
    rig.config(kCfgReluMode, 1);
    rig.run(kPackThread, packWord(0, DataFormat::Float16_b, kPackL1Accumulate), kOut);
    requireTilesEqual(rig.getTile(kOut, DataFormat::Float16_b), tileOf([&](size_t r, size_t c) {
                        const float s = x[at(r, c)] + 2 * y[at(r, c)];
                        return s >= 0.0f ? s : 0.0f;
                      }));
  }
}

// A gradient op's block (docs/device-model.md, "Gradient accumulation"): the
// ram cell, loaded into L1, gets every input's tile k added at slot k, each
// sum rounded to the L1 format at once (the reference rounds once at the end).
TEST_CASE("pack l1 accumulate sums a gradient block, rounding after every input", "[sim][coprocessor][pack]") {
  Rig rig;  // Float32 dest: the dest values below are exact
  const uint32_t slot1 = kOut + netlist::tileSizeBytes(DataFormat::Float16);
  rig.putTile(kOut, DataFormat::Float16, Tile{});  // the cell as loaded: zeros
  rig.putTile(slot1, DataFormat::Float16, Tile{});
  const Tile seven = tileOf([](size_t, size_t) { return 7.0f; });
  // Three inputs' tile 0, at three positions of the tile.
  const std::array<std::array<float, 3>, 3> inputs = {{
      {1.0f, -3.0f, 1024.0f},
      {0x1p-11f, 1.5f, 0.5f},
      {0x1p-12f, 0.25f, 0.5f},
  }};
  for (const auto& in : inputs) {
    Tile t{};
    t[0] = in[0];
    t[1] = in[1];
    t[at(31, 31)] = in[2];
    rig.loadDest(t, 0);
    rig.loadDest(seven, 1);
    const uint32_t cycles = rig.run(kPackThread, packWord(0, DataFormat::Float16, kPackL1Accumulate), kOut);
    CHECK(cycles == 8 + 2 * 2080 / 16);  // the tile read back, then written
    rig.run(kPackThread, packWord(1, DataFormat::Float16, kPackL1Accumulate), slot1);
  }
  const Tile got = rig.getTile(kOut, DataFormat::Float16);
  // 1 + 2^-11 is half a Float16 ulp (2^-10) above 1: ties away, 1 + 2^-10;
  // then 2^-12 is less than half an ulp: unchanged.
  CHECK(got[0] == 1.0f + 0x1p-10f);
  CHECK(got[1] == -1.25f);  // -3 + 1.5 + 0.25, exact at every step
  // Ulp 1 at 1024: 1024.5 ties away to 1025, 1025.5 to 1026 (one rounding
  // of 1024 + 0.5 + 0.5 would give 1025).
  CHECK(got[at(31, 31)] == 1026.0f);
  for (size_t i = 2; i < 1024; ++i)
    if (i != at(31, 31)) REQUIRE(got[i] == 0.0f);
  // Slot 1 accumulated its own tiles only.
  requireTilesEqual(rig.getTile(slot1, DataFormat::Float16), tileOf([](size_t, size_t) { return 21.0f; }));
}

TEST_CASE("dest format rounding on every write", "[sim][coprocessor][math]") {
  Rig rig;
  Tile t{};
  t[0] = 1.0f + 1.0f / 512.0f;                  // below half a bfloat16 ULP: rounds to 1
  t[1] = 1.0f + 1.0f / 256.0f;                  // exactly half: ties away -> 1 + 2^-7
  t[2] = 1.0f + 1.0f / 2048.0f + 1.0f / 4096.0f;  // Float16: 1 + 2^-11 + 2^-12 -> 1 + 2^-10 (ties away)
  SECTION("Float16_b") {
    rig.config(kCfgDestFormat, kFloat16_b);
    rig.loadDest(t, 9);  // index 9 exists in 16-bit mode
    const Tile got = rig.packOut(9);
    CHECK(got[0] == 1.0f);
    CHECK(got[1] == 1.0f + 1.0f / 128.0f);
  }
  SECTION("Float16") {
    rig.config(kCfgDestFormat, kFloat16);
    rig.loadDest(t, 0);
    CHECK(rig.packOut()[2] == 1.0f + 1.0f / 1024.0f);
  }
}

// ---------------------------------------------------------------- stalls
TEST_CASE("stalls: math before unpack, third unpack into a full source", "[sim][coprocessor][stall]") {
  Rig rig;
  rig.putTile(kA, DataFormat::Float32, smallInts(1));
  rig.putTile(kB, DataFormat::Float32, smallInts(2));

  SECTION("math waits for its sources; the stalled word is retried") {
    CopResult r = rig.push(kMathThread, encode(kOpDatacopy, 0));
    CHECK(r.stalled());
    CHECK(rig.cop.describeWait(kMathThread) == "math waits for srcA valid");
    r = rig.push(kMathThread, encode(kOpMatmul, 0));
    CHECK(r.stalled());
    CHECK(rig.cop.describeWait(kMathThread) == "math waits for srcA and srcB valid");
    rig.unpack(false, DataFormat::Float32, kA);
    r = rig.push(kMathThread, encode(kOpMatmul, 0));
    CHECK(rig.cop.describeWait(kMathThread) == "math waits for srcB valid");
    CHECK(rig.cop.counters().stalls[kMathThread] == 3);
    rig.unpack(true, DataFormat::Float32, kB);
    rig.run(kMathThread, encode(kOpMatmul, 0));
    CHECK(rig.cop.describeWait(kMathThread).empty());
    CHECK_FALSE(rig.cop.stalled(kMathThread));
  }
  SECTION("a third unpack stalls until math releases a bank") {
    rig.unpack(false, DataFormat::Float32, kA);
    rig.unpack(false, DataFormat::Float32, kB);
    CHECK(rig.cop.srcValid(false, 0));
    CHECK(rig.cop.srcValid(false, 1));
    REQUIRE(rig.push(kUnpackThread, unpackWord(false, DataFormat::Float32)).accepted());
    CopResult r = rig.push(kUnpackThread, kA);
    CHECK(r.stalled());
    CHECK(rig.cop.describeWait(kUnpackThread) == "unpack waits for a free srcA bank (both banks valid)");
    CHECK(rig.cop.awaitingArgument(kUnpackThread));
    const uint64_t progress = rig.cop.progress();
    r = rig.push(kUnpackThread, kA);  // retry: still full, still no side effect
    CHECK(r.stalled());
    CHECK(rig.cop.progress() == progress);
    // Math consumes bank 0 (tile kA) and the retried unpack refills it.
    rig.run(kMathThread, encode(kOpDatacopy, 0));
    CHECK(rig.run(kUnpackThread, kA) == 8 + 4128 / 16);
    CHECK_FALSE(rig.cop.awaitingArgument(kUnpackThread));
    // Banks are consumed in order: kB's tile first, then kA's.
    rig.run(kMathThread, encode(kOpDatacopy, 1));
    rig.run(kMathThread, encode(kOpDatacopy, 2));
    requireTilesEqual(rig.packOut(0), smallInts(1));
    requireTilesEqual(rig.packOut(1), smallInts(2));
    requireTilesEqual(rig.packOut(2), smallInts(1));
  }
}

TEST_CASE("keep bits leave a source valid for the next instruction", "[sim][coprocessor][math]") {
  Rig rig;
  rig.config(kCfgMathFidelity, kHiFi4);
  const Tile in1 = smallInts(1, 3), in0a = smallInts(2, 3), in0b = smallInts(3, 3);
  rig.putTile(kA, DataFormat::Float32, in1);
  rig.putTile(kB, DataFormat::Float32, in0a);
  rig.putTile(kC, DataFormat::Float32, in0b);
  rig.unpack(false, DataFormat::Float32, kA);
  rig.unpack(true, DataFormat::Float32, kB);
  rig.run(kMathThread, encode(kOpMatmul, 0 | kFieldKeepSrcA));
  CHECK(rig.cop.srcValid(false, 0));
  CHECK_FALSE(rig.cop.srcValid(true, 0));
  rig.unpack(true, DataFormat::Float32, kC);  // lands in srcB bank 1
  rig.run(kMathThread, encode(kOpMatmul, 1));
  CHECK_FALSE(rig.cop.srcValid(false, 0));
  requireTilesEqual(rig.packOut(0), naiveMatmul(in0a, in1, keep, keep));
  requireTilesEqual(rig.packOut(1), naiveMatmul(in0b, in1, keep, keep));

  SECTION("keep srcB: one srcB against two srcA tiles") {
    rig.unpack(false, DataFormat::Float32, kA);
    rig.unpack(true, DataFormat::Float32, kB);
    rig.run(kMathThread, eltWord(kEltAdd, 2, kFieldKeepSrcB));
    rig.unpack(false, DataFormat::Float32, kC);
    rig.run(kMathThread, eltWord(kEltAdd, 3));
    requireTilesEqual(rig.packOut(3), tileOf([&](size_t r, size_t c) { return in0b[at(r, c)] + in0a[at(r, c)]; }));
  }
}

TEST_CASE("argument words of interleaved threads do not mix", "[sim][coprocessor]") {
  Rig rig;
  rig.putTile(kA, DataFormat::Float16_b, smallInts(4));
  // unpack: UNPACK word 0; math: SETCONFIG word 0; pack: PACK word 0; then the
  // arguments in the opposite order.
  REQUIRE(rig.push(kUnpackThread, unpackWord(false, DataFormat::Float16_b)).accepted());
  REQUIRE(rig.push(kMathThread, encode(kOpSetConfig, kCfgDestFormat)).accepted());
  REQUIRE(rig.push(kPackThread, encode(kOpSetConfig, kCfgReluMode)).accepted());
  CHECK(rig.cop.awaitingArgument(kUnpackThread));
  CHECK(rig.cop.awaitingArgument(kMathThread));
  REQUIRE(rig.push(kPackThread, 1).accepted());         // relu mode 1
  REQUIRE(rig.push(kMathThread, kFloat16_b).accepted());  // dest format
  REQUIRE(rig.push(kUnpackThread, kA).accepted());        // tile address
  CHECK(rig.cop.config(kCfgReluMode) == 1);
  CHECK(rig.cop.config(kCfgDestFormat) == kFloat16_b);
  rig.run(kMathThread, encode(kOpDatacopy, 0));
  requireTilesEqual(rig.packOut(0, DataFormat::Float16_b),
                    tileOf([](size_t r, size_t c) { return std::max(smallInts(4)[at(r, c)], 0.0f); }));
  // A one-word instruction between a +1 instruction's words is impossible on
  // one thread: the next word IS the argument.
  REQUIRE(rig.push(kMathThread, encode(kOpSfpu, 0 | (kSfpuAbs << kSfpuFuncShift))).accepted());
  CHECK(rig.run(kMathThread, encode(kOpZeroDest, 0)) == 32 * 3);  // taken as the SFPU parameter
}

// ---------------------------------------------------------------- faults
TEST_CASE("faults: each code, and the status register", "[sim][coprocessor][fault]") {
  Rig rig;
  auto fault1 = [&](uint32_t thread, uint32_t word) {
    const CopResult r = rig.push(thread, word);
    REQUIRE(r.faulted());
    CHECK(rig.cop.status(thread) == r.fault);
    return r.fault;
  };
  auto fault2 = [&](uint32_t thread, uint32_t word, uint32_t arg) {
    REQUIRE(rig.push(thread, word).accepted());
    return fault1(thread, arg);
  };
  SECTION("illegal instruction") {
    CHECK(fault1(kMathThread, encode(0x7F, 0)) == kCopIllegalInstruction);          // unknown opcode
    CHECK(fault1(kMathThread, 0) == kCopIllegalInstruction);                         // opcode 0
    CHECK(fault1(kMathThread, encode(kOpDatacopy, 1u << 12)) == kCopIllegalInstruction);  // reserved bit
    CHECK(fault1(kMathThread, encode(kOpZeroDest, 1u << 20)) == kCopIllegalInstruction);
    CHECK(fault2(kMathThread, reduceWord(kReduceRows, kReduceSum, 0) | (3u << kReduceDimShift), 0) ==
          kCopIllegalInstruction);  // dim 3
    CHECK(fault2(kMathThread, reduceWord(kReduceRows, static_cast<ReduceType>(2), 0), 0) == kCopIllegalInstruction);
    CHECK(fault2(kMathThread, encode(kOpSfpu, kSfpuFuncCount << kSfpuFuncShift), 0) == kCopIllegalInstruction);
    CHECK(fault2(kMathThread, sfpuWord(kSfpuPower, 0), 0x10000) == kCopIllegalInstruction);
    CHECK(fault2(kMathThread, encode(kOpSetConfig, kConfigRegCount), 0) == kCopIllegalInstruction);
    CHECK(fault2(kMathThread, encode(kOpSetConfig, kCfgMathFidelity), 6) == kCopIllegalInstruction);
    CHECK(fault2(kMathThread, encode(kOpSetConfig, kCfgReluMode), 3) == kCopIllegalInstruction);
    CHECK(fault2(kUnpackThread, unpackWord(false, DataFormat::Float32) | (1u << 15), kA) == kCopIllegalInstruction);
    // Tile shape code 7 names no shape ([14:12]).
    CHECK(fault2(kUnpackThread, unpackWord(false, DataFormat::Float32) | (7u << kTileShapeShift), kA) ==
          kCopIllegalInstruction);
    CHECK(fault2(kPackThread, packWord(0, DataFormat::Float32) | (7u << kTileShapeShift), kOut) == kCopIllegalInstruction);
    CHECK(fault2(kPackThread, packWord(0, DataFormat::Float32) | (1u << 11), kOut) == kCopIllegalInstruction);
    rig.config(kCfgUntilizeStride, 32);  // Float32 rows need 128 bytes
    CHECK(fault2(kPackThread, packWord(0, DataFormat::Float32, kPackUntilize), kOut) == kCopIllegalInstruction);
  }
  SECTION("bad address") {
    const uint32_t tile = 4128;
    CHECK(fault2(kUnpackThread, unpackWord(false, DataFormat::Float32), 0x1000) == kCopBadAddress);  // firmware area
    CHECK(fault2(kUnpackThread, unpackWord(false, DataFormat::Float32), kDataBufferBase - 16) == kCopBadAddress);
    CHECK(fault2(kUnpackThread, unpackWord(false, DataFormat::Float32), kL1Size - tile + 16) == kCopBadAddress);  // crosses the end
    CHECK(fault2(kUnpackThread, unpackWord(false, DataFormat::Float32), 0xFFFFFFF0u) == kCopBadAddress);  // outside L1
    CHECK(fault2(kPackThread, packWord(0, DataFormat::Float32), kL1Size - tile + 4) == kCopBadAddress);
    CHECK(fault2(kPackThread, packWord(0, DataFormat::Float32), 0x12000) == kCopBadAddress);  // overlay blob
    rig.config(kCfgUntilizeStride, 1024);
    CHECK(fault2(kPackThread, packWord(0, DataFormat::Float32, kPackUntilize), kL1Size - 31 * 1024) ==
          kCopBadAddress);  // last row past the end
    // The last tile of L1 is fine.
    rig.unpack(false, DataFormat::Float32, kL1Size - tile);
    CHECK(rig.cop.status(kUnpackThread) == kCopOk);
  }
  SECTION("bad dest index") {
    rig.config(kCfgDestFormat, kFloat32);
    CHECK(fault1(kMathThread, encode(kOpZeroDest, 8)) == kCopBadDestIndex);
    CHECK(fault2(kPackThread, packWord(8, DataFormat::Float32), kOut) == kCopBadDestIndex);
    rig.config(kCfgDestFormat, kInt32);
    CHECK(fault2(kMathThread, sfpuWord(kSfpuAbs, 15), 0) == kCopBadDestIndex);
    rig.config(kCfgDestFormat, kFloat16_b);
    rig.run(kMathThread, encode(kOpZeroDest, 15));
    CHECK(rig.cop.status(kMathThread) == kCopOk);  // a success clears the status
  }
  SECTION("bad format") {
    CHECK(fault2(kMathThread, encode(kOpSetConfig, kCfgDestFormat), kBfp8_b) == kCopBadFormat);
    CHECK(fault2(kMathThread, encode(kOpSetConfig, kCfgDestFormat), kInt8) == kCopBadFormat);
    CHECK(fault2(kUnpackThread, encode(kOpUnpack, 31u << kFormatShift), kA) == kCopBadFormat);
    CHECK(fault2(kPackThread, encode(kOpPack, 20u << kFormatShift), kOut) == kCopBadFormat);
    rig.config(kCfgUntilizeStride, 128);
    CHECK(fault2(kPackThread, packWord(0, DataFormat::Bfp4, kPackUntilize), kOut) == kCopBadFormat);
  }
  SECTION("a fault ends the instruction: the next word starts a new one") {
    CHECK(fault2(kUnpackThread, unpackWord(false, DataFormat::Float32), 0) == kCopBadAddress);
    CHECK_FALSE(rig.cop.awaitingArgument(kUnpackThread));
    CHECK(rig.cop.counters().faults[kUnpackThread] == 1);
    rig.putTile(kA, DataFormat::Float32, smallInts(1));
    rig.unpack(false, DataFormat::Float32, kA);
    CHECK(rig.cop.status(kUnpackThread) == kCopOk);
  }
  CHECK(std::string(sim::copFaultName(kCopBadAddress)) == "bad-address");
}

// ---------------------------------------------------------------- counters
TEST_CASE("cycle costs and counters", "[sim][coprocessor][perf]") {
  Rig rig;
  rig.putTile(kA, DataFormat::Float16_b, smallInts(1));
  rig.putTile(kB, DataFormat::Bfp8_b, smallInts(2));
  CHECK(rig.run(kMathThread, encode(kOpSetConfig, kCfgMathFidelity), kHiFi2) == 1);
  CHECK(rig.run(kUnpackThread, unpackWord(false, DataFormat::Float16_b), kA) == 8 + 2080 / 16);
  CHECK(rig.run(kUnpackThread, unpackWord(true, DataFormat::Bfp8_b), kB) == 8 + 1120 / 16);
  CHECK(rig.run(kMathThread, encode(kOpMatmul, 0)) == 2 * 16);
  CHECK(rig.run(kUnpackThread, unpackWord(false, DataFormat::Float16_b, kUnpackZero), 0) == 16);
  CHECK(rig.run(kMathThread, encode(kOpDatacopy, 1)) == 8);
  CHECK(rig.run(kMathThread, encode(kOpZeroDest, 2)) == 4);
  CHECK(rig.run(kPackThread, packWord(0, DataFormat::Bfp8_b), kOut) == 8 + 1120 / 16);
  rig.config(kCfgUntilizeStride, 64);
  CHECK(rig.run(kPackThread, packWord(0, DataFormat::Float16_b, kPackUntilize), kOut) == 8 + 32 + 2048 / 16);

  const sim::CopCounters& n = rig.cop.counters();
  CHECK(n.unpack.instructions == 3);
  CHECK(n.unpack.cycles == 138 + 78 + 16);
  CHECK(n.math.instructions == 3);
  CHECK(n.math.cycles == 32 + 8 + 4);
  CHECK(n.pack.instructions == 2);
  CHECK(n.config.instructions == 2);
  CHECK(n.tilesUnpacked == 3);
  CHECK(n.tilesPacked == 2);
  CHECK(n.matmulTiles == 1);
}

// The tile product (every matmul instruction) against the definition written
// out here: acc[i][j] = acc[i][j] + (0 + b[i][0]*a[0][j] + b[i][1]*a[1][j] + ...),
// k ascending, one float multiply and one float add per step, bit for bit
// (the simulator's product runs 8 lanes at a time, AVX2 where the CPU has it).
TEST_CASE("coprocessor math: the HiFi4 tile product sums in k order, bit for bit", "[cop][matmul]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  std::uniform_int_distribution<int> kind(0, 9);
  for (int round = 0; round < 20; ++round) {
    sim::copmath::Tile a, b, acc;
    for (size_t i = 0; i < sim::copmath::kValues; ++i) {
      a[i] = value(rng);
      // Some zeros, negative zeros and large values, so signs of zero and rounding show.
      const int k = kind(rng);
      b[i] = k == 0 ? 0.0f : k == 1 ? -0.0f : k == 2 ? value(rng) * 1e30f : value(rng);
      acc[i] = round % 2 ? value(rng) : 0.0f;
    }
    sim::copmath::Tile expected = acc;
    for (size_t i = 0; i < 32; ++i)
      for (size_t j = 0; j < 32; ++j) {
        volatile float dot = 0.0f;  // volatile: one rounding per step, no contraction
        for (size_t k = 0; k < 32; ++k) {
          volatile float p = b[i * 32 + k] * a[k * 32 + j];
          dot = dot + p;
        }
        expected[i * 32 + j] = expected[i * 32 + j] + dot;
      }
    sim::copmath::matmulAccumulate(contract::kHiFi4, b, a, acc);
    size_t mismatches = 0;
    for (size_t i = 0; i < sim::copmath::kValues; ++i)
      if (std::bit_cast<uint32_t>(acc[i]) != std::bit_cast<uint32_t>(expected[i])) ++mismatches;
    CHECK(mismatches == 0);
  }
}

TEST_CASE("A 64-tile dest (wormhole A0): indices past 15 through fields [23:22]", "[sim][coprocessor][dest]") {
  // Index 40: [3:0] = 8, [23:22] = 40 >> 4 = 2.
  CHECK(destIndexFields(40) == 0x800008u);
  CHECK(destIndexOf(0x800008u) == 40u);
  CHECK(destIndexFields(15) == 15u);  // indices below 16 encode as before

  // Integers of magnitude at most 256: exact in Float16_b (8 significant bits).
  const Tile t = tileOf([](size_t r, size_t c) { return static_cast<float>((r * 32 + c) % 200) - 100.0f; });
  SECTION("16-bit dest: 64 tiles") {
    Rig rig(64);
    rig.config(kCfgDestFormat, kFloat16_b);
    rig.loadDest(t, destIndexFields(63));
    rig.loadDest(tileOf([](size_t, size_t) { return 1.0f; }), destIndexFields(47));
    requireTilesEqual(rig.packOut(destIndexFields(63)), t);
    CHECK(rig.packOut(destIndexFields(47))[0] == 1.0f);
    CHECK(rig.cop.destValue(63, 1023) == -77.0f);  // 1023 % 200 - 100
    CHECK(rig.push(kMathThread, encode(kOpZeroDest, 1u << 21)).fault == kCopIllegalInstruction);  // still reserved
  }
  SECTION("Float32 dest: 32 tiles") {
    Rig rig(64);
    rig.config(kCfgDestFormat, kFloat32);
    rig.loadDest(t, destIndexFields(31));
    requireTilesEqual(rig.packOut(destIndexFields(31)), t);
    CHECK(rig.push(kMathThread, encode(kOpZeroDest, destIndexFields(32))).fault == kCopBadDestIndex);
  }
  SECTION("the contract's 16-tile dest rejects the high bits") {
    Rig rig;
    rig.config(kCfgDestFormat, kFloat16_b);
    CHECK(rig.push(kMathThread, encode(kOpZeroDest, destIndexFields(16))).fault == kCopBadDestIndex);
    REQUIRE(rig.push(kPackThread, packWord(destIndexFields(16), DataFormat::Float32)).accepted());  // + argument
    CHECK(rig.push(kPackThread, kOut).fault == kCopBadDestIndex);
  }
}
