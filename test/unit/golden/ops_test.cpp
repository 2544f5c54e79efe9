// The reference model of single ops. Expected values are worked by hand in
// the comments, or come from a plain loop written here (never from the code
// under test). Float32 formats everywhere unless a test is about rounding.
#include "golden/ops.hpp"
#include "golden/product.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using namespace tessera::golden;
using tessera::SourceLoc;
using tessera::netlist::Attribute;
using tessera::netlist::OpAttributes;

namespace {

constexpr int64_t T = 32; // values per tile side
const SourceLoc kHere{1, 1};

using Fill = std::function<float(int64_t z, int64_t r, int64_t c)>;

Tensor make(int64_t z, int64_t rows, int64_t cols, const Fill& fill) {
  Tensor t(1, z, rows, cols);
  for (int64_t zi = 0; zi < z; ++zi)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) t.at(0, zi, r, c) = fill(zi, r, c);
  return t;
}

Tensor zeros(int64_t z, int64_t rows, int64_t cols) { return Tensor(1, z, rows, cols); }

// An op of `rowTiles` x `colTiles` tiles per t slice with Float32 everywhere.
OpSpec makeSpec(const std::string& type, const OpAttributes& attrs, int64_t t, int64_t rowTiles, int64_t colTiles) {
  OpSpec s;
  s.name = "op0";
  s.type = type;
  s.attrs = &attrs;
  s.t = t;
  s.mblock = {rowTiles, colTiles};
  s.outDf = s.accDf = s.intermedDf = DataFormat::Float32;
  s.fidelity = MathFidelity::HiFi4;
  return s;
}

void addRaw(OpAttributes& a, const std::string& key, tessera::netlist::RawValue value) {
  a.all.push_back(Attribute{key, kHere, std::move(value), true});
}

void setMatmulBlocks(OpAttributes& a, int64_t mK, int64_t uKt) {
  a.mK.set(mK, kHere);
  a.uKt.set(uKt, kHere);
}

Tensor eval(const OpSpec& spec, std::vector<Tensor> inputs) { return evalOp(spec, inputs); }

// 1 + 2^-1 + 2^-5 + 2^-7: mantissa bits 1, 5 and 7 set (bf16-exact).
// srcA keeps 4 mantissa bits -> 1.5; srcB keeps 6 -> 1.5 + 2^-5 = 1.53125.
constexpr float kFidelityValue = 1.5390625f;

} // namespace

// ------------------------------------------------------------------ matmul
TEST_CASE("matmul equals a plain triple loop, per t slice", "[golden][ops][matmul]") {
  // Values are multiples of 1/4 below 2 in magnitude: every product and sum
  // of 96 of them is exact in float32, so summation order cannot matter.
  const Tensor a = make(2, 2 * T, 3 * T, [](int64_t z, int64_t r, int64_t c) { return ((r * 7 + c * 3 + z) % 11 - 5) * 0.25f; });
  const Tensor b = make(2, 3 * T, T, [](int64_t z, int64_t r, int64_t c) { return ((r * 5 + c + 2 * z) % 7 - 3) * 0.25f; });
  OpAttributes attrs;
  setMatmulBlocks(attrs, 3, 1);
  const Tensor out = eval(makeSpec("matmul", attrs, 2, 2, 1), {a, b});
  REQUIRE(out.z == 2);
  REQUIRE(out.r == 2 * T);
  REQUIRE(out.c == T);
  int mismatches = 0;
  for (int64_t z = 0; z < 2; ++z)
    for (int64_t i = 0; i < 2 * T; ++i)
      for (int64_t j = 0; j < T; ++j) {
        float expected = 0.0f;
        for (int64_t k = 0; k < 3 * T; ++k) expected += a.at(0, z, i, k) * b.at(0, z, k, j);
        if (out.at(0, z, i, j) != expected) ++mismatches;
      }
  CHECK(mismatches == 0);
}

TEST_CASE("matmul rounds partial sums to intermed_df between m_k blocks", "[golden][ops][matmul]") {
  // out[0][0] = A[0][0]*B[0][0] + A[0][1]*B[1][0] (block 0) + A[0][32]*B[32][0] (block 1)
  //           = 1 + 3*2^-9 + 3*2^-9.
  // Block 0 partial 1 + 3*2^-9 = 1.005859375 goes to Float16_b (step 2^-7 near 1):
  //   nearest is 1 + 2^-7 = 1.0078125 (2^-9 away, versus 3*2^-9 from 1.0).
  // Then + 3*2^-9 = 1.013671875 (Float32 acc/out keeps it).
  // Without the spill the sum is 1 + 6*2^-9 = 1.01171875.
  Tensor a = zeros(1, T, 2 * T);
  a.at(0, 0, 0, 0) = 1.0f;
  a.at(0, 0, 0, 1) = 3 * 0x1p-9f;
  a.at(0, 0, 0, 32) = 3 * 0x1p-9f;
  Tensor b = zeros(1, 2 * T, T);
  b.at(0, 0, 0, 0) = b.at(0, 0, 1, 0) = b.at(0, 0, 32, 0) = 1.0f;

  OpAttributes attrs;
  setMatmulBlocks(attrs, 2, 1);
  OpSpec spec = makeSpec("matmul", attrs, 1, 1, 1);
  spec.intermedDf = DataFormat::Float16_b;
  CHECK(eval(spec, {a, b}).at(0, 0, 0, 0) == 1.013671875f);

  spec.intermedDf = DataFormat::Float32;
  CHECK(eval(spec, {a, b}).at(0, 0, 0, 0) == 1.01171875f);

  // One block of two tiles (m_k 1, u_kt 2) never spills.
  OpAttributes oneBlock;
  setMatmulBlocks(oneBlock, 1, 2);
  OpSpec single = makeSpec("matmul", oneBlock, 1, 1, 1);
  single.intermedDf = DataFormat::Float16_b;
  CHECK(eval(single, {a, b}).at(0, 0, 0, 0) == 1.01171875f);
}

TEST_CASE("matmul rounds its result to acc_df before out_df", "[golden][ops][matmul]") {
  // 1 * (1 + 3*2^-9) = 1.005859375 -> Float16_b acc -> 1.0078125 (see above).
  Tensor a = zeros(1, T, T);
  a.at(0, 0, 0, 0) = 1.0f;
  Tensor b = zeros(1, T, T);
  b.at(0, 0, 0, 0) = 1.0f + 3 * 0x1p-9f;
  OpAttributes attrs;
  setMatmulBlocks(attrs, 1, 1);
  OpSpec spec = makeSpec("matmul", attrs, 1, 1, 1);
  spec.accDf = DataFormat::Float16_b;
  CHECK(eval(spec, {a, b}).at(0, 0, 0, 0) == 1.0078125f);
  // Inside a fused op nothing is rounded on the way out.
  spec.roundOutput = false;
  CHECK(eval(spec, {a, b}).at(0, 0, 0, 0) == 1.005859375f);
}

TEST_CASE("matmul bias adds row 0 of each bias tile to every row of that tile", "[golden][ops][matmul]") {
  // A = identity, B[k][c] = k/2, so A x B = B. Bias row 0 holds c; its other
  // rows hold 1000, which the row broadcast never reads.
  // out[r][c] = r/2 + c.
  const Tensor a = make(1, T, T, [](int64_t, int64_t r, int64_t c) { return r == c ? 1.0f : 0.0f; });
  const Tensor b = make(1, T, T, [](int64_t, int64_t r, int64_t) { return r * 0.5f; });
  const Tensor bias = make(1, T, T, [](int64_t, int64_t r, int64_t c) { return r == 0 ? float(c) : 1000.0f; });
  OpAttributes attrs;
  setMatmulBlocks(attrs, 1, 1);
  attrs.bias.set(true, kHere);
  const Tensor out = eval(makeSpec("matmul", attrs, 1, 1, 1), {a, b, bias});
  CHECK(out.at(0, 0, 0, 0) == 0.0f);
  CHECK(out.at(0, 0, 0, 5) == 5.0f);
  CHECK(out.at(0, 0, 7, 3) == 6.5f);   // 7/2 + 3
  CHECK(out.at(0, 0, 31, 31) == 46.5f); // 31/2 + 31

  // A bias of the wrong shape is an error naming both shapes.
  const Tensor wrongBias = zeros(1, 2 * T, T);
  CHECK_THROWS_WITH(eval(makeSpec("matmul", attrs, 1, 1, 1), {a, b, wrongBias}),
                    Catch::Contains("[w=1, z=1, 64x32]") && Catch::Contains("[w=1, z=1, 32x32]"));
}

TEST_CASE("matmul accumulate sums groups of z t-slices", "[golden][ops][matmul]") {
  // A_z = identity for every z, B_z = z everywhere: A_z x B_z = z.
  const Tensor a = make(4, T, T, [](int64_t, int64_t r, int64_t c) { return r == c ? 1.0f : 0.0f; });
  const Tensor b = make(4, T, T, [](int64_t z, int64_t, int64_t) { return float(z); });

  SECTION("z attribute 2: out slice s = B_2s + B_2s+1 = 4s + 1") {
    OpAttributes attrs;
    setMatmulBlocks(attrs, 1, 1);
    attrs.accumulate.set(true, kHere);
    attrs.z.set(2, kHere);
    const Tensor out = eval(makeSpec("matmul", attrs, 2, 1, 1), {a, b});
    REQUIRE(out.z == 2);
    CHECK(out.at(0, 0, 3, 4) == 1.0f);  // 0 + 1
    CHECK(out.at(0, 1, 31, 0) == 5.0f); // 2 + 3
  }
  SECTION("no z attribute: all four slices, 0+1+2+3 = 6") {
    OpAttributes attrs;
    setMatmulBlocks(attrs, 1, 1);
    attrs.accumulate.set(true, kHere);
    const Tensor out = eval(makeSpec("matmul", attrs, 1, 1, 1), {a, b});
    REQUIRE(out.z == 1);
    CHECK(out.at(0, 0, 10, 20) == 6.0f);
  }
}

TEST_CASE("matmul rejects inputs that do not fit", "[golden][ops][matmul]") {
  OpAttributes attrs;
  setMatmulBlocks(attrs, 1, 1);
  const OpSpec spec = makeSpec("matmul", attrs, 2, 1, 1);
  // B with t=1 is not broadcast against A's t=2: BUDA needs equal t (a z
  // broadcast TM does that).
  CHECK_THROWS_AS(eval(spec, {zeros(2, T, T), zeros(1, T, T)}), GoldenError);
  // Inner dimensions 32 vs 64.
  CHECK_THROWS_AS(eval(spec, {zeros(2, T, T), zeros(2, 2 * T, T)}), GoldenError);
  // m_k * u_kt = 2 tiles, but K is 1 tile.
  OpAttributes wrongK;
  setMatmulBlocks(wrongK, 2, 1);
  CHECK_THROWS_WITH(eval(makeSpec("matmul", wrongK, 1, 1, 1), {zeros(1, T, T), zeros(1, T, T)}),
                    Catch::Contains("m_k 2 x u_kt 1"));
}

TEST_CASE("matmul with shared weights: one entry of input 1 serves every entry of input 0", "[golden][ops][matmul]") {
  // Three entries of A, each its own values; B is one entry (w = 1). Values
  // are multiples of 1/4 below 2: the plain loop below is exact.
  const int64_t W = 3;
  Tensor a(W, 2, T, 2 * T);
  for (int64_t w = 0; w < W; ++w)
    for (int64_t z = 0; z < 2; ++z)
      for (int64_t r = 0; r < T; ++r)
        for (int64_t c = 0; c < 2 * T; ++c) a.at(w, z, r, c) = ((r * 7 + c * 3 + z + 5 * w) % 11 - 5) * 0.25f;
  const Tensor b = make(2, 2 * T, T, [](int64_t z, int64_t r, int64_t c) { return ((r * 5 + c + 2 * z) % 7 - 3) * 0.25f; });
  OpAttributes attrs;
  setMatmulBlocks(attrs, 2, 1);
  OpSpec spec = makeSpec("matmul", attrs, 2, 1, 1);
  // Without the flag, entries must agree.
  CHECK_THROWS_AS(eval(spec, {a, b}), GoldenError);
  spec.sharedWeights = true;
  const Tensor out = eval(spec, {a, b});
  REQUIRE(out.w == W);
  int mismatches = 0;
  for (int64_t w = 0; w < W; ++w)
    for (int64_t z = 0; z < 2; ++z)
      for (int64_t r = 0; r < T; ++r)
        for (int64_t c = 0; c < T; ++c) {
          float sum = 0;
          for (int64_t k = 0; k < 2 * T; ++k) sum += a.at(w, z, r, k) * b.at(0, z, k, c);
          mismatches += out.at(w, z, r, c) != sum;
        }
  CHECK(mismatches == 0);
}

TEST_CASE("matmul with shared weights keeps the reduced weight bits of LoFi and HiFi3", "[golden][ops][matmul][fidelity]") {
  // Entry w of A is kFidelityValue at row w, both t slices; B is one entry:
  // kFidelityValue at (0, 0) of slice 0, 1.0 at (0, 0) of slice 1. LoFi:
  // srcB (A) keeps 1.53125, srcA (B) 1.5. HiFi3: everything but
  // srcA_lo * srcB_lo. Entry 1 must see slice 1's B, not slice 0's reduced B.
  const int64_t W = 2;
  Tensor a(W, 2, T, T);
  for (int64_t w = 0; w < W; ++w)
    for (int64_t z = 0; z < 2; ++z) a.at(w, z, w, 0) = kFidelityValue;
  Tensor b(1, 2, T, T);
  b.at(0, 0, 0, 0) = kFidelityValue;
  b.at(0, 1, 0, 0) = 1.0f;
  OpAttributes attrs;
  setMatmulBlocks(attrs, 1, 1);
  OpSpec spec = makeSpec("matmul", attrs, 2, 1, 1);
  spec.sharedWeights = true;
  spec.fidelity = MathFidelity::LoFi;
  Tensor out = eval(spec, {a, b});
  for (int64_t w = 0; w < W; ++w) {
    CHECK(out.at(w, 0, w, 0) == 2.296875f); // 1.53125 * 1.5
    CHECK(out.at(w, 1, w, 0) == 1.53125f);  // 1.53125 * 1.0
  }
  CHECK(out.at(1, 0, 0, 0) == 0.0f);
  spec.fidelity = MathFidelity::HiFi3;
  out = eval(spec, {a, b});
  for (int64_t w = 0; w < W; ++w) {
    // x * 1.53125 + 1.5 * 2^-7 (as in "math fidelity drops multiplier operand bits").
    CHECK(out.at(w, 0, w, 0) == 2.368408203125f);
    CHECK(out.at(w, 1, w, 0) == kFidelityValue); // 1.0 * 1.53125 + 1.0 * 2^-7
  }
}

TEST_CASE("int matmul with dequant: (A x B + zero_point) * scale", "[golden][ops][matmul]") {
  // A = 2 * identity, B = 3 -> A x B = 6; (6 + (-1)) * 0.5 = 2.5.
  const Tensor a = make(1, T, T, [](int64_t, int64_t r, int64_t c) { return r == c ? 2.0f : 0.0f; });
  const Tensor b = make(1, T, T, [](int64_t, int64_t, int64_t) { return 3.0f; });
  const Tensor scale = make(1, T, T, [](int64_t, int64_t, int64_t) { return 0.5f; });
  OpAttributes attrs;
  setMatmulBlocks(attrs, 1, 1);
  addRaw(attrs, "dequant", true);
  attrs.zeroPoint.set(-1.0, kHere);
  OpSpec spec = makeSpec("matmul", attrs, 1, 1, 1);
  spec.inDf = {DataFormat::Int8, DataFormat::Int8, DataFormat::Float32};
  spec.accDf = spec.intermedDf = DataFormat::Int32;
  CHECK(eval(spec, {a, b, scale}).at(0, 0, 9, 4) == 2.5f);
}

TEST_CASE("matmul with a fused sfpu_op applies it to the result", "[golden][ops][matmul]") {
  // identity x ones = 1; gelu(1) = 0.841192 (see the gelu test).
  const Tensor a = make(1, T, T, [](int64_t, int64_t r, int64_t c) { return r == c ? 1.0f : 0.0f; });
  const Tensor b = make(1, T, T, [](int64_t, int64_t, int64_t) { return 1.0f; });
  OpAttributes attrs;
  setMatmulBlocks(attrs, 1, 1);
  addRaw(attrs, "sfpu_op", "gelu");
  CHECK(eval(makeSpec("matmul", attrs, 1, 1, 1), {a, b}).at(0, 0, 2, 2) == Approx(0.8411920).epsilon(1e-6));
}

TEST_CASE("matmul with sfpu_op: invalid (BUDA's 'none') leaves the product", "[golden][ops][matmul]") {
  // identity x 3s = 3 wherever the identity has its one.
  const Tensor a = make(1, T, T, [](int64_t, int64_t r, int64_t c) { return r == c ? 1.0f : 0.0f; });
  const Tensor b = make(1, T, T, [](int64_t, int64_t, int64_t) { return 3.0f; });
  OpAttributes attrs;
  setMatmulBlocks(attrs, 1, 1);
  addRaw(attrs, "sfpu_op", "invalid");
  CHECK(eval(makeSpec("matmul", attrs, 1, 1, 1), {a, b}).at(0, 0, 2, 2) == 3.0f);
}

// ------------------------------------------------------------------ fidelity
TEST_CASE("math fidelity drops multiplier operand bits", "[golden][ops][fidelity]") {
  const float x = kFidelityValue;
  CHECK(fidelityOperandA(MathFidelity::LoFi, x) == 1.5f);
  CHECK(fidelityOperandB(MathFidelity::LoFi, x) == 1.53125f);
  CHECK(fidelityOperandA(MathFidelity::HiFi2, x) == x);       // phase 1 adds A's low bits
  CHECK(fidelityOperandB(MathFidelity::HiFi2, x) == 1.53125f); // B's low bits wait for phase 2
  CHECK(fidelityOperandA(MathFidelity::HiFi4, x) == x);
  CHECK(fidelityOperandB(MathFidelity::HiFi4, x) == x);
  CHECK(fidelityOperandA(MathFidelity::LoFi, -x) == -1.5f); // sign untouched
  CHECK(std::isinf(fidelityOperandA(MathFidelity::LoFi, std::numeric_limits<float>::infinity())));

  // x * x = 1.5390625^2 = 2.36871337890625 (exact in float32).
  // LoFi:    1.5 * 1.53125                            = 2.296875
  // HiFi2:   x * 1.53125                              = 2.356689453125
  // HiFi2_B: 1.5 * x                                  = 2.30859375
  // HiFi3:   x * 1.53125 + 1.5 * (x - 1.53125 = 2^-7) = 2.356689453125 + 0.01171875 = 2.368408203125
  CHECK(fidelityMultiply(MathFidelity::LoFi, x, x) == 2.296875f);
  CHECK(fidelityMultiply(MathFidelity::HiFi2, x, x) == 2.356689453125f);
  CHECK(fidelityMultiply(MathFidelity::HiFi2_B, x, x) == 2.30859375f);
  CHECK(fidelityMultiply(MathFidelity::HiFi3, x, x) == 2.368408203125f);
  CHECK(fidelityMultiply(MathFidelity::HiFi4, x, x) == 2.36871337890625f);
}

TEST_CASE("math fidelity in matmul and multiply", "[golden][ops][fidelity]") {
  // One non-zero product x*x at [0][0]; values as in the test above. In
  // matmul input1 is srcA and input0 srcB; in multiply input0 is srcA.
  Tensor a = zeros(1, T, T);
  a.at(0, 0, 0, 0) = kFidelityValue;
  Tensor b = zeros(1, T, T);
  b.at(0, 0, 0, 0) = kFidelityValue;
  OpAttributes attrs;
  setMatmulBlocks(attrs, 1, 1);
  OpSpec mm = makeSpec("matmul", attrs, 1, 1, 1);
  mm.fidelity = MathFidelity::LoFi;
  CHECK(eval(mm, {a, b}).at(0, 0, 0, 0) == 2.296875f);
  mm.fidelity = MathFidelity::HiFi3;
  CHECK(eval(mm, {a, b}).at(0, 0, 0, 0) == 2.368408203125f);
  mm.fidelity = MathFidelity::HiFi4;
  CHECK(eval(mm, {a, b}).at(0, 0, 0, 0) == 2.36871337890625f);

  // Asymmetric operands show which input is srcA: A = x, B = 1.0 (exact in
  // both halves). HiFi2 keeps all of srcA but only 6 bits of srcB.
  Tensor one = zeros(1, T, T);
  one.at(0, 0, 0, 0) = 1.0f;
  mm.fidelity = MathFidelity::HiFi2;
  CHECK(eval(mm, {a, one}).at(0, 0, 0, 0) == 1.53125f); // x in srcB -> 6 bits
  CHECK(eval(mm, {one, a}).at(0, 0, 0, 0) == kFidelityValue); // x in srcA -> all bits

  OpSpec mul = makeSpec("multiply", attrs, 1, 1, 1);
  mul.fidelity = MathFidelity::LoFi;
  CHECK(eval(mul, {a, b}).at(0, 0, 0, 0) == 2.296875f);
  mul.fidelity = MathFidelity::HiFi2;
  CHECK(eval(mul, {a, one}).at(0, 0, 0, 0) == kFidelityValue); // x in srcA -> all bits
  CHECK(eval(mul, {one, a}).at(0, 0, 0, 0) == 1.53125f);       // x in srcB -> 6 bits
  mul.fidelity = MathFidelity::HiFi4;
  CHECK(eval(mul, {a, b}).at(0, 0, 0, 0) == 2.36871337890625f);
}

// ------------------------------------------------------------------ eltwise
TEST_CASE("element-wise binary ops match a plain loop", "[golden][ops][eltwise]") {
  // a = r - 16 (negative and positive), b = c / 2: all sums/products exact.
  const Tensor a = make(2, T, 2 * T, [](int64_t z, int64_t r, int64_t) { return float(r - 16 + z); });
  const Tensor b = make(2, T, 2 * T, [](int64_t, int64_t, int64_t c) { return c * 0.5f; });
  const OpAttributes none;
  struct Case {
    const char* type;
    float (*expected)(float, float);
  };
  const Case cases[] = {
      {"add", [](float x, float y) { return x + y; }},
      {"subtract", [](float x, float y) { return x - y; }},
      {"multiply", [](float x, float y) { return x * y; }},
      {"maximum", [](float x, float y) { return x > y ? x : y; }},
  };
  for (const Case& c : cases) {
    INFO(c.type);
    const Tensor out = eval(makeSpec(c.type, none, 2, 1, 2), {a, b});
    int mismatches = 0;
    for (size_t i = 0; i < out.data.size(); ++i)
      if (out.data[i] != c.expected(a.data[i], b.data[i])) ++mismatches;
    CHECK(mismatches == 0);
  }
  // Hand-worked points: z=1, r=3, c=9: a = 3 - 16 + 1 = -12, b = 4.5.
  CHECK(eval(makeSpec("add", none, 2, 1, 2), {a, b}).at(0, 1, 3, 9) == -7.5f);
  CHECK(eval(makeSpec("subtract", none, 2, 1, 2), {a, b}).at(0, 1, 3, 9) == -16.5f);
  CHECK(eval(makeSpec("multiply", none, 2, 1, 2), {a, b}).at(0, 1, 3, 9) == -54.0f);
  CHECK(eval(makeSpec("maximum", none, 2, 1, 2), {a, b}).at(0, 1, 3, 9) == 4.5f);
}

TEST_CASE("element-wise binary scalars", "[golden][ops][eltwise]") {
  CHECK(binaryScalar("add", 1.5f, 2.0f) == 3.5f);
  CHECK(binaryScalar("subtract", 1.5f, 2.0f) == -0.5f);
  CHECK(binaryScalar("multiply", 1.5f, 2.0f) == 3.0f);
  CHECK(binaryScalar("maximum", -1.0f, -2.0f) == -1.0f);
  // A zero operand wins over infinity: the FPU has no 0 * inf = NaN.
  CHECK(binaryScalar("multiply", 0.0f, std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK_THROWS_AS(binaryScalar("divide", 1.0f, 2.0f), GoldenError);
}

TEST_CASE("element-wise binary ops reject different shapes", "[golden][ops][eltwise]") {
  const OpAttributes none;
  CHECK_THROWS_WITH(eval(makeSpec("add", none, 1, 1, 1), {zeros(1, T, T), zeros(1, T, 2 * T)}),
                    Catch::Contains("[w=1, z=1, 32x32] vs [w=1, z=1, 32x64]"));
}

TEST_CASE("datacopy and nop copy their input", "[golden][ops][eltwise]") {
  const Tensor a = make(1, T, T, [](int64_t, int64_t r, int64_t c) { return r * 0.25f - c; });
  const OpAttributes none;
  for (const char* type : {"datacopy", "nop", "ethernet_datacopy"}) {
    INFO(type);
    CHECK(eval(makeSpec(type, none, 1, 1, 1), {a}).data == a.data);
  }
}

TEST_CASE("unary ops at hand-computed points", "[golden][ops][unary]") {
  const OpAttributes none;
  const float eps = std::numeric_limits<float>::epsilon(); // 2^-23
  CHECK(unaryScalar("exp", none, 1.0f) == Approx(2.718281828).epsilon(1e-7));
  CHECK(unaryScalar("exp", none, 0.0f) == 1.0f);
  CHECK(unaryScalar("exp", none, 100.0f) == std::numeric_limits<float>::max()); // clamped, not inf
  CHECK(unaryScalar("log", none, 1.0f) == 0.0f);
  CHECK(unaryScalar("log", none, 0.0f) == Approx(-15.942385).epsilon(1e-6)); // ln(2^-23) = -23 ln 2
  CHECK(unaryScalar("sqrt", none, 2.25f) == 1.5f);
  CHECK(unaryScalar("reciprocal", none, 4.0f) == 0.25f);
  CHECK(unaryScalar("reciprocal", none, 0.0f) == 1.0f / eps); // 2^23, not inf
  // gelu(1) = 0.5 * (1 + tanh(sqrt(2/pi) * (1 + 0.044715)))
  //         = 0.5 * (1 + tanh(0.7978846 * 1.044715 = 0.8335620)) = 0.5 * (1 + 0.6823840) = 0.8411920
  CHECK(unaryScalar("gelu", none, 1.0f) == Approx(0.8411920).epsilon(1e-6));
  CHECK(unaryScalar("gelu", none, 0.0f) == 0.0f);
  // gelu'(1) = 0.5 * (1 + 0.6823840) + 1 * exp(-0.5) / sqrt(2 pi) = 0.8411920 + 0.6065307 * 0.3989423 = 1.0831627
  CHECK(unaryScalar("gelu_derivative", none, 1.0f) == Approx(1.0831627).epsilon(1e-6));
  CHECK(unaryScalar("gelu_derivative", none, 0.0f) == 0.5f);
  CHECK(unaryScalar("sigmoid", none, 0.0f) == 0.5f);
  CHECK(unaryScalar("sigmoid", none, 1.0f) == Approx(0.7310586).epsilon(1e-6)); // 1 / (1 + e^-1)
  CHECK(unaryScalar("tanh", none, 0.0f) == 0.0f);
  CHECK(unaryScalar("tanh", none, std::log(3.0f)) == Approx(0.8)); // (9 - 1) / (9 + 1)
  CHECK(unaryScalar("abs", none, -2.5f) == 2.5f);
  CHECK(unaryScalar("sine", none, 1.5707963f) == Approx(1.0));
  CHECK(unaryScalar("cosine", none, 0.0f) == 1.0f);
  CHECK(unaryScalar("square", none, -3.0f) == 9.0f);
  CHECK(unaryScalar("relu", none, -1.0f) == 0.0f);
  CHECK(unaryScalar("relu", none, 2.0f) == 2.0f);

  OpAttributes power;
  addRaw(power, "exp", 3);
  CHECK(unaryScalar("power", power, -2.0f) == -8.0f);
  CHECK(unaryScalar("power", power, 0.5f) == 0.125f);
  CHECK_THROWS_AS(unaryScalar("power", none, 2.0f), GoldenError); // no exponent

  OpAttributes lrelu;
  addRaw(lrelu, "slope", 0.25);
  CHECK(unaryScalar("lrelu", lrelu, -2.0f) == -0.5f);
  CHECK(unaryScalar("lrelu", lrelu, 3.0f) == 3.0f);

  CHECK_THROWS_AS(unaryScalar("softplus", none, 1.0f), GoldenError);
}

TEST_CASE("unary op over a tensor applies to every value", "[golden][ops][unary]") {
  // reciprocal of 2^(c%4): 1, 0.5, 0.25, 0.125, exact.
  const Tensor a = make(1, T, T, [](int64_t, int64_t, int64_t c) { return float(1 << (c % 4)); });
  const OpAttributes none;
  const Tensor out = eval(makeSpec("reciprocal", none, 1, 1, 1), {a});
  CHECK(out.at(0, 0, 0, 0) == 1.0f);
  CHECK(out.at(0, 0, 5, 1) == 0.5f);
  CHECK(out.at(0, 0, 31, 30) == 0.25f);
  CHECK(out.at(0, 0, 17, 7) == 0.125f);
}

// ------------------------------------------------------------------ relu
TEST_CASE("relu_en applies to any op's result", "[golden][ops][relu]") {
  // datacopy of {-1, 0.25, 0.5, 2} in row 0.
  Tensor a = zeros(1, T, T);
  a.at(0, 0, 0, 0) = -1.0f;
  a.at(0, 0, 0, 1) = 0.25f;
  a.at(0, 0, 0, 2) = 0.5f;
  a.at(0, 0, 0, 3) = 2.0f;
  auto row0 = [](const Tensor& t) {
    return std::vector<float>{t.at(0, 0, 0, 0), t.at(0, 0, 0, 1), t.at(0, 0, 0, 2), t.at(0, 0, 0, 3)};
  };
  SECTION("plain relu: negatives to 0") {
    OpAttributes attrs;
    attrs.relu.set(true, kHere);
    CHECK(row0(eval(makeSpec("datacopy", attrs, 1, 1, 1), {a})) == std::vector<float>{0.0f, 0.25f, 0.5f, 2.0f});
  }
  SECTION("min mode: below the threshold -> 0") {
    OpAttributes attrs;
    attrs.relu.set(true, kHere);
    attrs.reluMode.set("min", kHere);
    attrs.reluThreshold.set(0.5, kHere);
    CHECK(row0(eval(makeSpec("datacopy", attrs, 1, 1, 1), {a})) == std::vector<float>{0.0f, 0.0f, 0.5f, 2.0f});
  }
  SECTION("max mode: clamp to [0, threshold]") {
    OpAttributes attrs;
    attrs.relu.set(true, kHere);
    attrs.reluMode.set("max", kHere);
    attrs.reluThreshold.set(0.5, kHere);
    CHECK(row0(eval(makeSpec("datacopy", attrs, 1, 1, 1), {a})) == std::vector<float>{0.0f, 0.25f, 0.5f, 0.5f});
  }
}

// ------------------------------------------------------------------ reduce
namespace {
OpAttributes reduceAttrs(const char* type, const char* dim) {
  OpAttributes a;
  a.reduceType.set(type, kHere);
  a.reduceDim.set(dim, kHere);
  return a;
}
// 2x2 tiles: in[r][c] = r/2 + c.
Tensor reduceInput() { return make(1, 2 * T, 2 * T, [](int64_t, int64_t r, int64_t c) { return r * 0.5f + c; }); }
} // namespace

TEST_CASE("reduce over r: one tile row, results in row 0", "[golden][ops][reduce]") {
  const Tensor in = reduceInput();
  SECTION("sum: sum_{r<64} (r/2 + c) = 0.5 * 2016 + 64c = 1008 + 64c") {
    const OpAttributes attrs = reduceAttrs("sum", "r");
    const Tensor out = eval(makeSpec("reduce", attrs, 1, 1, 2), {in});
    REQUIRE(out.r == T);
    REQUIRE(out.c == 2 * T);
    CHECK(out.at(0, 0, 0, 0) == 1008.0f);
    CHECK(out.at(0, 0, 0, 40) == 3568.0f); // 1008 + 2560
    CHECK(out.at(0, 0, 1, 0) == 0.0f);
    CHECK(out.at(0, 0, 31, 63) == 0.0f);
  }
  SECTION("max: 63/2 + c") {
    const OpAttributes attrs = reduceAttrs("max", "r");
    const Tensor out = eval(makeSpec("reduce", attrs, 1, 1, 2), {in});
    CHECK(out.at(0, 0, 0, 0) == 31.5f);
    CHECK(out.at(0, 0, 0, 63) == 94.5f);
    CHECK(out.at(0, 0, 5, 3) == 0.0f);
  }
}

TEST_CASE("reduce over c: one tile column, results in column 0", "[golden][ops][reduce]") {
  const Tensor in = reduceInput();
  SECTION("sum: sum_{c<64} (r/2 + c) = 32r + 2016") {
    const OpAttributes attrs = reduceAttrs("sum", "c");
    const Tensor out = eval(makeSpec("reduce", attrs, 1, 2, 1), {in});
    REQUIRE(out.r == 2 * T);
    REQUIRE(out.c == T);
    CHECK(out.at(0, 0, 0, 0) == 2016.0f);
    CHECK(out.at(0, 0, 63, 0) == 4032.0f); // 2016 + 2016
    CHECK(out.at(0, 0, 10, 1) == 0.0f);
  }
  SECTION("max: r/2 + 63") {
    const OpAttributes attrs = reduceAttrs("max", "c");
    const Tensor out = eval(makeSpec("reduce", attrs, 1, 2, 1), {in});
    CHECK(out.at(0, 0, 0, 0) == 63.0f);
    CHECK(out.at(0, 0, 41, 0) == 83.5f);
    CHECK(out.at(0, 0, 41, 31) == 0.0f);
  }
}

TEST_CASE("reduce over z: element-wise across groups of z slices", "[golden][ops][reduce]") {
  // in_z = (z + 1) * (1 + c): slices 1x, 2x, 3x, 4x.
  const Tensor in = make(4, T, T, [](int64_t z, int64_t, int64_t c) { return float((z + 1) * (1 + c)); });
  SECTION("sum, z 2: out_0 = (1+2)(1+c), out_1 = (3+4)(1+c)") {
    OpAttributes attrs = reduceAttrs("sum", "z");
    attrs.z.set(2, kHere);
    const Tensor out = eval(makeSpec("reduce", attrs, 2, 1, 1), {in});
    REQUIRE(out.z == 2);
    CHECK(out.at(0, 0, 3, 0) == 3.0f);
    CHECK(out.at(0, 1, 3, 2) == 21.0f);
  }
  SECTION("max, z 4: 4(1+c)") {
    OpAttributes attrs = reduceAttrs("max", "z");
    attrs.z.set(4, kHere);
    const Tensor out = eval(makeSpec("reduce", attrs, 1, 1, 1), {in});
    REQUIRE(out.z == 1);
    CHECK(out.at(0, 0, 9, 9) == 40.0f);
  }
}

TEST_CASE("reduce checks the op's output blocking", "[golden][ops][reduce]") {
  // A reduce over r of 2x2 tiles gives 1x2 tiles; a 2x2 blocking is wrong.
  const OpAttributes attrs = reduceAttrs("sum", "r");
  CHECK_THROWS_WITH(eval(makeSpec("reduce", attrs, 1, 2, 2), {reduceInput()}),
                    Catch::Contains("does not match the op's blocking"));
  const OpAttributes badDim = reduceAttrs("sum", "w");
  CHECK_THROWS_AS(eval(makeSpec("reduce", badDim, 1, 1, 2), {reduceInput()}), GoldenError);
}

// ------------------------------------------------------------------ formats
TEST_CASE("inputs are rounded to in_df and results to out_df", "[golden][ops][formats]") {
  // 1 + 2^-9 in Float16_b (step 2^-7 near 1) is 2^-9 from 1.0: rounds to 1.0.
  const Tensor a = make(1, T, T, [](int64_t, int64_t, int64_t) { return 1.0f; });
  const Tensor small = make(1, T, T, [](int64_t, int64_t, int64_t) { return 0x1p-9f; });
  const OpAttributes none;

  OpSpec spec = makeSpec("add", none, 1, 1, 1);
  CHECK(eval(spec, {a, small}).at(0, 0, 0, 0) == 1.001953125f); // all Float32

  spec.outDf = DataFormat::Float16_b;
  CHECK(eval(spec, {a, small}).at(0, 0, 0, 0) == 1.0f);

  // Input rounding: 1 + 2^-9 arrives as 1.0, plus 0 stays 1.0 even in Float32.
  OpSpec rounded = makeSpec("add", none, 1, 1, 1);
  rounded.inDf = {DataFormat::Float16_b, DataFormat::Float32};
  const Tensor sum = make(1, T, T, [](int64_t, int64_t, int64_t) { return 1.0f + 0x1p-9f; });
  CHECK(eval(rounded, {sum, zeros(1, T, T)}).at(0, 0, 0, 0) == 1.0f);
}

TEST_CASE("an input is copied for rounding only when rounding changes a bit", "[golden][ops][formats]") {
  using tessera::golden::detail::representable;
  // Float16_b keeps 7 mantissa bits: 1.5 is exact, 1 + 2^-10 is not.
  std::vector<float> v(2048, 1.5f);
  CHECK(representable(DataFormat::Float16_b, v));
  v[1500] = 1.0f + 0x1p-10f; // in the second 1024-value chunk
  CHECK_FALSE(representable(DataFormat::Float16_b, v));
  CHECK(representable(DataFormat::Float32, v));
  // Bfp8_b: a block of 16 shares the largest exponent. 1/64 next to 1.0 keeps
  // its bits (step 2^-6), 1/128 does not; the same 1/128 in a block of its own
  // is exact. -0 is stored as +0, so it is not representable.
  std::vector<float> b(32, 0.0f);
  b[0] = 1.0f, b[1] = 0x1p-6f, b[16] = 0x1p-7f;
  CHECK(representable(DataFormat::Bfp8_b, b));
  b[2] = 0x1p-7f;
  CHECK_FALSE(representable(DataFormat::Bfp8_b, b));
  b[2] = -0.0f;
  CHECK_FALSE(representable(DataFormat::Bfp8_b, b));
  // A NaN that is not the canonical quiet NaN changes when rounded.
  std::vector<float> n(16, std::bit_cast<float>(0x7FC00001u));
  CHECK_FALSE(representable(DataFormat::Float16_b, n));

  // Through evalOp: an input already in its in_df and one that is not give
  // what rounding by hand gives.
  const OpAttributes none;
  OpSpec spec = makeSpec("add", none, 1, 1, 1);
  spec.inDf = {DataFormat::Float16_b, DataFormat::Float16_b};
  const Tensor exact = make(1, T, T, [](int64_t, int64_t r, int64_t c) { return 1.0f + static_cast<float>((r + c) % 4) * 0x1p-7f; });
  // Row 3 of the second input is 1 + 2^-9, which Float16_b (step 2^-7 near 1) rounds to 1.
  const Tensor inexact = make(1, T, T, [](int64_t, int64_t r, int64_t) { return r == 3 ? 1.0f + 0x1p-9f : 0.0f; });
  const Tensor out = eval(spec, {exact, inexact});
  CHECK(out.at(0, 0, 3, 1) == 2.0f);                        // 1 + 1
  CHECK(out.at(0, 0, 3, 2) == 2.0f + 0x1p-7f);              // (1 + 2^-7) + 1
  CHECK(out.at(0, 0, 0, 2) == 1.0f + 2 * 0x1p-7f);          // + 0
  CHECK(eval(spec, {exact, zeros(1, T, T)}).data == exact.data); // nothing to round: the values as given
}

// ------------------------------------------------------------------ dispatch
TEST_CASE("op types the model implements", "[golden][ops]") {
  for (const char* type : {"matmul", "reduce", "add", "subtract", "multiply", "maximum", "datacopy", "nop",
                           "exp", "gelu", "lrelu", "power", "splice", "topk", "embedding", "quantization"})
    CHECK(isSupportedOpType(type));
  CHECK_FALSE(isSupportedOpType("fused_op")); // fused.hpp handles it
  CHECK_FALSE(isSupportedOpType("bogus"));
}

TEST_CASE("unsupported types and wrong shapes are GoldenErrors naming the op", "[golden][ops]") {
  const OpAttributes none;
  CHECK_THROWS_WITH(eval(makeSpec("bogus", none, 1, 1, 1), {zeros(1, T, T)}),
                    Catch::Contains("op0") && Catch::Contains("bogus"));
  // A datacopy of 1x1 tiles declared as 1x2 tiles.
  CHECK_THROWS_AS(eval(makeSpec("datacopy", none, 1, 1, 2), {zeros(1, T, T)}), GoldenError);
  // Partial tiles are not a tensor the device can hold.
  CHECK_THROWS_AS(eval(makeSpec("datacopy", none, 1, 1, 1), {zeros(1, 16, T)}), GoldenError);
  // Missing input.
  CHECK_THROWS_AS(eval(makeSpec("add", none, 1, 1, 1), {zeros(1, T, T)}), GoldenError);
}

// Worked by hand, Float16_b (7 mantissa bits, a step of 2^-7 at 1.0, ties away
// from zero): 1 + 2^-8 is a tie and becomes 1 + 2^-7; adding 2^-8 again gives
// 1 + 1.5 * 2^-7, a tie again: 1 + 2^-6. Rounded once at the end, the same
// three inputs give 1 + 2^-7 exactly.
TEST_CASE("accumulateGradient rounds the cell after every input", "[golden][gradient]") {
  Tensor cell(1, 1, 32, 32, 0.0f);
  Tensor results(3, 1, 32, 32, 0.0f);
  const size_t n = cell.size();
  for (size_t i = 0; i < n; ++i) {
    results.data[i] = 1.0f;
    results.data[n + i] = 0.00390625f;
    results.data[2 * n + i] = 0.00390625f;
  }
  accumulateGradient(cell, results, DataFormat::Float16_b);
  CHECK(cell.data[0] == 1.015625f);
  CHECK(cell.data[n - 1] == 1.015625f);

  Tensor wide(1, 1, 32, 32, 0.0f); // a Float32 cell keeps the exact sum
  accumulateGradient(wide, results, DataFormat::Float32);
  CHECK(wide.data[5] == 1.0078125f);

  Tensor wrong(1, 1, 32, 64, 0.0f);
  CHECK_THROWS_AS(accumulateGradient(wrong, results, DataFormat::Float16_b), GoldenError);
}

TEST_CASE("inputsInDf: inputs marked as in their in_df are not rounded again", "[golden][inputs-in-df]") {
  OpAttributes attrs;
  OpSpec spec = makeSpec("nop", attrs, 1, 1, 1);
  spec.inDf = {DataFormat::Float16_b};
  // 1 + 2^-10 is not a bfloat16 value (7 mantissa bits: the step at 1 is
  // 2^-7); unpacked to Float16_b it is 1.0. The dest and output are Float32.
  const float off = 1.0f + std::ldexp(1.0f, -10);
  const Tensor in = make(1, T, T, [&](int64_t, int64_t r, int64_t c) { return r == 3 && c == 5 ? off : 0.5f; });
  CHECK(eval(spec, {in}).at(0, 0, 3, 5) == 1.0f);
  // A caller that marks the input as already in Float16_b is trusted: the
  // check (and the rounding) is skipped, which shows the mark is honoured.
  spec.inputsInDf = {true};
  CHECK(eval(spec, {in}).at(0, 0, 3, 5) == off);
  spec.inputsInDf = {false};
  CHECK(eval(spec, {in}).at(0, 0, 3, 5) == 1.0f);
}

TEST_CASE("eltwise add rounds to a Float16_b dest across chunk boundaries", "[golden][inputs-in-df]") {
  // 5 tiles along c: 5 x 1024 values, more than one 4096-value chunk.
  OpAttributes attrs;
  OpSpec spec = makeSpec("add", attrs, 1, 1, 5);
  spec.inDf = {DataFormat::Float32, DataFormat::Float32};
  spec.accDf = DataFormat::Float16_b;
  spec.outDf = DataFormat::Float32;
  // 1 + 2^-9 rounds to 1.0 in bfloat16 (below half of the 2^-7 step);
  // 1 + 2^-8 is exactly half a step: ties away from zero give 1 + 2^-7.
  const Tensor a = make(1, T, 5 * T, [](int64_t, int64_t, int64_t) { return 1.0f; });
  const Tensor b = make(1, T, 5 * T, [](int64_t, int64_t r, int64_t c) {
    return (r * 160 + c) % 2 ? std::ldexp(1.0f, -9) : std::ldexp(1.0f, -8);
  });
  const Tensor out = eval(spec, {a, b});
  for (int64_t r = 0; r < T; ++r)
    for (int64_t c = 0; c < 5 * T; ++c)
      REQUIRE(out.at(0, 0, r, c) == ((r * 160 + c) % 2 ? 1.0f : 1.0f + std::ldexp(1.0f, -7)));
}

// partialsInPlace (a gradient matmul whose kernel adds each m_k block into
// the gradient block): one entry per block, each from zero, the bias in the
// last; accumulateGradient then rounds the cell after every block.
// Block b of input 0 has ones in column 0 of its tile, block b of input 1
// the value v_b in row 0: block b's product is v_b everywhere. v = 1,
// 3 x 2^-10, 3 x 2^-10 (bias 0.5 x 2^-10 added to the last: 3.5 x 2^-10).
// Float16_b keeps 7 mantissa bits, a step of 2^-7 at 1: 1 + 3.5 x 2^-10
// and 1 + 3 x 2^-10 are both below the half step (4 x 2^-10) and round to 1
// block by block; the whole sum 1 + 6.5 x 2^-10 rounds to 1 + 2^-7.
TEST_CASE("matmul partialsInPlace: one entry per m_k block, the cell rounded after each", "[golden][gradient]") {
  OpAttributes attrs;
  setMatmulBlocks(attrs, 3, 1);
  attrs.bias.set(true, kHere);
  OpSpec spec = makeSpec("matmul", attrs, 1, 1, 1);
  const float v[3] = {1.0f, 3.0f / 1024, 3.0f / 1024};
  const Tensor in0 = make(1, T, 3 * T, [](int64_t, int64_t, int64_t c) { return c % T == 0 ? 1.0f : 0.0f; });
  const Tensor in1 = make(1, 3 * T, T, [&](int64_t, int64_t r, int64_t) { return r % T == 0 ? v[r / T] : 0.0f; });
  const Tensor bias = make(1, T, T, [](int64_t, int64_t, int64_t) { return 0.5f / 1024; });

  const Tensor whole = eval(spec, {in0, in1, bias});
  REQUIRE(whole.w == 1);
  CHECK(whole.at(0, 0, 7, 9) == 1.0f + 6.5f / 1024);
  Tensor cellWhole(1, 1, T, T);
  accumulateGradient(cellWhole, whole, DataFormat::Float16_b);
  CHECK(cellWhole.at(0, 0, 7, 9) == 1.0078125f);

  spec.partialsInPlace = true;
  const Tensor parts = eval(spec, {in0, in1, bias});
  REQUIRE(parts.w == 3);
  CHECK(parts.at(0, 0, 0, 0) == 1.0f);
  CHECK(parts.at(1, 0, 31, 31) == 3.0f / 1024);
  CHECK(parts.at(2, 0, 4, 30) == 3.5f / 1024);
  Tensor cell(1, 1, T, T);
  accumulateGradient(cell, parts, DataFormat::Float16_b);
  CHECK(cell.at(0, 0, 7, 9) == 1.0f);
  CHECK(cell.at(0, 0, 31, 0) == 1.0f);

  // Two inputs: entries input by input, block by block.
  Tensor in0x2(2, 1, T, 3 * T), in1x2(2, 1, 3 * T, T), biasx2(2, 1, T, T);
  for (int64_t w = 0; w < 2; ++w) {
    std::copy(in0.data.begin(), in0.data.end(), in0x2.data.begin() + w * static_cast<int64_t>(in0.data.size()));
    std::copy(in1.data.begin(), in1.data.end(), in1x2.data.begin() + w * static_cast<int64_t>(in1.data.size()));
    std::copy(bias.data.begin(), bias.data.end(), biasx2.data.begin() + w * static_cast<int64_t>(bias.data.size()));
  }
  const Tensor parts2 = eval(spec, {in0x2, in1x2, biasx2});
  REQUIRE(parts2.w == 6);
  CHECK(parts2.at(3, 0, 2, 2) == 1.0f);
  CHECK(parts2.at(4, 0, 2, 2) == 3.0f / 1024);
  CHECK(parts2.at(5, 0, 2, 2) == 3.5f / 1024);

  // sfpu_op needs the whole sum in dest: not with partials in place.
  addRaw(attrs, "sfpu_op", tessera::netlist::RawValue(std::string("gelu")));
  CHECK_THROWS_AS(eval(spec, {in0, in1, bias}), GoldenError);
}
