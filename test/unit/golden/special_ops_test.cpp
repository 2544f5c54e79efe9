// Special ops of the reference model: splice, depthwise, embedding, tilizer,
// topk, the quantization family and sparse matmul. Expected values are worked
// out by hand in the comments, or (topk) by a plain sort in the test.
#include "golden/special_ops.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

using namespace tessera;
using namespace tessera::golden;
using netlist::Dim2;
using netlist::UblockOrder;

namespace {

const SourceLoc kLoc{1, 1};
constexpr int64_t T = 32; // tile side

// An op with its attributes; outputs stay in Float32 unless a test says.
struct Op {
  netlist::OpAttributes attrs;
  OpSpec spec;
  explicit Op(const std::string& type, int64_t t = 1, Dim2 grid = {1, 1}, Dim2 mblock = {1, 1}, Dim2 ublock = {1, 1}) {
    attrs.loc = kLoc;
    spec.name = "op";
    spec.type = type;
    spec.attrs = &attrs;
    spec.t = t;
    spec.grid = grid;
    spec.mblock = mblock;
    spec.ublock = ublock;
    spec.outDf = spec.accDf = spec.intermedDf = netlist::DataFormat::Float32;
  }
  Op(const Op&) = delete;
  void splice(int input, int64_t index, int64_t length, int64_t stride) { attrs.spliceInputs[input] = {index, length, stride}; }
};

using ValueFn = std::function<float(int64_t w, int64_t z, int64_t r, int64_t c)>;

Tensor make(int64_t w, int64_t z, int64_t rt, int64_t ct, const ValueFn& f) {
  Tensor t(w, z, rt * T, ct * T);
  for (int64_t a = 0; a < w; ++a)
    for (int64_t b = 0; b < z; ++b)
      for (int64_t r = 0; r < t.r; ++r)
        for (int64_t c = 0; c < t.c; ++c) t.at(a, b, r, c) = f(a, b, r, c);
  return t;
}

// Every tile holds one value given by its (w, z, tile row, tile column).
Tensor tiles(int64_t w, int64_t z, int64_t rt, int64_t ct, const ValueFn& f) {
  return make(w, z, rt, ct, [&](int64_t a, int64_t b, int64_t r, int64_t c) { return f(a, b, r / T, c / T); });
}

// The single value of a tile (fails when the tile is not uniform).
float tileValue(const Tensor& t, int64_t w, int64_t z, int64_t rt, int64_t ct) {
  const float v = t.at(w, z, rt * T, ct * T);
  for (int64_t r = 0; r < T; ++r)
    for (int64_t c = 0; c < T; ++c)
      if (t.at(w, z, rt * T + r, ct * T + c) != v) {
        FAIL_CHECK("tile (" << w << "," << z << "," << rt << "," << ct << ") is not uniform");
        return v;
      }
  return v;
}

void requireShape(const Tensor& t, int64_t w, int64_t z, int64_t r, int64_t c) {
  REQUIRE(t.w == w);
  REQUIRE(t.z == z);
  REQUIRE(t.r == r);
  REQUIRE(t.c == c);
}

} // namespace

// ============================================================================ splice
TEST_CASE("splice at t granularity takes each input's slices in turn", "[special]") {
  // The nary t-concat netlist: inputs with t = 2, 2, 3, 4 and
  // input<i>: [i, 1, ...] so each contributes its slice i once.
  Op op("splice", 4);
  op.attrs.granularity.set("t", kLoc);
  op.splice(0, 0, 1, 2);
  op.splice(1, 1, 1, 1);
  op.splice(2, 2, 1, 1);
  op.splice(3, 3, 1, 1);
  const int64_t zs[] = {2, 2, 3, 4};
  std::vector<Tensor> in;
  for (int64_t i = 0; i < 4; ++i)
    in.push_back(tiles(2, zs[i], 1, 1, [i](int64_t w, int64_t z, int64_t, int64_t) {
      return static_cast<float>(1000 * w + 10 * i + z);
    }));
  const Tensor out = evalSplice(op.spec, in);
  requireShape(out, 2, 4, T, T);
  for (int64_t w = 0; w < 2; ++w) {
    // out slice i = input i, slice i: 10*i + i.
    CHECK(tileValue(out, w, 0, 0, 0) == 1000 * w + 0);
    CHECK(tileValue(out, w, 1, 0, 0) == 1000 * w + 11);
    CHECK(tileValue(out, w, 2, 0, 0) == 1000 * w + 22);
    CHECK(tileValue(out, w, 3, 0, 0) == 1000 * w + 33);
  }
}

TEST_CASE("splice at t granularity repeats rounds until the output is full", "[special]") {
  // input0 t=2 [0,1,1], input1 t=4 [0,2,2]: a0 b0 b1 | a1 b2 b3.
  Op op("splice", 6);
  op.attrs.granularity.set("t", kLoc);
  op.splice(0, 0, 1, 1);
  op.splice(1, 0, 2, 2);
  const Tensor a = tiles(1, 2, 1, 2, [](int64_t, int64_t z, int64_t, int64_t) { return static_cast<float>(z); });
  const Tensor b = tiles(1, 4, 1, 2, [](int64_t, int64_t z, int64_t, int64_t) { return static_cast<float>(100 + z); });
  op.spec.mblock = {1, 2};
  const Tensor out = evalSplice(op.spec, std::vector<Tensor>{a, b});
  const float expected[] = {0, 100, 101, 1, 102, 103};
  for (int64_t z = 0; z < 6; ++z) {
    CHECK(tileValue(out, 0, z, 0, 0) == expected[z]);
    CHECK(tileValue(out, 0, z, 0, 1) == expected[z]);
  }
}

TEST_CASE("splice at ublock granularity in row order concatenates columns", "[special]") {
  // The concat netlist, smaller: output mblock 2x3 of 1x1 ublocks; input0 2x2
  // tiles [0,2,2] gives one row's two ublocks, input1 2x1 [0,1,1] the third.
  Op op("splice", 1, {1, 1}, {2, 3}, {1, 1});
  op.splice(0, 0, 2, 2);
  op.splice(1, 0, 1, 1);
  const Tensor a = tiles(1, 1, 2, 2, [](int64_t, int64_t, int64_t r, int64_t c) { return static_cast<float>(10 * r + c); });
  const Tensor b = tiles(1, 1, 2, 1, [](int64_t, int64_t, int64_t r, int64_t) { return static_cast<float>(100 + r); });
  const Tensor out = evalSplice(op.spec, std::vector<Tensor>{a, b}, UblockOrder::R);
  requireShape(out, 1, 1, 2 * T, 3 * T);
  for (int64_t r = 0; r < 2; ++r) {
    CHECK(tileValue(out, 0, 0, r, 0) == 10 * r);
    CHECK(tileValue(out, 0, 0, r, 1) == 10 * r + 1);
    CHECK(tileValue(out, 0, 0, r, 2) == 100 + r);
  }
}

TEST_CASE("splice at ublock granularity in column order stacks rows", "[special]") {
  // Output mblock 3x2 walked by columns: offsets 0,1,2 are rows 0..2 of
  // column 0. input0 2x2 [0,2,2] fills rows 0-1, input1 1x2 [0,1,1] row 2.
  Op op("splice", 1, {1, 1}, {3, 2}, {1, 1});
  op.splice(0, 0, 2, 2);
  op.splice(1, 0, 1, 1);
  const Tensor a = tiles(1, 1, 2, 2, [](int64_t, int64_t, int64_t r, int64_t c) { return static_cast<float>(10 * r + c); });
  const Tensor b = tiles(1, 1, 1, 2, [](int64_t, int64_t, int64_t, int64_t c) { return static_cast<float>(100 + c); });
  const Tensor out = evalSplice(op.spec, std::vector<Tensor>{a, b}, UblockOrder::C);
  requireShape(out, 1, 1, 3 * T, 2 * T);
  for (int64_t c = 0; c < 2; ++c) {
    CHECK(tileValue(out, 0, 0, 0, c) == c);
    CHECK(tileValue(out, 0, 0, 1, c) == 10 + c);
    CHECK(tileValue(out, 0, 0, 2, c) == 100 + c);
  }
}

TEST_CASE("splice drops index ublocks each round and advances by stride", "[special]") {
  // As in the int8 splice netlist. input0 2x5 tiles [4,1,1]: round 1 drops 4,
  // takes offset 4 = (0,4), moves to 5; round 2 takes 9 = (1,4).
  // input1 2x3 tiles [1,1,2]: takes offset 1 = (0,1), then 4 = (1,1).
  Op op("splice", 1, {1, 1}, {2, 2}, {1, 1});
  op.splice(0, 4, 1, 1);
  op.splice(1, 1, 1, 2);
  const Tensor a = tiles(1, 1, 2, 5, [](int64_t, int64_t, int64_t r, int64_t c) { return static_cast<float>(10 * r + c); });
  const Tensor b =
      tiles(1, 1, 2, 3, [](int64_t, int64_t, int64_t r, int64_t c) { return static_cast<float>(100 + 10 * r + c); });
  const Tensor out = evalSplice(op.spec, std::vector<Tensor>{a, b}, UblockOrder::R);
  CHECK(tileValue(out, 0, 0, 0, 0) == 4);
  CHECK(tileValue(out, 0, 0, 0, 1) == 101);
  CHECK(tileValue(out, 0, 0, 1, 0) == 14);
  CHECK(tileValue(out, 0, 0, 1, 1) == 111);
}

TEST_CASE("splice at ublock granularity splits the inputs over the grid", "[special]") {
  SECTION("two grid rows: each core concatenates its own row") {
    // Per core: input0 and input1 are 1x1 tile; output mblock 1x2.
    Op op("splice", 1, {2, 1}, {1, 2}, {1, 1});
    op.splice(0, 0, 1, 1);
    op.splice(1, 0, 1, 1);
    const Tensor a = tiles(1, 1, 2, 1, [](int64_t, int64_t, int64_t r, int64_t) { return static_cast<float>(r); });
    const Tensor b = tiles(1, 1, 2, 1, [](int64_t, int64_t, int64_t r, int64_t) { return static_cast<float>(100 + r); });
    const Tensor out = evalSplice(op.spec, std::vector<Tensor>{a, b}); // single-row mblocks: order irrelevant
    for (int64_t r = 0; r < 2; ++r) {
      CHECK(tileValue(out, 0, 0, r, 0) == r);
      CHECK(tileValue(out, 0, 0, r, 1) == 100 + r);
    }
  }
  SECTION("two grid columns: each core stacks its own column") {
    Op op("splice", 1, {1, 2}, {2, 1}, {1, 1});
    op.splice(0, 0, 1, 1);
    op.splice(1, 0, 1, 1);
    const Tensor a = tiles(1, 1, 1, 2, [](int64_t, int64_t, int64_t, int64_t c) { return static_cast<float>(c); });
    const Tensor b = tiles(1, 1, 1, 2, [](int64_t, int64_t, int64_t, int64_t c) { return static_cast<float>(100 + c); });
    const Tensor out = evalSplice(op.spec, std::vector<Tensor>{a, b});
    for (int64_t c = 0; c < 2; ++c) {
      CHECK(tileValue(out, 0, 0, 0, c) == c);
      CHECK(tileValue(out, 0, 0, 1, c) == 100 + c);
    }
  }
}

TEST_CASE("splice moves whole ublocks", "[special]") {
  // ublock 1x2: input0 1x2 tiles is one ublock, input1 another: a0 a1 b0 b1.
  Op op("splice", 1, {1, 1}, {1, 2}, {1, 2});
  op.splice(0, 0, 1, 1);
  op.splice(1, 0, 1, 1);
  const Tensor a = tiles(1, 1, 1, 2, [](int64_t, int64_t, int64_t, int64_t c) { return static_cast<float>(c); });
  const Tensor b = tiles(1, 1, 1, 2, [](int64_t, int64_t, int64_t, int64_t c) { return static_cast<float>(10 + c); });
  const Tensor out = evalSplice(op.spec, std::vector<Tensor>{a, b});
  requireShape(out, 1, 1, T, 4 * T);
  CHECK(tileValue(out, 0, 0, 0, 0) == 0);
  CHECK(tileValue(out, 0, 0, 0, 1) == 1);
  CHECK(tileValue(out, 0, 0, 0, 2) == 10);
  CHECK(tileValue(out, 0, 0, 0, 3) == 11);
}

TEST_CASE("splice rounds its output to out_df", "[special]") {
  // 1.001 is closer to 1.0 than to the next bfloat16, 1.0078125.
  Op op("splice");
  op.spec.outDf = netlist::DataFormat::Float16_b;
  op.splice(0, 0, 1, 1);
  const Tensor a = tiles(1, 1, 1, 1, [](int64_t, int64_t, int64_t, int64_t) { return 1.001f; });
  CHECK(tileValue(evalSplice(op.spec, std::vector<Tensor>{a}), 0, 0, 0, 0) == 1.0f);
}

TEST_CASE("splice reports what it cannot compute", "[special]") {
  const Tensor a22 = tiles(1, 1, 2, 2, [](int64_t, int64_t, int64_t, int64_t) { return 1.0f; });
  const Tensor a21 = tiles(1, 1, 2, 1, [](int64_t, int64_t, int64_t, int64_t) { return 1.0f; });
  SECTION("unknown granularity") {
    Op op("splice");
    op.attrs.granularity.set("tiles", kLoc);
    op.splice(0, 0, 1, 1);
    CHECK_THROWS_WITH(evalSplice(op.spec, std::vector<Tensor>{a21}), Catch::Contains("granularity"));
  }
  SECTION("an input without its attribute") {
    Op op("splice", 1, {1, 1}, {2, 3}, {1, 1});
    op.splice(0, 0, 2, 2);
    CHECK_THROWS_WITH(evalSplice(op.spec, std::vector<Tensor>{a22, a21}, UblockOrder::R),
                      Catch::Contains("input1: [index, length, stride]"));
  }
  SECTION("index + stride does not divide the input") {
    Op op("splice", 1, {1, 1}, {1, 1}, {1, 1});
    op.splice(0, 0, 1, 3); // 4 ublocks, 0 + 3 does not divide 4
    CHECK_THROWS_WITH(evalSplice(op.spec, std::vector<Tensor>{a22}, UblockOrder::R), Catch::Contains("divide"));
  }
  SECTION("an input left partly unread") {
    // t=3 input, one slice per round, output t=2: 2 of 3 slices consumed.
    Op op("splice", 2);
    op.attrs.granularity.set("t", kLoc);
    op.splice(0, 0, 1, 1);
    const Tensor z3 = tiles(1, 3, 1, 1, [](int64_t, int64_t, int64_t, int64_t) { return 1.0f; });
    CHECK_THROWS_WITH(evalSplice(op.spec, std::vector<Tensor>{z3}), Catch::Contains("consume 2 of its 3"));
  }
  SECTION("an input runs out before the output is full") {
    // One ublock in, two wanted.
    Op op("splice", 1, {1, 1}, {1, 2}, {1, 1});
    op.splice(0, 0, 1, 1);
    const Tensor one = tiles(1, 1, 1, 1, [](int64_t, int64_t, int64_t, int64_t) { return 1.0f; });
    CHECK_THROWS_WITH(evalSplice(op.spec, std::vector<Tensor>{one}), Catch::Contains("run past its 1 ublock"));
  }
}

// ============================================================================ depthwise
TEST_CASE("depthwise sums the tile products of its m_k blocks", "[special]") {
  // m_k=2, one output tile: input0 tiles [ones, twos], input1 tiles
  // [threes; diag(0,1,..,31)]. ones x threes = 32*3 = 96 everywhere;
  // twos x diag(j) = 2*j in column j. Total 96 + 2j.
  Op op("depthwise");
  op.attrs.mK.set(2, kLoc);
  op.attrs.uKt.set(1, kLoc);
  const Tensor a = tiles(1, 1, 1, 2, [](int64_t, int64_t, int64_t, int64_t c) { return c == 0 ? 1.0f : 2.0f; });
  const Tensor b = make(1, 1, 2, 1, [](int64_t, int64_t, int64_t r, int64_t c) {
    if (r < T) return 3.0f;
    return r - T == c ? static_cast<float>(c) : 0.0f;
  });
  SECTION("without bias") {
    const Tensor out = evalDepthwise(op.spec, std::vector<Tensor>{a, b});
    requireShape(out, 1, 1, T, T);
    for (int64_t r = 0; r < T; ++r)
      for (int64_t c = 0; c < T; ++c) CHECK(out.at(0, 0, r, c) == 96.0f + 2.0f * c);
  }
  SECTION("with bias: the first row of each bias tile is added to every row") {
    op.attrs.bias.set(true, kLoc);
    const Tensor bias = make(1, 1, 1, 1, [](int64_t, int64_t, int64_t r, int64_t c) {
      return r == 0 ? 0.5f * static_cast<float>(c) : 100.0f;
    });
    const Tensor out = evalDepthwise(op.spec, std::vector<Tensor>{a, b, bias});
    for (int64_t r = 0; r < T; ++r)
      for (int64_t c = 0; c < T; ++c) CHECK(out.at(0, 0, r, c) == 96.0f + 2.5f * c);
  }
}

TEST_CASE("depthwise pairs input0 column c + b*outCt with input1 tile (b, c)", "[special]") {
  // Two output columns, m_k=2: input0 has 4 tile columns of value
  // (t+1)*(w+1); input1 2x2 tiles of ones. Output column c of entry w:
  // 32*(c+1)*(w+1) + 32*(c+3)*(w+1): c=0 -> 128(w+1), c=1 -> 192(w+1).
  Op op("depthwise", 1, {1, 1}, {1, 2}, {1, 1});
  op.attrs.mK.set(2, kLoc);
  const Tensor a = tiles(2, 1, 1, 4, [](int64_t w, int64_t, int64_t, int64_t c) { return static_cast<float>((c + 1) * (w + 1)); });
  const Tensor b = tiles(2, 1, 2, 2, [](int64_t, int64_t, int64_t, int64_t) { return 1.0f; });
  const Tensor out = evalDepthwise(op.spec, std::vector<Tensor>{a, b});
  requireShape(out, 2, 1, T, 2 * T);
  for (int64_t w = 0; w < 2; ++w) {
    CHECK(tileValue(out, w, 0, 0, 0) == 128.0f * (w + 1));
    CHECK(tileValue(out, w, 0, 0, 1) == 192.0f * (w + 1));
  }
}

TEST_CASE("depthwise rejects attributes BUDA does not accept", "[special]") {
  Op op("depthwise");
  op.attrs.mK.set(2, kLoc);
  const Tensor a = tiles(1, 1, 1, 2, [](int64_t, int64_t, int64_t, int64_t) { return 1.0f; });
  const Tensor b = tiles(1, 1, 2, 1, [](int64_t, int64_t, int64_t, int64_t) { return 1.0f; });
  SECTION("u_kt other than 1") {
    op.attrs.uKt.set(2, kLoc);
    CHECK_THROWS_WITH(evalDepthwise(op.spec, std::vector<Tensor>{a, b}), Catch::Contains("u_kt = 1"));
  }
  SECTION("input1 rows other than m_k tiles") {
    const Tensor b1 = tiles(1, 1, 1, 1, [](int64_t, int64_t, int64_t, int64_t) { return 1.0f; });
    CHECK_THROWS_WITH(evalDepthwise(op.spec, std::vector<Tensor>{a, b1}), Catch::Contains("input1 must be"));
  }
}

// ============================================================================ embedding
namespace {
constexpr float kPadIndex = 4294967295.0f; // 0xffffffff as a float (rounds to 2^32)

// table[r][c] = r + c/64: every row distinct, exact in float.
Tensor table64() {
  return make(1, 1, 2, 1, [](int64_t, int64_t, int64_t r, int64_t c) { return static_cast<float>(r) + c / 64.0f; });
}

void checkRow(const Tensor& out, int64_t row, float tableRow) {
  for (int64_t c = 0; c < T; ++c) CHECK(out.at(0, 0, row, c) == tableRow + c / 64.0f);
}
void checkZeroRow(const Tensor& out, int64_t row) {
  for (int64_t c = 0; c < T; ++c) CHECK(out.at(0, 0, row, c) == 0.0f);
}
} // namespace

TEST_CASE("embedding gathers table rows by index", "[special]") {
  Op op("embedding");
  op.spec.inDf = {netlist::DataFormat::Float32, netlist::DataFormat::RawUInt32};
  op.attrs.numIndices.set(32, kLoc);
  // Row 0 of the index tile: (7j) mod 64, with a padding marker at j=3.
  const Tensor idx = make(1, 1, 1, 1, [](int64_t, int64_t, int64_t r, int64_t c) {
    if (r != 0) return 9.0f; // not read: only the first 32 values are indices
    return c == 3 ? kPadIndex : static_cast<float>(7 * c % 64);
  });
  const Tensor out = evalEmbedding(op.spec, std::vector<Tensor>{table64(), idx});
  requireShape(out, 1, 1, T, T);
  for (int64_t j = 0; j < T; ++j) {
    if (j == 3)
      checkZeroRow(out, j);
    else
      checkRow(out, j, static_cast<float>(7 * j % 64));
  }
}

TEST_CASE("embedding leaves rows past num_indices zero", "[special]") {
  Op op("embedding");
  op.attrs.numIndices.set(20, kLoc);
  const Tensor idx = make(1, 1, 1, 1, [](int64_t, int64_t, int64_t, int64_t c) { return static_cast<float>(c); });
  const Tensor out = evalEmbedding(op.spec, std::vector<Tensor>{table64(), idx});
  checkRow(out, 19, 19.0f);
  checkZeroRow(out, 20);
  checkZeroRow(out, 31);
}

TEST_CASE("embedding reads each grid row's own indices", "[special]") {
  // Grid 2x1: core row 0 reads index tile row 0, core row 1 tile row 1.
  Op op("embedding", 1, {2, 1});
  op.attrs.numIndices.set(32, kLoc);
  const Tensor idx = make(1, 1, 2, 1, [](int64_t, int64_t, int64_t r, int64_t c) {
    if (r == 0) return static_cast<float>(c);
    if (r == T) return static_cast<float>(63 - c);
    return 0.0f;
  });
  const Tensor out = evalEmbedding(op.spec, std::vector<Tensor>{table64(), idx});
  requireShape(out, 1, 1, 2 * T, T);
  for (int64_t j = 0; j < T; ++j) {
    checkRow(out, j, static_cast<float>(j));
    checkRow(out, T + j, static_cast<float>(63 - j));
  }
}

TEST_CASE("embedding reads raw index words tile by tile", "[special]") {
  // 64 indices from a 1x2-tile index block: BUDA flattens RawUInt32 per tile,
  // so they are rows 0 and 1 of tile 0, not row 0 of both tiles.
  Op op("embedding", 1, {1, 1}, {2, 1});
  op.attrs.numIndices.set(64, kLoc);
  const Tensor idx = make(1, 1, 1, 2, [](int64_t, int64_t, int64_t r, int64_t c) {
    if (c >= T) return 63.0f; // tile 1: never read
    if (r == 0) return static_cast<float>(c);
    if (r == 1) return static_cast<float>(32 + c);
    return 0.0f;
  });
  const Tensor out = evalEmbedding(op.spec, std::vector<Tensor>{table64(), idx});
  requireShape(out, 1, 1, 2 * T, T);
  for (int64_t j = 0; j < 2 * T; ++j) checkRow(out, j, static_cast<float>(j));
}

TEST_CASE("embedding reports indices and shapes it cannot use", "[special]") {
  const Tensor idx = make(1, 1, 1, 1, [](int64_t, int64_t, int64_t, int64_t c) { return c == 5 ? 64.0f : 0.0f; });
  SECTION("an index past the table") {
    Op op("embedding");
    op.attrs.numIndices.set(32, kLoc);
    CHECK_THROWS_WITH(evalEmbedding(op.spec, std::vector<Tensor>{table64(), idx}),
                      Catch::Contains("outside the table of 64 rows"));
  }
  SECTION("num_indices that do not fill the op's rows") {
    Op op("embedding");
    op.attrs.numIndices.set(40, kLoc);
    CHECK_THROWS_WITH(evalEmbedding(op.spec, std::vector<Tensor>{table64(), idx}), Catch::Contains("num_indices 40"));
  }
  SECTION("indices that are not RawUInt32") {
    Op op("embedding");
    op.attrs.numIndices.set(32, kLoc);
    op.spec.inDf = {netlist::DataFormat::Float32, netlist::DataFormat::Float32};
    CHECK_THROWS_WITH(evalEmbedding(op.spec, std::vector<Tensor>{table64(), idx}), Catch::Contains("RawUInt32"));
  }
}

// ============================================================================ tilizer
TEST_CASE("tilizer keeps the values and rounds to out_df", "[special]") {
  Op op("tilizer", 2, {1, 1}, {1, 2}, {1, 1});
  op.spec.outDf = netlist::DataFormat::Float16_b;
  const Tensor in = make(1, 2, 1, 2, [](int64_t, int64_t z, int64_t r, int64_t c) {
    return (r + c) % 2 == 0 ? 1.001f : static_cast<float>(z * 100 + r);
  });
  const Tensor out = evalTilizer(op.spec, std::vector<Tensor>{in});
  requireShape(out, 1, 2, T, 2 * T);
  for (int64_t z = 0; z < 2; ++z)
    for (int64_t r = 0; r < T; ++r)
      for (int64_t c = 0; c < 2 * T; ++c)
        // 1.001 -> bfloat16 1.0; z*100 + r <= 131 is exact in bfloat16.
        CHECK(out.at(0, z, r, c) == ((r + c) % 2 == 0 ? 1.0f : static_cast<float>(z * 100 + r)));

  Op small("tilizer");
  CHECK_THROWS_WITH(evalTilizer(small.spec, std::vector<Tensor>{in}), Catch::Contains("blocking"));
}

TEST_CASE("tilizer rounds through dest: acc_df Float16_b, out_df Float16", "[special]") {
  // The kernel copies the tiles through dest, so a Float16_b dest drops the
  // mantissa bits Float16 keeps: 1 + 2^-10 is a Float16 value, in bfloat16
  // it rounds to 1 (ties away from zero need 2^-8); 1 + 2^-7 survives both.
  Op op("tilizer", 1, {1, 1}, {1, 1}, {1, 1});
  op.spec.outDf = netlist::DataFormat::Float16;
  op.spec.accDf = netlist::DataFormat::Float16_b;
  const float fine = 1.0f + 1.0f / 1024.0f, coarse = 1.0f + 1.0f / 128.0f;
  const Tensor in = make(1, 1, 1, 1, [&](int64_t, int64_t, int64_t r, int64_t) { return r % 2 == 0 ? fine : coarse; });
  Tensor out = evalTilizer(op.spec, std::vector<Tensor>{in});
  for (int64_t r = 0; r < T; ++r) CHECK(out.at(0, 0, r, 0) == (r % 2 == 0 ? 1.0f : coarse));
  // With a Float16 dest nothing is lost.
  op.spec.accDf = netlist::DataFormat::Float16;
  out = evalTilizer(op.spec, std::vector<Tensor>{in});
  for (int64_t r = 0; r < T; ++r) CHECK(out.at(0, 0, r, 0) == (r % 2 == 0 ? fine : coarse));
}

// ============================================================================ topk
namespace {
// Reference: a plain descending sort of each core's row (values distinct).
void checkTopk(const Tensor& values, const Tensor& indices, const Tensor& out, int64_t cores, int64_t k, bool argmax) {
  const int64_t n = values.c / cores;
  const int64_t outCols = (k + T - 1) / T * T;
  for (int64_t r = 0; r < values.r; ++r)
    for (int64_t core = 0; core < cores; ++core) {
      std::vector<std::pair<float, float>> row;
      for (int64_t i = 0; i < n; ++i) row.push_back({values.at(0, 0, r, core * n + i), indices.at(0, 0, r, core * n + i)});
      std::sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
      for (int64_t i = 0; i < outCols; ++i) {
        const float expected = i < k ? (argmax ? row[static_cast<size_t>(i)].second : row[static_cast<size_t>(i)].first) : 0.0f;
        INFO("row " << r << " core " << core << " position " << i);
        CHECK(out.at(0, 0, r, core * outCols + i) == expected);
      }
    }
}

// Distinct values per core row: (37 i + 11 r) mod n is a permutation of 0..n-1
// because 37 is odd and n a power of two; shifted to include negatives.
Tensor permutedValues(int64_t cores, int64_t n) {
  return make(1, 1, 1, cores * n / T, [n](int64_t, int64_t, int64_t r, int64_t c) {
    return static_cast<float>((37 * (c % n) + 11 * r) % n) - static_cast<float>(n / 2);
  });
}
Tensor positions(int64_t cols) {
  return make(1, 1, 1, cols / T, [](int64_t, int64_t, int64_t, int64_t c) { return static_cast<float>(c); });
}
} // namespace

TEST_CASE("topk returns the k largest values of each row, sorted", "[special]") {
  struct Case {
    int64_t k, n;
  };
  for (const Case cs : {Case{32, 128}, Case{8, 256}, Case{64, 256}, Case{16, 32}}) {
    DYNAMIC_SECTION("k=" << cs.k << " over " << cs.n << " values") {
      for (const bool argmax : {false, true}) {
        Op op("topk", 1, {1, 1}, {1, (cs.k + T - 1) / T}, {1, 1});
        op.attrs.k.set(cs.k, kLoc);
        op.attrs.sort.set(argmax ? "argmax" : "max", kLoc);
        const Tensor values = permutedValues(1, cs.n);
        const Tensor idx = positions(cs.n);
        const Tensor out = evalTopk(op.spec, std::vector<Tensor>{values, idx});
        requireShape(out, 1, 1, T, (cs.k + T - 1) / T * T);
        checkTopk(values, idx, out, 1, cs.k, argmax);
      }
    }
  }
}

TEST_CASE("topk sorts each grid column's share separately", "[special]") {
  Op op("topk", 1, {1, 2}, {1, 1}, {1, 1});
  op.attrs.k.set(32, kLoc);
  op.attrs.sort.set("max", kLoc);
  const Tensor values = permutedValues(2, 64);
  const Tensor idx = positions(128);
  const Tensor out = evalTopk(op.spec, std::vector<Tensor>{values, idx});
  requireShape(out, 1, 1, T, 2 * T);
  checkTopk(values, idx, out, 2, 32, false);
}

TEST_CASE("topk with kreduce merges sorted k-sequences", "[special]") {
  // Two descending runs of 32 (as two cores of a first topk emit them):
  // the even values 62..0 and the odd values 63..1. The top 32 of both are
  // 63..32, each with the index it came with (position in the input).
  Op op("topk");
  op.attrs.k.set(32, kLoc);
  op.attrs.kreduce.set(true, kLoc);
  const Tensor values = make(1, 1, 1, 2, [](int64_t, int64_t, int64_t, int64_t c) {
    return static_cast<float>(c < T ? 62 - 2 * c : 63 - 2 * (c - T));
  });
  const Tensor idx = positions(64);
  for (const bool argmax : {false, true}) {
    op.attrs.sort.set(argmax ? "argmax" : "max", kLoc);
    const Tensor out = evalTopk(op.spec, std::vector<Tensor>{values, idx});
    for (int64_t i = 0; i < T; ++i) {
      const int64_t v = 63 - i;                                   // 63, 62, ..., 32
      const int64_t position = v % 2 == 1 ? T + (63 - v) / 2 : (62 - v) / 2;
      CHECK(out.at(0, 0, 5, i) == static_cast<float>(argmax ? position : v));
    }
  }
}

TEST_CASE("topk rejects what its network cannot sort", "[special]") {
  const Tensor values = permutedValues(1, 96);
  const Tensor idx = positions(96);
  SECTION("k not a power of two") {
    Op op("topk");
    op.attrs.k.set(24, kLoc);
    op.attrs.sort.set("max", kLoc);
    CHECK_THROWS_WITH(evalTopk(op.spec, std::vector<Tensor>{values, idx}), Catch::Contains("power of two"));
  }
  SECTION("rows that are not k times a power of two") {
    Op op("topk");
    op.attrs.k.set(32, kLoc);
    op.attrs.sort.set("max", kLoc);
    CHECK_THROWS_WITH(evalTopk(op.spec, std::vector<Tensor>{values, idx}), Catch::Contains("rows of 96 values"));
  }
  SECTION("no sort attribute") {
    Op op("topk");
    op.attrs.k.set(32, kLoc);
    CHECK_THROWS_WITH(evalTopk(op.spec, std::vector<Tensor>{values, idx}), Catch::Contains("sort"));
  }
}

// ============================================================================ quantization
namespace {
// The first values of row 0 come from `head`, everything else is `rest`.
Tensor headThenRest(std::vector<float> head, float rest) {
  return make(1, 1, 1, 1, [head, rest](int64_t, int64_t, int64_t r, int64_t c) {
    return r == 0 && c < static_cast<int64_t>(head.size()) ? head[static_cast<size_t>(c)] : rest;
  });
}
Tensor filled(float v) { return headThenRest({}, v); }
} // namespace

TEST_CASE("quantization computes x * scale + zero_point as Int8", "[special]") {
  Op op("quantization");
  op.spec.inDf = {netlist::DataFormat::Float32, netlist::DataFormat::Float32};
  op.spec.outDf = netlist::DataFormat::Int8;
  op.attrs.zeroPoint.set(1.0, kLoc);
  const Tensor x = headThenRest({1.26f, -3.5f, 200.0f, -0.75f, 0.2f, -100.0f}, 0.0f);
  // 1.26*2+1 = 3.52 -> 4; -3.5*2+1 = -6; 200*2+1 = 401 -> 127 (saturates);
  // -0.75*2+1 = -0.5 -> -1 (ties away from zero); 0.2*2+1 = 1.4 -> 1;
  // -100*2+1 = -199 -> -127; 0*2+1 = 1.
  const float expected[] = {4, -6, 127, -1, 1, -127};
  for (const bool packed : {true, false}) {
    // Inside fused ops (no packing) BUDA still rounds the result to Int8.
    op.spec.roundOutput = packed;
    const Tensor out = evalQuantization(op.spec, std::vector<Tensor>{x, filled(2.0f)});
    for (int64_t c = 0; c < 6; ++c) CHECK(out.at(0, 0, 0, c) == expected[c]);
    CHECK(out.at(0, 0, 7, 7) == 1.0f);
  }
}

TEST_CASE("requantization rescales Int32 to Int8", "[special]") {
  Op op("requantization");
  op.spec.inDf = {netlist::DataFormat::Int32, netlist::DataFormat::Float32};
  op.spec.outDf = netlist::DataFormat::Int8;
  op.attrs.zeroPoint.set(0.5, kLoc);
  // 100/4+.5 = 25.5 -> 26; -100/4+.5 = -24.5 -> -25; 1000/4+.5 -> 127;
  // 51/4+.5 = 13.25 -> 13; 0/4+.5 = 0.5 -> 1.
  const Tensor x = headThenRest({100, -100, 1000, 51}, 0.0f);
  const Tensor out = evalRequantization(op.spec, std::vector<Tensor>{x, filled(0.25f)});
  const float expected[] = {26, -25, 127, 13};
  for (int64_t c = 0; c < 4; ++c) CHECK(out.at(0, 0, 0, c) == expected[c]);
  CHECK(out.at(0, 0, 31, 31) == 1.0f);
}

TEST_CASE("dequantization computes (x - zero_point) * scale", "[special]") {
  Op op("dequantization");
  op.spec.inDf = {netlist::DataFormat::Int32, netlist::DataFormat::Float32};
  op.attrs.zeroPoint.set(2.0, kLoc);
  // (10-2)*0.5 = 4; (-3-2)*0.5 = -2.5; (0-2)*0.5 = -1.
  const Tensor x = headThenRest({10, -3}, 0.0f);
  const Tensor scale = filled(0.5f);
  const Tensor out = evalDequantization(op.spec, std::vector<Tensor>{x, scale});
  CHECK(out.at(0, 0, 0, 0) == 4.0f);
  CHECK(out.at(0, 0, 0, 1) == -2.5f);
  CHECK(out.at(0, 0, 3, 3) == -1.0f);

  // A fused dequantization reading dest as input 1 swaps the operands.
  op.spec.inDf = {netlist::DataFormat::Float32, netlist::DataFormat::Int32};
  const Tensor swapped = evalDequantization(op.spec, std::vector<Tensor>{scale, x}, 1);
  CHECK(swapped.at(0, 0, 0, 0) == 4.0f);
  CHECK(swapped.at(0, 0, 0, 1) == -2.5f);
}

// ============================================================================ sparse matmul
namespace {
// Encoding words of a 1xN-tile encoding, in the tile order BUDA reads them,
// placed into a Tensor-shaped code array (row-major over 32 x 32N values).
std::vector<uint32_t> codesFor(int64_t tileCount, const std::vector<std::pair<int64_t, uint32_t>>& words) {
  std::vector<uint32_t> codes(static_cast<size_t>(T * T * tileCount), 0);
  for (const auto& [k, word] : words) {
    const int64_t tile = k / (T * T), inTile = k % (T * T);
    codes[static_cast<size_t>((inTile / T) * T * tileCount + tile * T + inTile % T)] = word;
  }
  return codes;
}

Tensor encodingTensor(int64_t tileCount, const std::vector<uint32_t>& codes) {
  Tensor t(1, 1, T, T * tileCount);
  for (size_t i = 0; i < codes.size(); ++i) t.data[i] = static_cast<float>(codes[i]);
  return t;
}

Tensor identityTile(float scale) {
  return make(1, 1, 1, 1, [scale](int64_t, int64_t, int64_t r, int64_t c) { return r == c ? scale : 0.0f; });
}

// Sparse tiles side by side in one tile row.
Tensor rowOfTiles(const std::vector<Tensor>& parts) {
  Tensor t(1, 1, T, T * static_cast<int64_t>(parts.size()));
  for (size_t p = 0; p < parts.size(); ++p)
    for (int64_t r = 0; r < T; ++r)
      for (int64_t c = 0; c < T; ++c) t.at(0, 0, r, static_cast<int64_t>(p) * T + c) = parts[p].at(0, 0, r, c);
  return t;
}

void sparseAttrs(Op& op) {
  op.attrs.identity.set(true, kLoc);
  op.attrs.uKt.set(1, kLoc);
  op.attrs.mK.set(1, kLoc);
  op.attrs.sparseTilePtrBits.set(4, kLoc); // tile entries: sparse index << 12 | row << 1 | u_kt index
}
} // namespace

TEST_CASE("sparse matmul walks the strip encoding", "[special]") {
  // Two strips for one output tile (t=1, 1x1 ublock and mblock):
  //   strip 1: nz_ublocks 1, ublock 0 with 1 tile: sparse tile 1
  //   strip 0 (last in row): nz_ublocks 1, ublock 0 with 1 tile: sparse tile 0
  // 16-bit fields: 1,0,1,0x10,0x1000 | 0,0x4000,1,0x10,0x0000; as words:
  //   0x00000001 0x00100001 0x00001000 0x00014000 0x00000010
  // Output = S1 x A1 + S0 x A0 with S1 = I, A1[k][j] = j, S0 = ones, A0 = twos:
  // j + 32*2 = 64 + j.
  Op op("matmul");
  sparseAttrs(op);
  const Tensor sparse = rowOfTiles({make(1, 1, 1, 1, [](int64_t, int64_t, int64_t, int64_t) { return 1.0f; }),
                                    identityTile(1.0f)});
  const Tensor act = make(1, 1, 2, 1, [](int64_t, int64_t, int64_t r, int64_t c) {
    return r < T ? 2.0f : static_cast<float>(c);
  });
  const std::vector<uint32_t> codes = codesFor(1, {{0, 0x1}, {1, 0x100001}, {2, 0x1000}, {3, 0x14000}, {4, 0x10}});
  const Tensor enc = encodingTensor(1, codes);

  SECTION("from the encoding tensor (all words below 2^24)") {
    const Tensor out = evalSparseMatmul(op.spec, std::vector<Tensor>{sparse, act, enc});
    requireShape(out, 1, 1, T, T);
    for (int64_t r = 0; r < T; ++r)
      for (int64_t c = 0; c < T; ++c) CHECK(out.at(0, 0, r, c) == 64.0f + c);
  }
  SECTION("from exact codes, with a bias added") {
    op.attrs.bias.set(true, kLoc);
    const Tensor bias = filled(0.5f);
    const Tensor out = evalSparseMatmulCodes(op.spec, std::vector<Tensor>{sparse, act, enc, bias}, codes);
    for (int64_t c = 0; c < T; ++c) CHECK(out.at(0, 0, 9, c) == 64.5f + c);
  }
}

TEST_CASE("sparse matmul places ublocks and batches from the encoding", "[special]") {
  // t=2, mblock 2x1, ublock 1x2; activations 2x2 tiles of value 10r + c + 1.
  // Batch 0, strip 0 (last in row): nz_ublocks 1: ublock row 1 (header
  //   1 tile << 4 | 1 = 0x11), sparse tile 2 (0x2000) -> out row 1 = S2 x A(0, c).
  // Batch 1, strip 1 (last in row): nz_ublocks 2: ublock 0 tile S0 (0x10, 0x0),
  //   ublock 1 tile S1 (0x11, 0x1000) -> rows 0/1 = S0/S1 x A(1, c).
  // Fields 0,0x4000,1,0x11,0x2000 | 1,0x4000,2,0x10,0,0x11,0x1000 pack into
  // words 0x40000000 0x00110001 0x00012000 0x00024000 0x00000010 0x10000011.
  Op op("matmul", 2, {1, 1}, {2, 1}, {1, 2});
  sparseAttrs(op);
  const Tensor sparse = rowOfTiles({make(1, 1, 1, 1, [](int64_t, int64_t, int64_t, int64_t) { return 1.0f; }),
                                    identityTile(1.0f), identityTile(2.0f)});
  const Tensor act = tiles(1, 1, 2, 2, [](int64_t, int64_t, int64_t r, int64_t c) { return static_cast<float>(10 * r + c + 1); });
  const std::vector<uint32_t> codes =
      codesFor(1, {{0, 0x40000000}, {1, 0x110001}, {2, 0x12000}, {3, 0x24000}, {4, 0x10}, {5, 0x10000011}});
  const Tensor enc = encodingTensor(1, codes);
  const Tensor out = evalSparseMatmulCodes(op.spec, std::vector<Tensor>{sparse, act, enc}, codes);
  requireShape(out, 1, 2, 2 * T, 2 * T);
  // z0: row 0 untouched; row 1 = 2*I x A(0, c) = 2, 4.
  CHECK(tileValue(out, 0, 0, 0, 0) == 0.0f);
  CHECK(tileValue(out, 0, 0, 0, 1) == 0.0f);
  CHECK(tileValue(out, 0, 0, 1, 0) == 2.0f);
  CHECK(tileValue(out, 0, 0, 1, 1) == 4.0f);
  // z1: row 0 = ones x A(1, c) = 32*11, 32*12; row 1 = I x A(1, c) = 11, 12.
  CHECK(tileValue(out, 0, 1, 0, 0) == 352.0f);
  CHECK(tileValue(out, 0, 1, 0, 1) == 384.0f);
  CHECK(tileValue(out, 0, 1, 1, 0) == 11.0f);
  CHECK(tileValue(out, 0, 1, 1, 1) == 12.0f);

  // The first word carries the last-in-row flag (bit 30): a float cannot be
  // trusted to hold it, so the tensor path refuses.
  CHECK_THROWS_WITH(evalSparseMatmul(op.spec, std::vector<Tensor>{sparse, act, enc}),
                    Catch::Contains("not an exact 32-bit code"));
}

TEST_CASE("sparse matmul continues in the next encoding tile after a last-in-tile strip", "[special]") {
  // Tile 0: strip 1 flagged last in tile (enc1 bit 15), then garbage.
  // Tile 1 (word 1024): strip 0, last in row. Same result as the first test.
  Op op("matmul");
  sparseAttrs(op);
  const Tensor sparse = rowOfTiles({make(1, 1, 1, 1, [](int64_t, int64_t, int64_t, int64_t) { return 1.0f; }),
                                    identityTile(1.0f)});
  const Tensor act = make(1, 1, 2, 1, [](int64_t, int64_t, int64_t r, int64_t c) {
    return r < T ? 2.0f : static_cast<float>(c);
  });
  const std::vector<uint32_t> codes = codesFor(
      2, {{0, 0x80000001}, {1, 0x100001}, {2, 0xFFFF1000}, {3, 0xFFFFFFFF}, {4, 0xFFFFFFFF},
          {1024, 0x40000000}, {1025, 0x100001}, {1026, 0x0}});
  const Tensor out = evalSparseMatmulCodes(op.spec, std::vector<Tensor>{sparse, act, encodingTensor(2, codes)}, codes);
  for (int64_t c = 0; c < T; ++c) CHECK(out.at(0, 0, 17, c) == 64.0f + c);
}

TEST_CASE("sparse matmul reports malformed encodings", "[special]") {
  Op op("matmul");
  sparseAttrs(op);
  const Tensor sparse = identityTile(1.0f);
  const Tensor act = filled(1.0f);
  SECTION("no last-in-row strip before the encoding ends") {
    const std::vector<uint32_t> codes(T * T, 0);
    CHECK_THROWS_WITH(evalSparseMatmulCodes(op.spec, std::vector<Tensor>{sparse, act, encodingTensor(1, codes)}, codes),
                      Catch::Contains("ends before"));
  }
  SECTION("a sparse tile index past the sparse input") {
    // One strip, last in row: sparse tile 3 of a single-tile input.
    const std::vector<uint32_t> codes = codesFor(1, {{0, 0x40000000}, {1, 0x100001}, {2, 0x3000}});
    CHECK_THROWS_WITH(evalSparseMatmulCodes(op.spec, std::vector<Tensor>{sparse, act, encodingTensor(1, codes)}, codes),
                      Catch::Contains("sparse tile 3"));
  }
}

TEST_CASE("sparse matmul without sparse_tile_ptr_bits reads BUDA's default of 0 bits", "[special]") {
  // BUDA parses an absent sparse_tile_ptr_bits as 0 and an absent
  // sparse_ublock_idx_bits as the tile pointer bits (older netlists, e.g.
  // op_tests/pytorch_bin/matmul_ident, omit both). Then a ublock header is
  // just its tile count (no ublock index bits), a tile entry is just its
  // position (in_r << bits(u_kt) | in_d, 16 bits) and names sparse tile 0.
  // u_kt 2 (1 bit of in_d), ublock 2x1: one strip (index 0, last in row),
  // one ublock of 2 tiles: (in_r 0, in_d 1) = 0x0001, (in_r 1, in_d 0) = 0x0002.
  // Fields 0,0x4000,1,0x0002,0x0001,0x0002 -> words 0x40000000 0x00020001 0x00020001.
  // Output tile row 0 = S0 x A(row 1) = 2I x (c) = 2c; row 1 = S0 x A(row 0) = 2I x 3 = 6.
  // The sparse input is a column of two tiles (2I, then 5I): with 0 pointer
  // bits only its first tile can be named.
  Op op("matmul", 1, {1, 1}, {1, 1}, {2, 1});
  op.attrs.identity.set(true, kLoc);
  op.attrs.uKt.set(2, kLoc);
  op.attrs.mK.set(1, kLoc);
  Tensor sparse(1, 1, 2 * T, T);
  for (int64_t i = 0; i < T; ++i) sparse.at(0, 0, i, i) = 2.0f, sparse.at(0, 0, T + i, i) = 5.0f;
  const Tensor act = make(1, 1, 2, 1, [](int64_t, int64_t, int64_t r, int64_t c) {
    return r < T ? 3.0f : static_cast<float>(c);
  });
  const std::vector<uint32_t> codes = codesFor(1, {{0, 0x40000000}, {1, 0x00020001}, {2, 0x00020001}});
  const Tensor out = evalSparseMatmulCodes(op.spec, std::vector<Tensor>{sparse, act, encodingTensor(1, codes)}, codes);
  requireShape(out, 1, 1, 2 * T, T);
  for (int64_t r = 0; r < T; ++r)
    for (int64_t c = 0; c < T; ++c) {
      CHECK(out.at(0, 0, r, c) == 2.0f * static_cast<float>(c));
      CHECK(out.at(0, 0, T + r, c) == 6.0f);
    }

  // An explicit 0 is the same. With 4 pointer bits (and so 4 ublock index
  // bits) the same words mean something else: header 0x0002 is ublock row 2,
  // not row 0, so nothing is added to the output.
  op.attrs.sparseTilePtrBits.set(0, kLoc);
  CHECK(evalSparseMatmulCodes(op.spec, std::vector<Tensor>{sparse, act, encodingTensor(1, codes)}, codes).data ==
        out.data);
  op.attrs.sparseTilePtrBits.set(4, kLoc);
  const Tensor other = evalSparseMatmulCodes(op.spec, std::vector<Tensor>{sparse, act, encodingTensor(1, codes)}, codes);
  CHECK(other.at(0, 0, 0, 5) == 0.0f);
}

TEST_CASE("sparse matmul checks the default bit fields against the blocking first", "[special]") {
  // 0 ublock index bits index one ublock row; an mblock of 8 rows cannot be
  // encoded (BUDA's golden asserts the same). The error names the defaults and
  // comes before any complaint about the encoding's values.
  Op op("matmul", 1, {1, 1}, {8, 1}, {1, 1});
  op.attrs.identity.set(true, kLoc);
  op.attrs.uKt.set(1, kLoc);
  op.attrs.mK.set(1, kLoc);
  const Tensor sparse = identityTile(1.0f);
  const Tensor act = filled(1.0f);
  Tensor enc(1, 1, T, T, 0.5f); // no valid code at all
  CHECK_THROWS_WITH(evalSparseMatmul(op.spec, std::vector<Tensor>{sparse, act, enc}),
                    Catch::Contains("sparse_ublock_idx_bits (absent: sparse_tile_ptr_bits, absent: 0, as in BUDA) can "
                                    "index 1 ublock row(s), the mblock has 8"));
  op.attrs.sparseTilePtrBits.set(2, kLoc);
  CHECK_THROWS_WITH(evalSparseMatmul(op.spec, std::vector<Tensor>{sparse, act, enc}),
                    Catch::Contains("(absent: sparse_tile_ptr_bits 2) can index 4 ublock row(s)"));
  op.attrs.sparseTilePtrBits.set(16, kLoc);
  CHECK_THROWS_WITH(evalSparseMatmul(op.spec, std::vector<Tensor>{sparse, act, enc}),
                    Catch::Contains("sparse_tile_ptr_bits must be in 0..15, got 16"));
}
