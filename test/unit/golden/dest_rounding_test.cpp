// The dest register as a rounding point (docs/golden-model.md, "Numerical
// model of one op"): every op result the kernel holds in dest is rounded to
// the dest format (destFormatOf(acc_df)) before relu and the out_df rounding;
// a unary's input is rounded there before the function; a matmul rounds dest
// after every tile of the inner dimension. Each case is worked by hand in
// its comments, with the value the model gave before it rounded in dest.
//
// Float16_b: 8 significant bits (step 2^-7 in [1, 2), 2^-10 in [0.125,
// 0.25)), round to nearest, ties away from zero (docs/data-formats.md).
#include "golden/fused.hpp"
#include "golden/ops.hpp"

#include "netlist/parser.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace tessera;
using namespace tessera::golden;
using netlist::OpAttributes;

namespace {

constexpr int64_t T = 32;
const SourceLoc kHere{1, 1};

// One tile per input; `values` go to the first values of row 0, the rest is 0.
Tensor tile(const std::vector<float>& values, int64_t rows = T, int64_t cols = T) {
  Tensor t(1, 1, rows, cols);
  for (size_t i = 0; i < values.size(); ++i) t.at(0, 0, 0, static_cast<int64_t>(i)) = values[i];
  return t;
}

OpSpec spec(const std::string& type, const OpAttributes& attrs, DataFormat in, DataFormat acc, DataFormat out,
            size_t inputs) {
  OpSpec s;
  s.name = "op";
  s.type = type;
  s.attrs = &attrs;
  s.inDf.assign(inputs, in);
  s.accDf = acc;
  s.intermedDf = DataFormat::Float32;
  s.outDf = out;
  s.fidelity = MathFidelity::HiFi4;
  return s;
}

Tensor eval(const OpSpec& s, std::vector<Tensor> inputs) { return evalOp(s, inputs); }

constexpr float kInf = std::numeric_limits<float>::infinity();

} // namespace

TEST_CASE("dest format follows acc_df", "[golden][dest]") {
  CHECK(destFormatOf(DataFormat::Float16_b) == DataFormat::Float16_b);
  CHECK(destFormatOf(DataFormat::Float16) == DataFormat::Float16);
  CHECK(destFormatOf(DataFormat::Float32) == DataFormat::Float32);
  CHECK(destFormatOf(DataFormat::Int32) == DataFormat::Int32);
  CHECK(destFormatOf(DataFormat::Int8) == DataFormat::Int32);
  CHECK(destFormatOf(DataFormat::Bfp8_b) == DataFormat::Float16_b);
  CHECK(destFormatOf(DataFormat::Bfp4_b) == DataFormat::Float16_b);
  CHECK(destFormatOf(DataFormat::Bfp8) == DataFormat::Float16);
}

TEST_CASE("relu compares the value rounded in dest with the threshold", "[golden][dest][relu]") {
  // 0.125 + (0.125 - 2^-12) = 0.25 - 2^-12 in float32. In Float16_b the
  // neighbours are 0.25 - 2^-10 and 0.25; it is 2^-12 from 0.25: dest holds
  // 0.25, which relu min 0.25 keeps (the unrounded sum would be zeroed).
  // 0.125 + (0.125 - 2^-10) = 0.25 - 2^-10 is a Float16_b value: zeroed.
  OpAttributes attrs;
  attrs.relu.set(true, kHere);
  attrs.reluThreshold.set(0.25, kHere);
  const Tensor a = tile({0.125f, 0.125f, 0.5f});
  const Tensor b = tile({0.125f - 0x1p-12f, 0.125f - 0x1p-10f, -0.125f});
  const Tensor out = eval(spec("add", attrs, DataFormat::Float32, DataFormat::Float16_b, DataFormat::Float32, 2), {a, b});
  CHECK(out.at(0, 0, 0, 0) == 0.25f);
  CHECK(out.at(0, 0, 0, 1) == 0.0f);
  CHECK(out.at(0, 0, 0, 2) == 0.375f);
  // A Float32 dest keeps the sum: below the threshold, zeroed.
  const Tensor wide = eval(spec("add", attrs, DataFormat::Float32, DataFormat::Float32, DataFormat::Float32, 2), {a, b});
  CHECK(wide.at(0, 0, 0, 0) == 0.0f);
}

TEST_CASE("a Bfp output through a 16-bit dest is rounded twice", "[golden][dest][bfp]") {
  // x = 1 + 2^-7 - 2^-10 = 1.0068359375, alone in its Bfp8_b block (E = 0,
  // step 2^-6). Directly: 64.4375 steps -> 64 -> 1.0. Through Float16_b dest
  // first: 1.0078125 (2^-10 from it, 7*2^-10 from 1.0), which is 64.5 steps
  // -> ties away -> 65 -> 1.015625.
  OpAttributes attrs;
  const Tensor x = tile({1.0068359375f});
  const Tensor zero = tile({});
  const Tensor out = eval(spec("add", attrs, DataFormat::Float32, DataFormat::Float16_b, DataFormat::Bfp8_b, 2), {x, zero});
  CHECK(out.at(0, 0, 0, 0) == 1.015625f);
  const Tensor direct = eval(spec("add", attrs, DataFormat::Float32, DataFormat::Float32, DataFormat::Bfp8_b, 2), {x, zero});
  CHECK(direct.at(0, 0, 0, 0) == 1.0f);
}

TEST_CASE("a Float32 datacopy through grayskull's 16-bit dest loses low mantissa bits", "[golden][dest][datacopy]") {
  // acc_df Float16_b (grayskull's dest is 16-bit): 1 + 2^-8 + 2^-20 is more
  // than half a step (2^-8) above 1 -> 1.0078125; 1 + 2^-9 is below -> 1.0;
  // pi = 1.1001001|0000111...b x 2 -> 1.1001001b x 2 = 3.140625.
  OpAttributes attrs;
  const Tensor x = tile({1.0f + 0x1p-8f + 0x1p-20f, 1.0f + 0x1p-9f, -3.14159274f});
  for (const char* type : {"datacopy", "nop"}) {
    OpSpec s = spec(type, attrs, DataFormat::Float32, DataFormat::Float16_b, DataFormat::Float32, 1);
    s.arch = netlist::Arch::Grayskull;
    const Tensor out = eval(s, {x});
    CHECK(out.at(0, 0, 0, 0) == 1.0078125f);
    CHECK(out.at(0, 0, 0, 1) == 1.0f);
    CHECK(out.at(0, 0, 0, 2) == -3.140625f);
  }
  // A Float32 dest (wormhole_b0, acc_df Float32) passes the values unchanged.
  OpSpec wide = spec("datacopy", attrs, DataFormat::Float32, DataFormat::Float32, DataFormat::Float32, 1);
  wide.arch = netlist::Arch::WormholeB0;
  const Tensor out = eval(wide, {x});
  CHECK(out.at(0, 0, 0, 0) == 1.0f + 0x1p-8f + 0x1p-20f);
  CHECK(out.at(0, 0, 0, 2) == -3.14159274f);
}

TEST_CASE("an SFPU function sees its input rounded to dest", "[golden][dest][unary]") {
  // x = 1 + 2^-8 + 2^-12 -> Float16_b dest 1.0078125 (above half a step).
  // 1/1.0078125 = 128/129 = 0.992248..., 254.016 steps of 2^-8 -> 0.9921875.
  // Without the input rounding: 1/x = 0.995867, 254.94 steps -> 0.99609375.
  OpAttributes attrs;
  const Tensor x = tile({1.0f + 0x1p-8f + 0x1p-12f});
  const Tensor out =
      eval(spec("reciprocal", attrs, DataFormat::Float32, DataFormat::Float16_b, DataFormat::Float32, 1), {x});
  CHECK(out.at(0, 0, 0, 0) == 0.9921875f);
}

TEST_CASE("a Float16 dest overflows to infinity", "[golden][dest][unary]") {
  // exp(12) = 162754.79 > 65504 (Float16's max): inf in dest, inf in the
  // Float32 output. exp(2) = 7.389056 -> Float16 (step 2^-8 in [4, 8)):
  // 1891.6 steps -> 1892 * 2^-8 = 7.390625.
  OpAttributes attrs;
  const Tensor x = tile({12.0f, 2.0f});
  const Tensor out = eval(spec("exp", attrs, DataFormat::Float32, DataFormat::Float16, DataFormat::Float32, 1), {x});
  CHECK(out.at(0, 0, 0, 0) == kInf);
  CHECK(out.at(0, 0, 0, 1) == 7.390625f);
}

TEST_CASE("matmul rounds dest after every tile of the inner dimension", "[golden][dest][matmul]") {
  // Row 0 of in0 is 1 at k = 0 and k = 32 (one per tile of K); column 0 of
  // in1 is 1 + 2^-8 at k = 0 and 2^-8 at k = 32 (Float32 inputs).
  // Tile 0: dest = 1 + 2^-8 -> Float16_b ties away -> 1.0078125.
  // Tile 1: dest = 1.0078125 + 2^-8 = 1 + 3*2^-8, half way between
  // 1.0078125 and 1.015625 -> 1.015625.
  // Summed over both tiles first: 1 + 2^-7 = 1.0078125 exactly.
  Tensor a(1, 1, T, 2 * T);
  a.at(0, 0, 0, 0) = 1.0f;
  a.at(0, 0, 0, T) = 1.0f;
  Tensor b(1, 1, 2 * T, T);
  b.at(0, 0, 0, 0) = 1.0f + 0x1p-8f;
  b.at(0, 0, T, 0) = 0x1p-8f;
  for (const int64_t mK : {1, 2}) {
    // u_kt 2: two tiles in one block; m_k 2: one tile per block, the partial
    // sum going through a Float32 intermediate buffer in between.
    OpAttributes attrs;
    attrs.mK.set(mK, kHere);
    attrs.uKt.set(2 / mK, kHere);
    OpSpec s = spec("matmul", attrs, DataFormat::Float32, DataFormat::Float16_b, DataFormat::Float32, 2);
    INFO("m_k " << mK);
    CHECK(eval(s, {a, b}).at(0, 0, 0, 0) == 1.015625f);
    // A Float32 dest adds the tiles exactly.
    s.accDf = DataFormat::Float32;
    CHECK(eval(s, {a, b}).at(0, 0, 0, 0) == 1.0078125f);
  }
}

TEST_CASE("reduce r/c sums round dest after every tile of the reduced dimension", "[golden][dest][reduce]") {
  // Column 0 (dim r) / row 0 (dim c) holds 1 + 2^-8 in the first tile and
  // 2^-8 in the second (Float32 input). Float16_b dest: after tile 0 it holds
  // 1.0078125 (ties away), after tile 1 1.0078125 + 2^-8 = 1 + 3*2^-8 ->
  // ties away -> 1.015625. Summed first: 1 + 2^-7 = 1.0078125.
  for (const char* dim : {"r", "c"}) {
    const bool rows = std::string(dim) == "r";
    Tensor x(1, 1, rows ? 2 * T : T, rows ? T : 2 * T);
    x.at(0, 0, 0, 0) = 1.0f + 0x1p-8f;
    (rows ? x.at(0, 0, T, 0) : x.at(0, 0, 0, T)) = 0x1p-8f;
    OpAttributes attrs;
    attrs.reduceType.set("sum", kHere);
    attrs.reduceDim.set(dim, kHere);
    OpSpec s = spec("reduce", attrs, DataFormat::Float32, DataFormat::Float16_b, DataFormat::Float32, 1);
    INFO("dim " << dim);
    CHECK(eval(s, {x}).at(0, 0, 0, 0) == 1.015625f);
    s.accDf = DataFormat::Float32;
    CHECK(eval(s, {x}).at(0, 0, 0, 0) == 1.0078125f);
  }
}

TEST_CASE("matmul sfpu_op result is rounded to dest", "[golden][dest][matmul]") {
  // 1 x 1 = 1 -> exp(1) = 2.7182817 -> Float16 dest (step 2^-9 in [2, 4)):
  // 1391.76 steps -> 1392 * 2^-9 = 2.71875, kept by the Float32 output.
  Tensor a(1, 1, T, T), b(1, 1, T, T);
  a.at(0, 0, 0, 0) = 1.0f;
  b.at(0, 0, 0, 0) = 1.0f;
  OpAttributes attrs;
  attrs.mK.set(1, kHere);
  attrs.uKt.set(1, kHere);
  attrs.all.push_back(netlist::Attribute{"sfpu_op", kHere, netlist::RawValue(std::string("exp")), true});
  const OpSpec s = spec("matmul", attrs, DataFormat::Float32, DataFormat::Float16, DataFormat::Float32, 2);
  CHECK(eval(s, {a, b}).at(0, 0, 0, 0) == 2.71875f);
}

TEST_CASE("fused sub-ops round in dest before relu and their buffer", "[golden][dest][fused]") {
  // Sub-op e: exp of input0 writes intermed0 (Float32); sub-op r adds
  // input1 with relu min 1.0 and writes the Float32 output; acc_df Float16.
  const std::string text = R"(devices:
  arch: wormhole_b0
queues:
  q0: {type: queue, input: HOST, entries: 1, grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1], df: Float32, target_device: 0, loc: dram, dram: [[0, 0x30000000]]}
  q1: {type: queue, input: HOST, entries: 1, grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1], df: Float32, target_device: 0, loc: dram, dram: [[0, 0x31000000]]}
graphs:
  g:
    target_device: 0
    input_count: 1
    op: {type: fused_op, grid_loc: [0, 0], grid_size: [1, 1], inputs: [q0, q1], t: 1, mblock: [1, 1], ublock: [1, 1], in_df: [Float32, Float32], acc_df: Float16, intermed_df: Float32, out_df: Float32, math_fidelity: HiFi4, ublock_order: r, attributes: {fused_op_id: 0}}
programs:
  - run:
    - execute: {graph_name: g}
fused_ops:
  0:
    inputs: 2
    intermediates: 1
    schedules:
      -
        - e: {type: exp, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: intermed0}
        - r: {type: add, inputs: [intermed0, input1], pop: [intermed0], mblock: [1, 1], ublock: [1, 1], output: output, attributes: {relu_en: true, relu_threshold: 1.0}}
)";
  SourceBuffer source("dest_rounding_test.yaml", text);
  DiagnosticEngine diags;
  auto nl = netlist::parseNetlist(source, diags);
  for (const Diagnostic& d : diags.diagnostics())
    if (d.severity == Severity::Error) FAIL(d.message << " [" << d.rule << "]");
  REQUIRE(nl.has_value());
  const netlist::Op& o = nl->graphs.at(0).ops.at(0);
  const OpSpec s = specOf(o, nl->devices.arch.at(0).value);
  // Column 0: exp(12) = inf in dest; inf + 0 = inf, kept by relu.
  // Column 1: exp(2) -> 7.390625; + 0 -> 7.390625 (Float32 would give 7.389056).
  // Column 2: exp(0) = 1; + (-2^-12) = 1 - 2^-12 -> Float16 (step 2^-11 in
  //   [0.5, 1)) half way between 1 - 2^-11 and 1 -> ties away -> 1.0, which
  //   relu min 1.0 keeps; the unrounded 0.999755859375 would be zeroed.
  // Column 3: exp(0) = 1; + (-2^-10) = 1 - 2^-10, a Float16 value below 1: zeroed.
  const Tensor in0 = tile({12.0f, 2.0f, 0.0f, 0.0f});
  const Tensor in1 = tile({0.0f, 0.0f, -0x1p-12f, -0x1p-10f});
  const Tensor out = evalFusedOp(s, nl->fusedOps.at(0), std::vector<Tensor>{in0, in1});
  CHECK(out.at(0, 0, 0, 0) == kInf);
  CHECK(out.at(0, 0, 0, 1) == 7.390625f);
  CHECK(out.at(0, 0, 0, 2) == 1.0f);
  CHECK(out.at(0, 0, 0, 3) == 0.0f);
}

TEST_CASE("specOf: a netlist op's blocking and formats, acc_df and intermed_df default to out_df", "[golden][spec]") {
  const std::string text = R"(devices:
  arch: grayskull
queues:
  q0: {type: queue, input: HOST, entries: 1, grid_size: [1, 1], t: 2, mblock: [2, 3], ublock: [1, 2], df: Float16_b, target_device: 0, loc: dram, dram: [[0, 0x30000000]]}
graphs:
  g:
    target_device: 0
    input_count: 1
    op: {type: exp, grid_loc: [0, 0], grid_size: [2, 1], inputs: [q0], t: 2, mblock: [1, 3], ublock: [1, 2], in_df: [Float16_b], out_df: Bfp8_b, ublock_order: c}
programs:
  - run:
    - execute: {graph_name: g}
)";
  SourceBuffer source("spec_of_test.yaml", text);
  DiagnosticEngine diags;
  auto nl = netlist::parseNetlist(source, diags);
  REQUIRE(nl.has_value());
  const OpSpec s = specOf(nl->graphs.at(0).ops.at(0), netlist::Arch::Grayskull);
  CHECK(s.name == "op");
  CHECK(s.type == "exp");
  CHECK(s.t == 2);
  CHECK(s.grid.r == 2);
  CHECK(s.mblock.c == 3);
  CHECK(s.ublock.c == 2);
  CHECK(s.ublockOrder == netlist::UblockOrder::C);
  CHECK(s.rowTiles() == 2);
  CHECK(s.colTiles() == 6);
  REQUIRE(s.inDf.size() == 1);
  CHECK(s.inDf[0] == DataFormat::Float16_b);
  CHECK(s.outDf == DataFormat::Bfp8_b);
  CHECK(s.accDf == DataFormat::Bfp8_b);        // absent: out_df
  CHECK(s.intermedDf == DataFormat::Bfp8_b);   // absent: out_df
  CHECK(s.fidelity == MathFidelity::HiFi4);    // absent: HiFi4
  CHECK(s.arch == netlist::Arch::Grayskull);
}
