// The op-family matrix: every kernel family net2hlks generates, run on one
// simulated core from its compiled ELFs, against lib/golden on random inputs
// (docs/testing.md, "Simulator against the reference model").
//
// Expectations: [exact] cases must match the reference bit for bit; the
// device model (docs/device-model.md, "Numerics") says which results are
// bit-exact. The reference rounds in dest where the kernel does
// (docs/golden-model.md, step 4: eltwise, SFPU input and result, matmul per
// inner tile, reduce per tile), so every case is exact except matmuls of
// Float32 data: [tolerance], the corpus netlists' tolerance (AllCloseHw atol
// 0.01, rtol 0.15, 90% of values, PCC 0.99 per tile), because the
// reference's AVX2+FMA GEMM sums in another order than the device.
#include "matrix_cases.hpp"

using namespace simgolden;

// ---------------------------------------------------------------------------
TEST_CASE("sim vs golden: datacopy and nop, bit-exact in every format", "[simgolden][datacopy]") {
  std::vector<Case> cases;
  cases.push_back({"datacopy Float16_b (grayskull, 2 entries)", unary("datacopy", "Float16_b", "Float16_b"), Expect::Exact, {-4, 4}, {}, 2});
  cases.back().op.arch = "grayskull";
  cases.back().op.inputCount = 2;
  cases.push_back({"nop Float16", unary("nop", "Float16", "Float16"), Expect::Exact, {-4, 4}});
  cases.push_back({"datacopy Float32", unary("datacopy", "Float32", "Float32"), Expect::Exact, {-1000, 1000}});
  cases.push_back({"datacopy Bfp8_b", unary("datacopy", "Bfp8_b", "Float16_b"), Expect::Exact, {-2, 2}});
  cases.push_back({"datacopy Bfp8", unary("datacopy", "Bfp8", "Float16"), Expect::Exact, {-2, 2}});
  OneOp i8 = unary("datacopy", "Int8", "Int32");
  i8.fidelity = "HiFi4";
  cases.push_back({"datacopy Int8", i8, Expect::Exact, {-127, 127}});
  cases.push_back({"datacopy Int32", unary("datacopy", "Int32", "Int32"), Expect::Exact, {-1000000, 1000000}});
  cases.push_back({"datacopy Float32 -> Bfp8_b", unary("datacopy", "Float32", "Float32", "Bfp8_b"), Expect::Exact, {-3, 3}});
  cases.push_back({"datacopy Bfp8_b -> Float16_b", unary("datacopy", "Bfp8_b", "Float16_b", "Float16_b"), Expect::Exact, {-3, 3}});
  cases.push_back({"datacopy Float16_b -> Float32", unary("datacopy", "Float16_b", "Float32", "Float32"), Expect::Exact, {-3, 3}});
  OneOp tn = unary("nop", "Float16_b", "Float16_b");
  tn.inBlock = {"t: 2, mblock: [2, 3], ublock: [1, 1]"};
  tn.inTms = {"[transpose]"};
  tn.block = "t: 2, mblock: [3, 1], ublock: [1, 2]";
  tn.ublockOrder = "c";
  cases.push_back({"nop transpose TM (t 2, ublock_order c)", tn, Expect::Exact, {-4, 4}});
  // A transpose of Bfp data: the kernel transposes the tile as stored (blocks
  // of 16 along the source's rows); the reference re-rounds the transposed
  // tensor to in_df (blocks along its own rows), which can move values. With
  // these values every block's exponent is the same either way: exact.
  OneOp tb = unary("nop", "Bfp8_b", "Float16_b");
  tb.inBlock = {"t: 1, mblock: [2, 2], ublock: [1, 1]"};
  tb.inTms = {"[transpose]"};
  tb.block = "t: 1, mblock: [1, 2], ublock: [2, 1]";
  cases.push_back({"nop transpose TM Bfp8_b", tb, Expect::Exact, {-4, 4}});
  OneOp un32 = unary("datacopy", "Float32", "Float32");
  un32.block = "t: 1, mblock: [2, 2], ublock: [1, 2], untilize_output: true";
  cases.push_back({"datacopy untilize_output Float32", un32, Expect::Exact, {-4, 4}});
  OneOp un = unary("datacopy", "Float16_b", "Float16_b");
  un.block = "t: 1, mblock: [2, 2], ublock: [1, 2], untilize_output: true";
  cases.push_back({"datacopy untilize_output Float16_b", un, Expect::Exact, {-4, 4}});
  runCases(cases);
}

// ---------------------------------------------------------------------------
TEST_CASE("sim vs golden: eltwise binary ops, formats and fidelities", "[simgolden][binary]") {
  std::vector<Case> cases;
  for (const char* type : {"add", "subtract", "multiply", "maximum"}) {
    cases.push_back({std::string(type) + " Float16_b", binary(type, "Float16_b", "Float16_b"), Expect::Exact});
    cases.push_back({std::string(type) + " Float32", binary(type, "Float32", "Float32"), Expect::Exact, {-100, 100}});
  }
  cases[0].op.arch = "grayskull";
  cases.push_back({"add Float16", binary("add", "Float16", "Float16"), Expect::Exact, {-8, 8}});
  cases.push_back({"multiply Float16 HiFi2", binary("multiply", "Float16", "Float16", "HiFi2"), Expect::Exact, {-8, 8}});
  // A Bfp output through a 16-bit dest rounds twice (dest, then the block
  // format), in the reference too.
  cases.push_back({"add Bfp8_b", binary("add", "Bfp8_b", "Float16_b"), Expect::Exact});
  cases.push_back({"maximum Bfp8", binary("maximum", "Bfp8", "Float16"), Expect::Exact});
  cases.push_back({"subtract Bfp8_b acc Float32", binary("subtract", "Bfp8_b", "Float32"), Expect::Exact});
  for (const char* f : {"LoFi", "HiFi2", "HiFi3", "HiFi4"})
    cases.push_back({std::string("multiply Float32 ") + f, binary("multiply", "Float32", "Float32", f), Expect::Exact, {-4, 4}});
  for (const char* f : {"LoFi", "HiFi3", "HiFi2_B"})
    cases.push_back({std::string("multiply Float16_b ") + f, binary("multiply", "Float16_b", "Float16_b", f), Expect::Exact, {-4, 4}});
  OneOp tbr = binary("add", "Float16_b", "Float16_b");
  tbr.inTms = {"", "[tile_broadcast: r]"};
  cases.push_back({"add tile_broadcast r", tbr, Expect::Exact});
  OneOp tbc = binary("multiply", "Float16_b", "Float16_b");
  tbc.inTms = {"", "[tile_broadcast: c]"};
  cases.push_back({"multiply tile_broadcast c", tbc, Expect::Exact});
  OneOp ia = binary("add", "Int8", "Int32");
  ia.outDf = "Int32";
  ia.intermedDf = "Int32";
  cases.push_back({"add Int8 -> Int32", ia, Expect::Exact, {-127, 127}});
  OneOp im = binary("multiply", "Int8", "Int32");
  im.outDf = "Int32";
  im.intermedDf = "Int32";
  cases.push_back({"multiply Int8 -> Int32", im, Expect::Exact, {-127, 127}});
  OneOp rmin = binary("add", "Float32", "Float32");
  rmin.attrs = "relu_en: true, relu_mode: min, relu_threshold: 0.25";
  cases.push_back({"add relu min 0.25 Float32", rmin, Expect::Exact});
  // The packer compares the dest value (rounded to Float16_b) with the
  // threshold, and so does the reference: a sum just below the threshold
  // that rounds up to it is kept.
  OneOp rmin16 = binary("add", "Float16_b", "Float16_b");
  rmin16.attrs = "relu_en: true, relu_mode: min, relu_threshold: 0.25";
  cases.push_back({"add relu min 0.25 Float16_b", rmin16, Expect::Exact});
  OneOp rmax = binary("subtract", "Float16_b", "Float16_b");
  rmax.attrs = "relu_en: true, relu_mode: max, relu_threshold: 0.5";
  cases.push_back({"subtract relu max 0.5", rmax, Expect::Exact});
  // Integers beyond 2^24: the Int32 dest adds exactly, but its values reach
  // L1 through float32 (lib/formats), as the reference's float sum does: one
  // correctly rounded result either way.
  OneOp i32 = binary("add", "Int32", "Int32");
  i32.outDf = "Int32";
  i32.intermedDf = "Int32";
  cases.push_back({"add Int32 beyond 2^24", i32, Expect::Exact, {-1000000000, 1000000000}});
  OneOp big = binary("multiply", "Float16_b", "Float16_b", "HiFi2");
  big.block = "t: 2, mblock: [2, 3], ublock: [2, 1]";
  big.ublockOrder = "c";
  cases.push_back({"multiply t 2 ublock_order c", big, Expect::Exact, {-4, 4}});
  OneOp bu = binary("add", "Float16", "Float16");
  bu.block = "t: 1, mblock: [2, 3], ublock: [2, 1], untilize_output: true";
  bu.ublockOrder = "c";
  cases.push_back({"add untilize_output ublock_order c", bu, Expect::Exact, {-4, 4}});
  runCases(cases);
}

// ---------------------------------------------------------------------------
TEST_CASE("sim vs golden: unary SFPU functions and relu", "[simgolden][unary]") {
  struct Fn {
    const char* type;
    Range range;
    const char* attrs;
  };
  const Fn fns[] = {
      {"exp", {-3, 3}, ""},          {"log", {0.01f, 8}, ""},        {"sqrt", {0, 8}, ""},
      {"reciprocal", {0.05f, 4}, ""}, {"gelu", {-4, 4}, ""},          {"gelu_derivative", {-4, 4}, ""},
      {"sigmoid", {-6, 6}, ""},      {"tanh", {-3, 3}, ""},          {"abs", {-2, 2}, ""},
      {"sine", {-4, 4}, ""},         {"cosine", {-4, 4}, ""},        {"square", {-3, 3}, ""},
      {"power", {-1.5f, 1.5f}, "exp: 3"}, {"lrelu", {-2, 2}, "slope: 0.1"}, {"relu", {-2, 2}, ""},
  };
  std::vector<Case> cases;
  for (const Fn& f : fns) {
    OneOp o = unary(f.type, "Float16_b", "Float16_b");
    o.attrs = f.attrs;
    cases.push_back({std::string(f.type) + " Float16_b", o, Expect::Exact, f.range});
  }
  cases.push_back({"exp Float32", unary("exp", "Float32", "Float32"), Expect::Exact, {-3, 3}});
  cases.push_back({"gelu Float16", unary("gelu", "Float16", "Float16"), Expect::Exact, {-4, 4}});
  cases.push_back({"tanh Float16_b (grayskull)", unary("tanh", "Float16_b", "Float16_b"), Expect::Exact, {-3, 3}});
  cases.back().op.arch = "grayskull";
  // Through a 16-bit dest: the input is rounded to it before the function
  // (Float32 in), or the result twice (Bfp out); the reference does both.
  cases.push_back({"reciprocal Float32 in, Float16_b dest", unary("reciprocal", "Float32", "Float16_b", "Float16_b"), Expect::Exact, {0.05f, 4}});
  cases.push_back({"sqrt Bfp8_b", unary("sqrt", "Bfp8_b", "Float16_b"), Expect::Exact, {0, 8}});
  cases.push_back({"sigmoid Bfp8 -> Float16", unary("sigmoid", "Bfp8", "Float16", "Float16"), Expect::Exact, {-6, 6}});
  OneOp rmax = unary("exp", "Float16_b", "Float16_b");
  rmax.attrs = "relu_en: true, relu_mode: max, relu_threshold: 2.0";
  cases.push_back({"exp relu max 2.0", rmax, Expect::Exact, {-3, 3}});
  OneOp rmin = unary("sine", "Float32", "Float32");
  rmin.attrs = "relu_en: true, relu_threshold: 0.5";
  cases.push_back({"sine Float32 relu min 0.5", rmin, Expect::Exact, {-4, 4}});
  runCases(cases);
}

// ---------------------------------------------------------------------------
TEST_CASE("sim vs golden: matmul blocking, fidelities, formats, bias, accumulate", "[simgolden][matmul]") {
  std::vector<Case> cases;
  for (const char* f : {"LoFi", "HiFi2", "HiFi3", "HiFi4"})
    cases.push_back({std::string("matmul m_k 2 u_kt 2 Float16_b ") + f, matmul(2, 2, "Float16_b", "Float16_b", f), Expect::Exact});
  cases.push_back({"matmul m_k 1 u_kt 1", matmul(1, 1, "Float16_b", "Float16_b", "HiFi4"), Expect::Exact});
  cases.push_back({"matmul m_k 1 u_kt 4", matmul(1, 4, "Float16_b", "Float16_b", "HiFi4"), Expect::Exact});
  cases.push_back({"matmul m_k 4 u_kt 1 (grayskull)", matmul(4, 1, "Float16_b", "Float16_b", "HiFi2"), Expect::Exact});
  cases.back().op.arch = "grayskull";
  // Float32 data: the reference's AVX2+FMA GEMM sums each dot product in
  // another order than the device (docs/device-model.md): last-bit differences.
  cases.push_back({"matmul Float32 HiFi4", matmul(2, 2, "Float32", "Float32", "HiFi4"), Expect::Close});
  for (const char* f : {"LoFi", "HiFi2", "HiFi3"})
    cases.push_back({std::string("matmul Float32 ") + f, matmul(2, 2, "Float32", "Float32", f), Expect::Close});
  cases.push_back({"matmul Float16 HiFi3", matmul(2, 2, "Float16", "Float16", "HiFi3"), Expect::Exact});
  OneOp bfpb = matmul(2, 2, "Bfp8_b", "Float16_b", "LoFi");
  bfpb.intermedDf = "Float16_b";
  cases.push_back({"matmul Bfp8_b LoFi", bfpb, Expect::Exact});
  OneOp bfpa = matmul(2, 1, "Bfp8", "Float16", "HiFi2");
  bfpa.outDf = "Float16";
  bfpa.intermedDf = "Float16";
  cases.push_back({"matmul Bfp8 -> Float16 HiFi2", bfpa, Expect::Exact});
  OneOp int8 = matmul(2, 2, "Int8", "Int32", "HiFi4");
  int8.outDf = "Int32";
  int8.intermedDf = "Int32";
  cases.push_back({"matmul Int8 -> Int32", int8, Expect::Exact, {-127, 127}});
  OneOp bias = matmul(2, 2, "Float16_b", "Float16_b", "HiFi3", ", bias: true");
  bias.inDf.push_back("Float16_b");
  bias.inBlock.push_back("");
  cases.push_back({"matmul bias", bias, Expect::Exact});
  OneOp biasRelu = matmul(1, 2, "Float16_b", "Float16_b", "HiFi4", ", bias: true, relu_en: true, relu_mode: min");
  biasRelu.inDf.push_back("Float16_b");
  biasRelu.inBlock.push_back("");
  cases.push_back({"matmul bias relu", biasRelu, Expect::Exact});
  // Relu on the last block only: partial sums go to the spill operand without it.
  cases.push_back({"matmul m_k 3 relu max 1.5 (spill)", matmul(3, 1, "Float16_b", "Float16_b", "HiFi4",
                                                             ", relu_en: true, relu_mode: max, relu_threshold: 1.5"),
                   Expect::Exact});
  OneOp mu = matmul(1, 2, "Float16_b", "Float16_b", "HiFi4");
  mu.block = "t: 1, mblock: [2, 2], ublock: [2, 2], untilize_output: true";
  mu.ublockOrder = "c";
  cases.push_back({"matmul u_kt 2 untilize_output", mu, Expect::Exact});
  OneOp acc2 = matmul(2, 1, "Float16_b", "Float16_b", "HiFi4", ", accumulate: true, z: 2, bias: true");
  acc2.inBlock = {"t: 2, mblock: [4, 2], ublock: [1, 1]", "t: 2, mblock: [2, 4], ublock: [1, 1]", ""};
  acc2.inDf.push_back("Float16_b");
  acc2.inputCount = 2;
  cases.push_back({"matmul accumulate z 2 + bias, 2 entries", acc2, Expect::Exact, {-1, 1}, {}, 2});
  OneOp acc = matmul(2, 1, "Float16_b", "Float16_b", "HiFi4", ", accumulate: true, z: 2");
  acc.inBlock = {"t: 2, mblock: [4, 2], ublock: [1, 1]", "t: 2, mblock: [2, 4], ublock: [1, 1]"};
  cases.push_back({"matmul accumulate z 2", acc, Expect::Exact});
  OneOp tr = matmul(2, 2, "Float16_b", "Float16_b", "HiFi4");
  tr.inBlock[1] = "t: 1, mblock: [4, 4], ublock: [1, 1]";
  tr.inTms = {"", "[transpose]"};
  cases.push_back({"matmul transpose TM on input 1", tr, Expect::Exact});
  cases.push_back({"matmul sfpu_op gelu", matmul(2, 2, "Float16_b", "Float16_b", "HiFi4", ", sfpu_op: gelu"), Expect::Exact});
  OneOp tc = matmul(3, 1, "Float16_b", "Float16_b", "HiFi2");
  tc.inBlock = {"t: 2, mblock: [4, 3], ublock: [1, 1]", "t: 2, mblock: [3, 4], ublock: [1, 1]"};
  tc.block = "t: 2, mblock: [2, 2], ublock: [2, 2]";
  tc.ublockOrder = "c";
  cases.push_back({"matmul t 2 ublock_order c", tc, Expect::Exact});
  runCases(cases);
}

// ---------------------------------------------------------------------------
TEST_CASE("sim vs golden: reduce over r, c and z", "[simgolden][reduce]") {
  std::vector<Case> cases;
  // One tile in the reduced direction: bit-exact whatever the dest.
  cases.push_back({"reduce r sum 1 tile", reduceRc("r", "sum", "Float16_b", "Float16_b", 1, 1), Expect::Exact});
  cases.push_back({"reduce c max 1 tile", reduceRc("c", "max", "Float16_b", "Float16_b", 1, 1), Expect::Exact});
  cases.push_back({"reduce r max", reduceRc("r", "max", "Float16_b", "Float16_b", 2, 2), Expect::Exact});
  cases.push_back({"reduce c max Bfp8_b", reduceRc("c", "max", "Bfp8_b", "Float16_b", 2, 1), Expect::Exact});
  // Several tiles summed in a 16-bit dest round after each tile, in the
  // reference too.
  cases.push_back({"reduce r sum Float16_b", reduceRc("r", "sum", "Float16_b", "Float16_b", 2, 2), Expect::Exact});
  cases.push_back({"reduce c sum Float16", reduceRc("c", "sum", "Float16", "Float16", 3, 1), Expect::Exact});
  cases.push_back({"reduce r sum Float32", reduceRc("r", "sum", "Float32", "Float32", 2, 2), Expect::Exact});
  cases.push_back({"reduce c avg Float32 (extent 4)", reduceRc("c", "avg", "Float32", "Float32", 2, 2), Expect::Exact});
  // avg over 3 tiles: both scale every term by 1/96 (not a power of two).
  cases.push_back({"reduce r avg Float16_b (extent 3)", reduceRc("r", "avg", "Float16_b", "Float16_b", 3, 1), Expect::Exact});
  cases.push_back({"reduce z sum Float16_b", reduceZ("sum", "Float16_b", "Float16_b"), Expect::Exact});
  cases.push_back({"reduce z max Float32", reduceZ("max", "Float32", "Float32"), Expect::Exact});
  OneOp zr = reduceZ("sum", "Float16_b", "Float16_b");
  zr.attrs += ", relu_en: true, relu_threshold: 0.5";
  zr.inputCount = 2;
  cases.push_back({"reduce z sum relu min 0.5 (spill), 2 entries", zr, Expect::Exact, {-1, 1}, {}, 2});
  OneOp zi8 = reduceZ("max", "Int8", "Int32");
  cases.push_back({"reduce z max Int8", zi8, Expect::Exact, {-127, 127}});
  runCases(cases);
}

// ---------------------------------------------------------------------------
TEST_CASE("sim vs golden: splice by ublock and by t", "[simgolden][splice]") {
  std::vector<Case> cases;
  OneOp u;
  u.type = "splice";
  u.inDf = {"Float16", "Float16"};
  u.outDf = "Float16";
  u.accDf = "Float16";
  // Per round input 0 drops 1 ublock, copies 1 and skips 1; input 1 copies 1.
  u.inBlock = {"t: 2, mblock: [2, 3], ublock: [1, 2]", "t: 2, mblock: [2, 1], ublock: [1, 2]"};
  u.block = "t: 2, mblock: [2, 2], ublock: [1, 2]";
  u.ublockOrder = "c";
  u.attrs = "input0: [1, 1, 2], input1: [0, 1, 1]";
  cases.push_back({"splice ublock (drops, ublock_order c)", u, Expect::Exact});
  OneOp t;
  t.type = "splice";
  t.inDf = {"Bfp8_b", "Bfp8_b"};
  t.outDf = "Bfp8_b";
  t.inBlock = {"t: 1, mblock: [1, 2], ublock: [2, 1]", "t: 2, mblock: [1, 2], ublock: [2, 1]"};
  t.block = "t: 3, mblock: [1, 2], ublock: [2, 1]";
  t.attrs = "granularity: t, input0: [0, 1, 1], input1: [0, 2, 2]";
  cases.push_back({"splice t Bfp8_b", t, Expect::Exact});
  runCases(cases);
}
