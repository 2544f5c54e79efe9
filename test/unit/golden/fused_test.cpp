// Unit tests of the fused-op executor (lib/golden/fused.cpp). Each fused op is
// written as netlist YAML (the corpus spelling), parsed, checked clean by the
// fused-op validator where it is meant to be valid, and run with
// evalFusedOp. Expected values come from hand arithmetic (in the comments) or
// from a direct double-precision computation in the test (softmax,
// layernorm), never from the code under test.
#include "golden/fused.hpp"

#include "device/soc_descriptor.hpp"
#include "netlist/parser.hpp"
#include "netlist/validator.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

using namespace tessera;
using namespace tessera::golden;
using netlist::Netlist;

namespace {

constexpr int64_t kTile = 32;

// A netlist of one fused_op graph op `op` (with `opFields` inside its flow
// map, inputs q0..q<inputs-1>) and fused op 0 (`fused`: the text under `0:`).
std::string netlistText(const std::string& opFields, int inputs, const std::string& fused,
                        const std::string& arch = "grayskull") {
  std::string ins, queues;
  for (int i = 0; i < inputs; ++i) {
    ins += (i ? ", q" : "q") + std::to_string(i);
    queues += "  q" + std::to_string(i) + ": {type: queue, input: HOST, entries: 1, grid_size: [1, 1], t: 1, "
              "mblock: [1, 1], ublock: [1, 1], df: Float32, target_device: 0, loc: dram, dram: [[0, 0x3" +
              std::to_string(i) + "000000]]}\n";
  }
  return "devices:\n  arch: " + arch + "\nqueues:\n" + queues +
         "graphs:\n  g:\n    target_device: 0\n    input_count: 1\n"
         "    op: {type: fused_op, grid_loc: [0, 0], inputs: [" + ins + "], " + opFields + "}\n"
         "programs:\n  - run:\n    - execute: {graph_name: g}\n"
         "fused_ops:\n  0:\n" + fused;
}

struct Parsed {
  Netlist nl;
  const netlist::Op& op() const { return nl.graphs.at(0).ops.at(0); }
  const netlist::FusedOp& fused() const { return nl.fusedOps.at(0); }

  OpSpec spec() const { return specOf(op(), nl.devices.arch.at(0).value); }
};

// Parses (no parse errors allowed); with `valid`, the fused-op validator must
// accept the fused op too, so the tests exercise schedules net2hlks accepts.
Parsed parse(const std::string& text, bool valid = true) {
  SourceBuffer source("fused_test.yaml", text);
  DiagnosticEngine diags;
  auto nl = netlist::parseNetlist(source, diags);
  INFO(text);
  for (const Diagnostic& d : diags.diagnostics())
    if (d.severity == Severity::Error) FAIL(d.message << " [" << d.rule << "]");
  REQUIRE(nl.has_value());
  if (valid) {
    const Arch arch = nl->devices.arch.at(0).value;
    SocDescriptor soc = loadBundledDescriptor(defaultDescriptorName(arch));
    DiagnosticEngine checks;
    netlist::validateFusedOps(*nl, netlist::ValidationTarget{arch, &soc}, checks);
    for (const Diagnostic& d : checks.diagnostics())
      if (d.severity == Severity::Error) FAIL_CHECK(d.message << " [" << d.rule << "]");
  }
  return Parsed{std::move(*nl)};
}

// [w][t][rt tiles][ct tiles] filled by fn(w, z, r, c).
Tensor make(int64_t w, int64_t t, int64_t rt, int64_t ct, const std::function<float(int64_t, int64_t, int64_t, int64_t)>& fn) {
  Tensor x(w, t, rt * kTile, ct * kTile);
  for (int64_t wi = 0; wi < w; ++wi)
    for (int64_t z = 0; z < t; ++z)
      for (int64_t r = 0; r < x.r; ++r)
        for (int64_t c = 0; c < x.c; ++c) x.at(wi, z, r, c) = fn(wi, z, r, c);
  return x;
}

Tensor constant(int64_t w, int64_t t, int64_t rt, int64_t ct, float v) { return Tensor(w, t, rt * kTile, ct * kTile, v); }

// Values k/64 with |k| <= 128: at most 8 significant bits, so exact in
// Float16_b (and Float32): input rounding cannot blur the comparisons.
Tensor sixtyFourths(int64_t w, int64_t t, int64_t rt, int64_t ct, uint32_t seed) {
  uint32_t state = seed;
  return make(w, t, rt, ct, [&](int64_t, int64_t, int64_t, int64_t) {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<int64_t>(state >> 8) % 257 - 128) / 64.0f;
  });
}

double relError(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

std::string sub(const std::string& name, const std::string& fields) {
  return "        - " + name + ": {" + fields + "}\n";
}

std::string fusedText(int inputs, int intermediates, const std::vector<std::string>& schedules) {
  std::string s = "    inputs: " + std::to_string(inputs) + "\n    intermediates: " + std::to_string(intermediates) +
                  "\n    schedules:\n";
  for (const std::string& ops : schedules) s += "      -\n" + ops;
  return s;
}

// The op fields for grid [1, 1] with the given blocking and formats.
std::string opFields(int t, const std::string& mblock, const std::string& ublock, const std::string& inDf,
                     const std::string& acc, const std::string& intermed, const std::string& out,
                     const std::string& attrs = "fused_op_id: 0", const std::string& grid = "[1, 1]") {
  return "grid_size: " + grid + ", t: " + std::to_string(t) + ", mblock: " + mblock + ", ublock: " + ublock +
         ", in_df: " + inDf + ", acc_df: " + acc + ", intermed_df: " + intermed + ", out_df: " + out +
         ", math_fidelity: HiFi4, ublock_order: r, attributes: {" + attrs + "}";
}

} // namespace

// ---------------------------------------------------------------- softmax
// The softmax pattern of the corpus (bert fused ops, netlist_fused_op_with_reduce):
// exp, a row sum by reduce into an intermediate (one tile column, valid in
// its column 0), reciprocal, then exp again in dest times the reciprocal
// broadcast back over the row (broadcast c: 4 copies the tile column,
// tile_broadcast c spreads its column 0 across each tile).
TEST_CASE("fused softmax matches a direct computation", "[fused]") {
  const std::string fused = fusedText(1, 2, {
      sub("exp0", "type: exp, inputs: [input0], mblock: [1, 2], ublock: [2, 2], output: intermed0") +
      sub("sum", "type: reduce, inputs: [intermed0], pop: [intermed0], attributes: {dim: c, type: sum, m_k: 2, "
                 "u_kt: 2}, mblock: [1, 1], ublock: [2, 1], output: intermed1"),
      sub("recip", "type: reciprocal, inputs: [intermed1], pop: [intermed1], mblock: [1, 1], ublock: [2, 1], "
                   "output: intermed0") +
      sub("exp1", "type: exp, inputs: [input0], mblock: [1, 2], ublock: [2, 2], output: dest") +
      sub("mul", "type: multiply, inputs: [dest, intermed0], input_1_tms: [broadcast: {c: 4}, tile_broadcast: c], "
                 "pop_last: [intermed0], mblock: [1, 2], ublock: [2, 2], output: output"),
  });

  // Float16_b (8-bit significand): every rounding is within 2^-8 relative.
  // Values pass through five of them: exp into intermed0, the sum into
  // intermed1, the reciprocal into intermed0, exp into dest (acc_df) and the
  // product into the output; the float32 sum of positive rounded terms adds no
  // more than their own error. (1 + 2^-8)^5 - 1 = 0.0197 < 0.02.
  // Float32: the 128-term float sum is within 128 * 2^-24 = 7.6e-6, the
  // other steps within a few float ulps: 2e-5.
  auto [df, tolerance] = GENERATE(std::pair{std::string("Float16_b"), 0.02}, std::pair{std::string("Float32"), 2e-5});
  CAPTURE(df);
  Parsed p = parse(netlistText(opFields(2, "[1, 2]", "[2, 2]", "[" + df + "]", df, df, df), 1, fused));

  // Two entries, t = 2, 2x4 tiles (64x128 values) per t.
  const Tensor x = sixtyFourths(2, 2, 2, 4, 7);
  const Tensor out = evalFusedOp(p.spec(), p.fused(), std::span<const Tensor>(&x, 1));
  REQUIRE(out.sameShape(x));

  double worst = 0.0;
  for (int64_t w = 0; w < x.w; ++w)
    for (int64_t z = 0; z < x.z; ++z)
      for (int64_t r = 0; r < x.r; ++r) {
        double sum = 0.0;
        for (int64_t c = 0; c < x.c; ++c) sum += std::exp(static_cast<double>(x.at(w, z, r, c)));
        for (int64_t c = 0; c < x.c; ++c) {
          const double want = std::exp(static_cast<double>(x.at(w, z, r, c))) / sum;
          worst = std::max(worst, relError(out.at(w, z, r, c), want));
        }
      }
  CHECK(worst <= tolerance);
}

// ---------------------------------------------------------------- layernorm
// A layernorm over rows: reduce for the sums, subtract with broadcast, square,
// dest chains (var + eps -> sqrt -> reciprocal) and the final scaling. The
// intermediates cross schedules as net2hlks allows (reduce outputs, and a
// single-ublock mblock for the centred values).
TEST_CASE("fused layernorm matches a direct computation", "[fused]") {
  const std::string rowSum = "type: reduce, attributes: {dim: c, type: sum, m_k: 1, u_kt: 4}, mblock: [1, 1], "
                             "ublock: [1, 1]";
  const std::string fused = fusedText(3, 3, {
      sub("sum_x", rowSum + ", inputs: [input0], output: intermed0"),
      sub("mean", "type: multiply, inputs: [intermed0, input1], pop: [intermed0], mblock: [1, 1], ublock: [1, 1], "
                  "output: intermed1") +
      sub("centred", "type: subtract, inputs: [input0, intermed1], input_1_tms: [broadcast: {c: 4}, "
                     "tile_broadcast: c], pop_last: [intermed1], mblock: [1, 1], ublock: [1, 4], output: intermed0") +
      sub("square", "type: multiply, inputs: [intermed0, intermed0], mblock: [1, 1], ublock: [1, 4], "
                    "output: intermed2") +
      sub("sum_sq", rowSum + ", inputs: [intermed2], pop: [intermed2], output: intermed1"),
      sub("var", "type: multiply, inputs: [intermed1, input1], pop: [intermed1], mblock: [1, 1], ublock: [1, 1], "
                 "output: dest") +
      sub("add_eps", "type: add, inputs: [dest, input2], mblock: [1, 1], ublock: [1, 1], output: dest") +
      sub("std", "type: sqrt, inputs: [dest], mblock: [1, 1], ublock: [1, 1], output: dest") +
      sub("rstd", "type: reciprocal, inputs: [dest], mblock: [1, 1], ublock: [1, 1], output: intermed1") +
      sub("norm", "type: multiply, inputs: [intermed0, intermed1], input_1_tms: [broadcast: {c: 4}, "
                  "tile_broadcast: c], pop: [intermed0], pop_last: [intermed1], mblock: [1, 1], ublock: [1, 4], "
                  "output: output"),
  });
  Parsed p = parse(netlistText(opFields(2, "[1, 1]", "[1, 4]", "[Float32, Float32, Float32]", "Float32", "Float32",
                                        "Float32"),
                               3, fused));

  const float eps = 1e-5f;
  const Tensor x = sixtyFourths(2, 2, 1, 4, 11);
  const Tensor inv = constant(2, 2, 1, 1, 1.0f / 128.0f); // 1/N, N = 128 columns (exact: 2^-7)
  const Tensor epsT = constant(2, 2, 1, 1, eps);
  const std::vector<Tensor> inputs{x, inv, epsT};
  const Tensor out = evalFusedOp(p.spec(), p.fused(), inputs);
  REQUIRE(out.sameShape(x));

  // Float32 throughout: sums of 128 terms within 128 * 2^-24 relative, a few
  // ulps per other step; outputs are O(1), so 1e-4 absolute is generous and
  // still far below any semantic mistake (wrong mean or variance is O(0.1)).
  double worst = 0.0;
  for (int64_t w = 0; w < x.w; ++w)
    for (int64_t z = 0; z < x.z; ++z)
      for (int64_t r = 0; r < x.r; ++r) {
        double mean = 0.0, var = 0.0;
        for (int64_t c = 0; c < x.c; ++c) mean += x.at(w, z, r, c);
        mean /= static_cast<double>(x.c);
        for (int64_t c = 0; c < x.c; ++c) var += std::pow(x.at(w, z, r, c) - mean, 2);
        var /= static_cast<double>(x.c);
        for (int64_t c = 0; c < x.c; ++c) {
          const double want = (x.at(w, z, r, c) - mean) / std::sqrt(var + eps);
          worst = std::max(worst, std::fabs(out.at(w, z, r, c) - want));
        }
      }
  CHECK(worst <= 1e-4);
}

// ---------------------------------------------------------------- dest and intermediates
TEST_CASE("fused dest chains and intermediate buffers", "[fused]") {
  const std::string f32x2 = "[Float32, Float32]";

  SECTION("values flow through dest and an intermediate that is read twice") {
    const std::string fused = fusedText(2, 1, {
        sub("a", "type: add, inputs: [input0, input1], mblock: [1, 1], ublock: [1, 1], output: dest") +
        sub("b", "type: multiply, inputs: [dest, input1], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
        sub("c", "type: subtract, inputs: [intermed0, input0], mblock: [1, 1], ublock: [1, 1], output: dest") +
        sub("d", "type: add, inputs: [dest, intermed0], pop: [intermed0], mblock: [1, 1], ublock: [1, 1], "
                 "output: output"),
    });
    Parsed p = parse(netlistText(opFields(1, "[1, 1]", "[1, 1]", f32x2, "Float32", "Float32", "Float32"), 2, fused));
    // Entry 0: x = 2, y = 3: a = 5, b = 5*3 = 15, c = 15-2 = 13, d = 13+15 = 28.
    // Entry 1: x = 1, y = -1: a = 0, b = 0, c = 0-1 = -1, d = -1+0 = -1.
    const Tensor x = make(2, 1, 1, 1, [](int64_t w, int64_t, int64_t, int64_t) { return w == 0 ? 2.0f : 1.0f; });
    const Tensor y = make(2, 1, 1, 1, [](int64_t w, int64_t, int64_t, int64_t) { return w == 0 ? 3.0f : -1.0f; });
    const std::vector<Tensor> inputs{x, y};
    const Tensor out = evalFusedOp(p.spec(), p.fused(), inputs);
    REQUIRE(out.sameShape(x));
    for (int64_t i = 0; i < kTile * kTile; ++i) {
      CHECK(out.data[i] == 28.0f);
      CHECK(out.data[kTile * kTile + i] == -1.0f);
    }
  }

  SECTION("dest keeps acc_df precision, intermediates are stored in intermed_df") {
    // x = 1, y = 2^-9. In Float16_b (8-bit significand) 1 + 2^-9 is a
    // quarter ulp above 1 and rounds to 1; Float32 keeps it.
    //   i: x + y -> intermed0 (Float16_b)  = 1
    //   d: x + y -> dest (acc_df)          = 1 + 2^-9 (Float32) or 1 (Float16_b)
    //   o: dest - intermed0 -> output      = 2^-9 = 0.001953125, or 0
    auto [acc, want] = GENERATE(std::pair{std::string("Float32"), 0.001953125f}, std::pair{std::string("Float16_b"), 0.0f});
    CAPTURE(acc);
    const std::string fused = fusedText(2, 1, {
        sub("i", "type: add, inputs: [input0, input1], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
        sub("d", "type: add, inputs: [input0, input1], mblock: [1, 1], ublock: [1, 1], output: dest") +
        sub("o", "type: subtract, inputs: [dest, intermed0], pop: [intermed0], mblock: [1, 1], ublock: [1, 1], "
                 "output: output"),
    });
    Parsed p = parse(netlistText(opFields(1, "[1, 1]", "[1, 1]", f32x2, acc, "Float16_b", "Float32"), 2, fused));
    const std::vector<Tensor> inputs{constant(1, 1, 1, 1, 1.0f), constant(1, 1, 1, 1, 0.001953125f)};
    const Tensor out = evalFusedOp(p.spec(), p.fused(), inputs);
    for (float v : out.data) REQUIRE(v == want);
  }

  SECTION("an intermediate is rewritten in place by the sub-op that pops it") {
    // 3 -> 3*3 = 9 -> 9*9 = 81, both squares in intermed0.
    const std::string fused = fusedText(1, 1, {
        sub("copy", "type: datacopy, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
        sub("sq1", "type: multiply, inputs: [intermed0, intermed0], pop: [intermed0], mblock: [1, 1], "
                   "ublock: [1, 1], output: intermed0") +
        sub("sq2", "type: multiply, inputs: [intermed0, intermed0], pop: [intermed0], mblock: [1, 1], "
                   "ublock: [1, 1], output: output"),
    });
    Parsed p = parse(netlistText(opFields(1, "[1, 1]", "[1, 1]", "[Float32]", "Float32", "Float32", "Float32"), 1,
                                 fused));
    const Tensor x = constant(1, 1, 1, 1, 3.0f);
    const Tensor out = evalFusedOp(p.spec(), p.fused(), std::span<const Tensor>(&x, 1));
    for (float v : out.data) REQUIRE(v == 81.0f);
  }

  SECTION("tile_broadcast r on an op input (the bert attention-mask pattern)") {
    // input2 holds 1 in row 0 of each tile and 100 elsewhere; tile_broadcast r
    // copies row 0 over the tile, so every value is exp(0.5 * 2 + 1) = e^2.
    const std::string fused = fusedText(3, 0, {
        sub("mul", "type: multiply, inputs: [input0, input1], mblock: [1, 1], ublock: [2, 1], output: dest") +
        sub("add", "type: add, inputs: [dest, input2], input_1_tms: [tile_broadcast: r], mblock: [1, 1], "
                   "ublock: [2, 1], output: dest") +
        sub("exp", "type: exp, inputs: [dest], mblock: [1, 1], ublock: [2, 1], output: output"),
    });
    Parsed p = parse(netlistText(opFields(1, "[1, 1]", "[2, 1]", "[Float32, Float32, Float32]", "Float32", "Float32",
                                          "Float32"),
                                 3, fused));
    const Tensor mask = make(1, 1, 2, 1, [](int64_t, int64_t, int64_t r, int64_t) { return r % kTile == 0 ? 1.0f : 100.0f; });
    const std::vector<Tensor> inputs{constant(1, 1, 2, 1, 0.5f), constant(1, 1, 2, 1, 2.0f), mask};
    const Tensor out = evalFusedOp(p.spec(), p.fused(), inputs);
    REQUIRE(out.r == 2 * kTile);
    for (float v : out.data) REQUIRE(v == Approx(7.38905609893).epsilon(1e-6));
  }
}

// ---------------------------------------------------------------- integer fused op
// The corpus quantize/requantize/dequantize chain (wormhole_b0
// netlist_fused_op_quant_dequant, with rounder zero points), zero_point
// written next to type. x = 2, s = 1.5, y = 3:
//   quant1: x*s + 1   = 4            -> intermed0 (Int8)
//   quant2: y*s + 2   = 6.5 -> 7     (Int8: ties away from zero)
//   add:    4 + 7     = 11           -> dest (Int32)
//   requant [s, dest]: 1.5*11 - 0.5 = 16 -> intermed0 (Int8)
//   mul:    16 * 16   = 256          -> dest
//   dequant [s, dest]: (256 - 6) * 1.5 = 375 -> output (Float32); dest is
//   the value, input 0 the scale.
TEST_CASE("fused integer chain with dequantization from dest", "[fused]") {
  const std::string one = "mblock: [1, 1], ublock: [1, 1]";
  const std::string fused = fusedText(3, 2, {
      sub("quant1", "type: quantization, inputs: [input0, input1], " + one + ", zero_point: 1, output: intermed0") +
      sub("quant2", "type: quantization, inputs: [input2, input1], " + one + ", zero_point: 2, output: intermed1") +
      sub("add", "type: add, inputs: [intermed0, intermed1], " + one + ", pop: [intermed0, intermed1], output: dest") +
      sub("requant", "type: requantization, inputs: [input1, dest], " + one + ", zero_point: -0.5, "
                     "output: intermed0") +
      sub("mul", "type: multiply, inputs: [intermed0, intermed0], " + one + ", pop: [intermed0], output: dest") +
      sub("dequant", "type: dequantization, inputs: [input1, dest], " + one + ", zero_point: 6, output: output"),
  });
  Parsed p = parse(netlistText(opFields(1, "[1, 1]", "[1, 1]", "[Float32, Float32, Float32]", "Int32", "Int8",
                                        "Float32"),
                               3, fused, "wormhole_b0"));
  const std::vector<Tensor> inputs{constant(1, 1, 1, 1, 2.0f), constant(1, 1, 1, 1, 1.5f), constant(1, 1, 1, 1, 3.0f)};
  const Tensor out = evalFusedOp(p.spec(), p.fused(), inputs);
  for (float v : out.data) REQUIRE(v == 375.0f);
}

// ---------------------------------------------------------------- per-core reduce
TEST_CASE("fused reduce over a grid-split dimension reduces each core's slice", "[fused]") {
  // Grid [1, 2]: each core holds 2 of the 4 input tile columns (64 values)
  // and reduces only those. Input: 1 in columns 0..63, 2 in 64..127, so core
  // 0 sums 64 * 1 = 64 and core 1 sums 64 * 2 = 128, each in column 0 of its
  // output tile (global columns 0 and 32).
  const std::string fused = fusedText(1, 0, {
      sub("sum", "type: reduce, inputs: [input0], attributes: {dim: c, type: sum, m_k: 1, u_kt: 2}, "
                 "mblock: [1, 1], ublock: [1, 1], output: output"),
  });
  Parsed p = parse(netlistText(opFields(1, "[1, 1]", "[1, 1]", "[Float32]", "Float32", "Float32", "Float32",
                                        "fused_op_id: 0", "[1, 2]"),
                               1, fused));
  const Tensor x = make(1, 1, 1, 4, [](int64_t, int64_t, int64_t, int64_t c) { return c < 64 ? 1.0f : 2.0f; });
  const Tensor out = evalFusedOp(p.spec(), p.fused(), std::span<const Tensor>(&x, 1));
  REQUIRE(out.c == 2 * kTile);
  REQUIRE(out.r == kTile);
  for (int64_t r = 0; r < kTile; ++r) {
    CHECK(out.at(0, 0, r, 0) == 64.0f);
    CHECK(out.at(0, 0, r, 32) == 128.0f);
  }
}

// ---------------------------------------------------------------- errors
TEST_CASE("fused op buffer misuse is a GoldenError naming the sub-op", "[fused]") {
  using Catch::Matchers::Contains;
  const std::string f = opFields(1, "[1, 1]", "[1, 1]", "[Float32]", "Float32", "Float32", "Float32");
  const Tensor x = constant(1, 1, 1, 1, 1.0f);
  auto run = [&](const std::string& fused) {
    // Invalid on purpose: the validator would reject these fused ops.
    Parsed p = parse(netlistText(f, 1, fused), false);
    return evalFusedOp(p.spec(), p.fused(), std::span<const Tensor>(&x, 1));
  };
  const std::string one = "mblock: [1, 1], ublock: [1, 1]";

  SECTION("reading a popped intermediate") {
    REQUIRE_THROWS_WITH(run(fusedText(1, 1, {
                            sub("w", "type: datacopy, inputs: [input0], " + one + ", output: intermed0") +
                            sub("p", "type: datacopy, inputs: [intermed0], pop: [intermed0], " + one + ", output: dest") +
                            sub("r", "type: add, inputs: [dest, intermed0], " + one + ", output: output")})),
                        Contains("sub-op 'r'") && Contains("intermed0") && Contains("sub-op 'p' popped"));
  }
  SECTION("reading an intermediate nothing wrote") {
    REQUIRE_THROWS_WITH(run(fusedText(1, 1, {sub("r", "type: datacopy, inputs: [intermed0], " + one + ", output: output")})),
                        Contains("sub-op 'r'") && Contains("no earlier sub-op writes"));
  }
  SECTION("reading dest the sub-op before did not write") {
    REQUIRE_THROWS_WITH(run(fusedText(1, 1, {
                            sub("d", "type: datacopy, inputs: [input0], " + one + ", output: dest") +
                            sub("i", "type: datacopy, inputs: [dest], " + one + ", output: intermed0") +
                            sub("r", "type: add, inputs: [dest, intermed0], pop: [intermed0], " + one + ", output: output")})),
                        Contains("sub-op 'r'") && Contains("dest was written by sub-op 'd'"));
  }
  SECTION("dest does not survive a schedule boundary") {
    REQUIRE_THROWS_WITH(run(fusedText(1, 0, {sub("d", "type: datacopy, inputs: [input0], " + one + ", output: dest"),
                                             sub("r", "type: exp, inputs: [dest], " + one + ", output: output")})),
                        Contains("sub-op 'r'") && Contains("reads dest"));
  }
  SECTION("overwriting an intermediate that was not popped") {
    REQUIRE_THROWS_WITH(run(fusedText(1, 1, {
                            sub("a", "type: datacopy, inputs: [input0], " + one + ", output: intermed0") +
                            sub("b", "type: exp, inputs: [input0], " + one + ", output: intermed0")})),
                        Contains("sub-op 'b'") && Contains("still holds the data written by sub-op 'a'"));
  }
  SECTION("an intermediate never popped") {
    REQUIRE_THROWS_WITH(run(fusedText(1, 1, {
                            sub("a", "type: datacopy, inputs: [input0], " + one + ", output: intermed0") +
                            sub("b", "type: exp, inputs: [intermed0], " + one + ", output: output")})),
                        Contains("intermed0 written by sub-op 'a' is never popped"));
  }
  SECTION("no sub-op writes the output") {
    REQUIRE_THROWS_WITH(run(fusedText(1, 0, {sub("a", "type: exp, inputs: [input0], " + one + ", output: dest")})),
                        Contains("no sub-op writes the fused op's output"));
  }
  SECTION("an input the op does not have") {
    REQUIRE_THROWS_WITH(run(fusedText(2, 0, {sub("a", "type: add, inputs: [input0, input1], " + one + ", output: output")})),
                        Contains("sub-op 'a'") && Contains("reads input1 but the op has 1 input(s)"));
  }
  SECTION("a TM fused ops do not support") {
    REQUIRE_THROWS_WITH(run(fusedText(1, 0, {sub("a", "type: exp, inputs: [input0], input_0_tms: [transpose], " + one +
                                                          ", output: output")})),
                        Contains("sub-op 'a'") && Contains("transpose"));
  }
  SECTION("an op type that cannot be fused") {
    REQUIRE_THROWS_WITH(run(fusedText(1, 0, {sub("a", "type: splice, inputs: [input0], " + one + ", output: output")})),
                        Contains("sub-op 'a'") && Contains("cannot be fused"));
  }
}
