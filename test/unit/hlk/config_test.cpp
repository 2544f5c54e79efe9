// Unit tests of the kernel configuration of net2hlks (lib/hlk/config.cpp,
// emit.cpp): the values of the args header and the operand contract of each
// template family, for small netlists written here. Expected values are
// worked out by hand in the comments.
#include "hlk_test_util.hpp"

#include "hlk/driver.hpp"

#include <catch2/catch.hpp>

using namespace tessera;
using namespace tessera::hlk;
using namespace hlktest;
using netlist::DataFormat;
using netlist::Dim2;
using netlist::MathFidelity;
using netlist::UblockOrder;

namespace {

// One graph `g` with the given queues and ops, programs that execute it.
std::string netlistText(const std::string& queues, const std::string& ops, const std::string& arch = "grayskull",
                    int inputCount = 1) {
  return "devices:\n  arch: " + arch + "\nqueues:\n" + queues +
         "graphs:\n  g:\n    target_device: 0\n    input_count: " + std::to_string(inputCount) + "\n" + ops +
         "programs:\n  - run:\n    - execute: {graph_name: g}\n";
}

const std::string kFormats =
    "in_df: [Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, math_fidelity: HiFi3";

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

} // namespace

TEST_CASE("Layout::index walks ublocks in ublock order, tiles row-major", "[hlk]") {
  // mblock 2x3 of 2x2 ublocks. Tile (3, 2) is in ublock (1, 1), at (1, 0) inside it.
  Layout r{1, {2, 3}, {2, 2}, UblockOrder::R};
  CHECK(r.index(3, 2) == (1 * 3 + 1) * 4 + 1 * 2 + 0); // 18
  CHECK(r.index(0, 0) == 0);
  CHECK(r.index(0, 5) == 2 * 4 + 1); // ublock (0, 2), tile (0, 1)
  Layout c{1, {2, 3}, {2, 2}, UblockOrder::C};
  CHECK(c.index(3, 2) == (1 * 2 + 1) * 4 + 2); // ublock index 3 in column-major order: 14
  CHECK(c.index(0, 5) == (2 * 2 + 0) * 4 + 1); // 17
  CHECK(r.blockTiles() == 24);
  CHECK(r.rowTiles() == 4);
  CHECK(r.colTiles() == 6);
}

TEST_CASE("unary SFPU op: the op's blocking on input and output", "[hlk]") {
  auto l = load(netlistText(
      queue("in0", "HOST", "t: 2, mblock: [2, 2], ublock: [1, 2]", "Float16_b", 1) +
          queue("out", "e0", "t: 2, mblock: [2, 2], ublock: [1, 2]", "Float16_b", 2),
      "    e0: {type: exp, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], " + kFormats +
          ", t: 2, mblock: [2, 2], ublock: [1, 2], ublock_order: c}\n"));
  auto c = configure(l, "e0");
  REQUIRE(c->config);
  const KernelConfig& k = *c->config;
  CHECK(k.family == Family::Unary);
  CHECK(k.unary.sfpu);
  CHECK(k.unary.func == contract::kSfpuExp);
  CHECK_FALSE(k.unary.transposeIn0);
  CHECK(k.common.t == 2);
  CHECK(k.common.mblock == Dim2{2, 2});
  CHECK(k.common.ublock == Dim2{1, 2});
  CHECK(k.common.order == UblockOrder::C);
  CHECK(k.common.fidelity == MathFidelity::HiFi3);
  CHECK(k.common.destFormat == DataFormat::Float16_b);
  CHECK(k.common.reluMode == 0);
  REQUIRE(k.operands.size() == 2);
  const OperandInfo& in = operand(k, 0);
  CHECK(in.role == OperandRole::Input);
  CHECK(in.source == "in0");
  CHECK(*in.layout == Layout{2, {2, 2}, {1, 2}, UblockOrder::C});
  CHECK(in.minTiles == 2); // one ublock
  const OperandInfo& out = operand(k, 16);
  CHECK(out.role == OperandRole::Output);
  CHECK(*out.layout == Layout{2, {2, 2}, {1, 2}, UblockOrder::C});
  CHECK(out.minTiles == 2);

  KernelText text = renderKernel(k);
  CHECK(contains(text.argsHeader, "constexpr int kT = 2;"));
  CHECK(contains(text.argsHeader, "constexpr bool kUblockOrderR = false;"));
  CHECK(contains(text.argsHeader, "constexpr int kUblockTiles = 2;"));
  CHECK(contains(text.argsHeader, "constexpr int kMblockUblocks = 4;"));
  CHECK(contains(text.argsHeader, "constexpr FidelityCode kMathFidelity = kHiFi3;"));
  CHECK(contains(text.argsHeader, "constexpr SfpuFunc kSfpuFunc = kSfpuExp;"));
  CHECK(contains(text.argsHeader, "constexpr uint32_t kInputCount = 1;"));
  CHECK(contains(text.source, "hlk_copy_tile_to_dst(0, d, d, kTransposeIn0);"));
  // The args header names no op: identical configurations give identical files.
  CHECK_FALSE(contains(text.argsHeader, "e0"));
}

TEST_CASE("nop with a transpose TM transposes on unpack; power and lrelu parameters", "[hlk]") {
  auto l = load(netlistText(
      queue("in0", "HOST", "t: 1, mblock: [1, 1], ublock: [2, 1]", "Float16_b", 1) +
          queue("out", "n0", "t: 1, mblock: [1, 1], ublock: [1, 2]", "Float16_b", 2) +
          queue("out2", "p0", "t: 1, mblock: [1, 1], ublock: [2, 1]", "Float16_b", 3) +
          queue("out3", "l0", "t: 1, mblock: [1, 1], ublock: [2, 1]", "Float16_b", 4),
      "    n0: {type: nop, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], input_0_tms: [transpose], " + kFormats +
          ", t: 1, mblock: [1, 1], ublock: [1, 2]}\n"
          "    p0: {type: power, grid_loc: [0, 1], grid_size: [1, 1], inputs: [in0], " + kFormats +
          ", t: 1, mblock: [1, 1], ublock: [2, 1], attributes: {exp: 3}}\n"
          "    l0: {type: lrelu, grid_loc: [0, 2], grid_size: [1, 1], inputs: [in0], " + kFormats +
          ", t: 1, mblock: [1, 1], ublock: [2, 1], attributes: {slope: 0.5}}\n"));
  auto n = configure(l, "n0");
  REQUIRE(n->config);
  CHECK_FALSE(n->config->unary.sfpu);
  CHECK(n->config->unary.transposeIn0);
  auto p = configure(l, "p0");
  REQUIRE(p->config);
  CHECK(p->config->unary.func == contract::kSfpuPower);
  CHECK(p->config->unary.param == 3);
  auto r = configure(l, "l0");
  REQUIRE(r->config);
  CHECK(r->config->unary.func == contract::kSfpuLrelu);
  CHECK(r->config->unary.param == 0x3F000000u); // 0.5f
}

TEST_CASE("binary op: tile_broadcast of input 1; transpose on binary input 1 is rejected", "[hlk]") {
  auto l = load(netlistText(
      queue("a", "HOST", "t: 1, mblock: [1, 1], ublock: [2, 2]", "Float16_b", 1) +
          queue("b", "HOST", "t: 1, mblock: [1, 1], ublock: [2, 2]", "Float16_b", 2) +
          queue("o1", "add0", "t: 1, mblock: [1, 1], ublock: [2, 2]", "Float16_b", 3) +
          queue("o2", "sub0", "t: 1, mblock: [1, 1], ublock: [2, 2]", "Float16_b", 4),
      "    add0: {type: add, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a, b], input_1_tms: [tile_broadcast: c], "
      "in_df: [Float16_b, Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, "
      "math_fidelity: HiFi4, t: 1, mblock: [1, 1], ublock: [2, 2], attributes: {relu_en: true}}\n"
      "    sub0: {type: subtract, grid_loc: [0, 1], grid_size: [1, 1], inputs: [a, b], input_1_tms: [transpose], "
      "in_df: [Float16_b, Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, "
      "math_fidelity: HiFi4, t: 1, mblock: [1, 1], ublock: [2, 2]}\n"));
  auto add = configure(l, "add0");
  REQUIRE(add->config);
  CHECK(add->config->family == Family::Binary);
  CHECK(add->config->binary.op == contract::kEltAdd);
  CHECK(add->config->binary.bcastIn1 == contract::kBcastCol);
  CHECK(add->config->common.reluMode == 1); // relu_en, mode min by default, threshold 0
  CHECK(add->config->common.reluThresholdBits == 0);
  CHECK(operand(*add->config, 1).minTiles == 4);
  auto sub = configure(l, "sub0");
  CHECK_FALSE(sub->config);
  REQUIRE(sub->diags.errorCount() == 1);
  const Diagnostic& d = sub->diags.diagnostics()[0];
  CHECK(d.rule == "hlk-unsupported-feature");
  // (Input 0 is transposed on its copy to dest: special_ops_test.cpp.)
  CHECK(contains(d.message, "op 'sub0' in graph 'g' (subtract): a transpose TM on input 1 is not supported by net2hlks yet"));
}

TEST_CASE("matmul: m_k/u_kt blocks, spill, bias, relu, transpose of input 1", "[hlk]") {
  // Output 4x2 tiles (mblock [2, 2] x ublock [2, 1]); inner dimension
  // m_k * u_kt = 2 * 3 = 6 tiles. Input 1 is 2x6 tiles before its transpose.
  auto l = load(netlistText(
      queue("a", "HOST", "t: 1, mblock: [2, 3], ublock: [2, 2]", "Float16_b", 1) +
          queue("w", "HOST", "t: 1, mblock: [1, 3], ublock: [2, 2]", "Bfp8_b", 2) +
          queue("bias", "HOST", "t: 1, mblock: [2, 1], ublock: [2, 2]", "Float16_b", 3) +
          queue("out", "mm", "t: 1, mblock: [2, 1], ublock: [2, 2]", "Float16_b", 4),
      "    mm: {type: matmul, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a, w, bias], input_1_tms: [transpose], "
      "in_df: [Float16_b, Bfp8_b, Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, "
      "math_fidelity: LoFi, t: 1, mblock: [2, 2], ublock: [2, 1], ublock_order: c, "
      "attributes: {m_k: 2, u_kt: 3, bias: true, relu_en: true, relu_mode: max, relu_threshold: 0.5}}\n"));
  auto c = configure(l, "mm");
  REQUIRE(c->config);
  const KernelConfig& k = *c->config;
  CHECK(k.family == Family::Matmul);
  CHECK(k.matmul.mK == 2);
  CHECK(k.matmul.uKt == 3);
  CHECK(k.matmul.accumulateZ == 1);
  CHECK(k.matmul.bias);
  CHECK(k.matmul.biasBcast == contract::kBcastRow); // float matmul: row 0 of each bias tile
  CHECK(k.matmul.transposeIn1);
  CHECK(k.matmul.spill); // m_k > 1
  CHECK_FALSE(k.matmul.sfpu);
  CHECK(k.common.reluMode == 2);
  CHECK(k.common.reluThresholdBits == 0x3F000000u);
  CHECK(k.common.fidelity == MathFidelity::LoFi);
  // in0 per m_k block: the 2 ublock rows of [2 x u_kt=3] tiles, column-major over [m=2, m_k=2].
  CHECK(*operand(k, 0).layout == Layout{1, {2, 2}, {2, 3}, UblockOrder::C});
  CHECK(operand(k, 0).minTiles == 2 * 2 * 3);
  CHECK(operand(k, 0).df == DataFormat::Float16_b);
  // in1 per m_k block: 2 ublocks of [u_kt=3 x 1] tiles, row-major over [m_k=2, n=2].
  CHECK(*operand(k, 1).layout == Layout{1, {2, 2}, {3, 1}, UblockOrder::R});
  CHECK(operand(k, 1).minTiles == 3 * 2 * 1);
  CHECK(operand(k, 1).df == DataFormat::Bfp8_b);
  // bias: the output's blocking.
  CHECK(*operand(k, 2).layout == Layout{1, {2, 2}, {2, 1}, UblockOrder::C});
  CHECK(operand(k, 2).minTiles == 2);
  // Spill: all 2*2*2*1 = 8 output tiles' partial sums.
  CHECK(operand(k, 24).role == OperandRole::Spill);
  CHECK(operand(k, 24).minTiles == 8);
  CHECK(operand(k, 24).df == DataFormat::Float16_b);

  KernelText text = renderKernel(k);
  CHECK(contains(text.argsHeader, "constexpr int kIn0BlockTiles = 12;"));
  CHECK(contains(text.argsHeader, "constexpr int kIn1BlockTiles = 6;"));
  CHECK(contains(text.argsHeader, "constexpr uint32_t kReluMode = 2;"));
  CHECK(contains(text.argsHeader, "constexpr uint32_t kReluThreshold = 0x3F000000u;"));
  CHECK(contains(text.argsHeader, "constexpr bool kTransposeIn1 = true;"));
  CHECK(contains(text.argsHeader, "constexpr DataFormatCode kInFormat[3] = {kFloat16_b, kBfp8_b, kFloat16_b};"));
  CHECK(contains(text.source, "hlk_mm_tile(0, 1, (ubR * kUblockR + h) * kUKt + k, (ubC * kUKt + k) * kUblockC + w,"));
}

TEST_CASE("matmul accumulate over z, sfpu_op; sparse and requant matmuls are rejected", "[hlk]") {
  auto l = load(netlistText(
      queue("a", "HOST", "t: 4, mblock: [1, 1], ublock: [1, 2]", "Float16_b", 1) +
          queue("w", "HOST", "t: 4, mblock: [1, 1], ublock: [2, 1]", "Float16_b", 2) +
          queue("out", "mm", "t: 2, mblock: [1, 1], ublock: [1, 1]", "Float16_b", 3),
      "    mm: {type: matmul, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a, w], "
      "in_df: [Float16_b, Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, "
      "math_fidelity: HiFi4, t: 2, mblock: [1, 1], ublock: [1, 1], "
      "attributes: {m_k: 1, u_kt: 2, accumulate: true, z: 2, sfpu_op: gelu}}\n"));
  auto c = configure(l, "mm");
  REQUIRE(c->config);
  const KernelConfig& k = *c->config;
  CHECK(k.matmul.accumulateZ == 2);
  CHECK(k.matmul.spill); // partial sums cross t slices
  CHECK(k.matmul.sfpu);
  CHECK(k.matmul.func == contract::kSfpuGelu);
  CHECK(operand(k, 0).layout->t == 4); // 2 output t x 2 accumulated slices
  CHECK(operand(k, 16).layout->t == 2);
  CHECK(operand(k, 24).minTiles == 1);

  auto sparse = load(netlistText(
      queue("a", "HOST", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Float16_b", 1) +
          queue("w", "HOST", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Float16_b", 2) +
          queue("out", "mm", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Float16_b", 3),
      "    mm: {type: matmul, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a, w], "
      "in_df: [Float16_b, Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, "
      "math_fidelity: HiFi4, t: 1, mblock: [1, 1], ublock: [1, 1], "
      "attributes: {m_k: 1, u_kt: 1, identity: true, num_sparse_tiles: 1, num_index_tiles: 1, sparse_tile_ptr_bits: 8}}\n"),
      false);
  auto s = configure(sparse, "mm");
  CHECK_FALSE(s->config);
  CHECK(s->diags.hasRule("hlk-unsupported-feature"));
}

TEST_CASE("reduce over c and r: the input's blocking from m_k/u_kt or from its shape; avg scale", "[hlk]") {
  auto l = load(netlistText(
      queue("q0", "HOST", "t: 1, mblock: [2, 2], ublock: [2, 2]", "Float16", 1) +
          queue("q1", "HOST", "t: 1, mblock: [3, 1], ublock: [1, 2]", "Float16", 2) +
          queue("o0", "rc", "t: 1, mblock: [2, 1], ublock: [2, 1]", "Float16", 3) +
          queue("o1", "rr", "t: 1, mblock: [1, 1], ublock: [1, 2]", "Float16", 4),
      "    rc: {type: reduce, grid_loc: [0, 0], grid_size: [1, 1], inputs: [q0], in_df: [Float16], acc_df: Float16, "
      "out_df: Float16, intermed_df: Float16, math_fidelity: HiFi3, t: 1, mblock: [2, 1], ublock: [2, 1], "
      "attributes: {dim: c, type: max, m_k: 2, u_kt: 2}}\n"
      "    rr: {type: reduce, grid_loc: [0, 1], grid_size: [1, 1], inputs: [q1], in_df: [Float16], acc_df: Float16, "
      "out_df: Float16, intermed_df: Float16, math_fidelity: HiFi3, t: 1, mblock: [1, 1], ublock: [1, 2], "
      "attributes: {dim: r, type: avg}}\n"));
  auto c = configure(l, "rc");
  REQUIRE(c->config);
  const KernelConfig& k = *c->config;
  CHECK(k.family == Family::Reduce);
  CHECK_FALSE(k.reduce.overZ);
  CHECK(k.reduce.dim == contract::kReduceCols);
  CHECK(k.reduce.type == contract::kReduceMax);
  CHECK(k.reduce.scaleBits == 0x3F800000u);
  // Per output ublock row: m_k=2 ublocks of [2 x u_kt=2] along the row, row-major.
  CHECK(*operand(k, 0).layout == Layout{1, {2, 2}, {2, 2}, UblockOrder::R});
  CHECK(operand(k, 0).minTiles == 4);
  CHECK(contains(renderKernel(k).argsHeader, "constexpr int kInUblockTiles = 4;"));

  auto r = configure(l, "rr");
  REQUIRE(r->config);
  const KernelConfig& kr = *r->config;
  CHECK(kr.reduce.dim == contract::kReduceRows);
  CHECK(kr.reduce.type == contract::kReduceSum);
  // No m_k/u_kt: the 3 input tile rows as m_k = 3 blocks of one tile; avg
  // scales by 1 / (3 * 32) = 0x3C2AAAAB as float32.
  CHECK(kr.reduce.mK == 3);
  CHECK(kr.reduce.uKt == 1);
  CHECK(kr.reduce.scaleBits == 0x3C2AAAABu);
  // Per output ublock column: 3 ublocks of [1 x 2] going down, column-major over [3, 1].
  CHECK(*operand(kr, 0).layout == Layout{1, {3, 1}, {1, 2}, UblockOrder::C});
}

TEST_CASE("reduce over z spills between slices; avg over z is rejected", "[hlk]") {
  auto l = load(netlistText(
      queue("q0", "HOST", "t: 6, mblock: [1, 2], ublock: [1, 1]", "Float16_b", 1) +
          queue("o0", "rz", "t: 2, mblock: [1, 2], ublock: [1, 1]", "Float16_b", 2) +
          queue("o1", "ra", "t: 2, mblock: [1, 2], ublock: [1, 1]", "Float16_b", 3),
      "    rz: {type: reduce, grid_loc: [0, 0], grid_size: [1, 1], inputs: [q0], " + kFormats +
          ", t: 2, mblock: [1, 2], ublock: [1, 1], attributes: {dim: z, type: sum, z: 3}}\n"
          "    ra: {type: reduce, grid_loc: [0, 1], grid_size: [1, 1], inputs: [q0], " + kFormats +
          ", t: 2, mblock: [1, 2], ublock: [1, 1], attributes: {dim: z, type: avg, z: 3}}\n"));
  auto c = configure(l, "rz");
  REQUIRE(c->config);
  CHECK(c->config->reduce.overZ);
  CHECK(c->config->reduce.z == 3);
  CHECK(operand(*c->config, 0).layout->t == 6);
  CHECK(operand(*c->config, 24).minTiles == 2); // the whole block of partial results
  auto a = configure(l, "ra");
  CHECK_FALSE(a->config);
  CHECK(a->diags.hasRule("hlk-unsupported-feature"));
}

TEST_CASE("topk: rows of m_k x u_kt tiles in, ceil(k/32) tiles out, two scratch intermediates", "[hlk]") {
  const std::string in = "t: 1, mblock: [2, 4], ublock: [1, 2]";
  auto l = load(netlistText(queue("v", "HOST", in, "Bfp8_b", 1) + queue("ix", "HOST", in, "UInt16", 3) +
                                queue("out", "k0", "t: 1, mblock: [2, 1], ublock: [1, 2]", "UInt16", 2) +
                                queue("out2", "k1", "t: 1, mblock: [2, 1], ublock: [1, 1]", "Float16_b", 4),
                            "    k0: {type: topk, grid_loc: [0, 0], grid_size: [1, 1], inputs: [v, ix], in_df: "
                            "[Bfp8_b, UInt16], out_df: UInt16, intermed_df: Float16_b, acc_df: Float16_b, "
                            "math_fidelity: HiFi3, t: 1, mblock: [2, 1], ublock: [1, 2], "
                            "attributes: {m_k: 4, u_kt: 2, k: 64, sort: argmax}}\n"
                            "    k1: {type: topk, grid_loc: [1, 0], grid_size: [1, 1], inputs: [v, ix], in_df: "
                            "[Bfp8_b, UInt16], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, "
                            "math_fidelity: HiFi3, t: 1, mblock: [2, 1], ublock: [1, 1], "
                            "attributes: {m_k: 4, u_kt: 2, k: 64, sort: max}}\n",
                            "wormhole_b0"));
  auto c = configure(l, "k0");
  REQUIRE(c->config);
  const KernelConfig& k = *c->config;
  CHECK(k.family == Family::Topk);
  CHECK(k.topk.k == 64);
  CHECK_FALSE(k.topk.values);
  CHECK_FALSE(k.topk.kreduce);
  CHECK(k.topk.tiles == 8);    // m_k 4 x u_kt 2
  CHECK(k.topk.outTiles == 2); // 64 values
  CHECK(k.common.destFormat == DataFormat::Float32); // indices up to 255 and beyond stay exact
  // Each input row: 4 ublocks of [1 x 2] tiles along the row, per mblock row.
  CHECK(*operand(k, 0).layout == Layout{1, {2, 4}, {1, 2}, UblockOrder::R});
  CHECK(operand(k, 0).minTiles == 2);
  CHECK(*operand(k, 1).layout == Layout{1, {2, 4}, {1, 2}, UblockOrder::R});
  // Scratch: a whole row of values (Bfp8_b is kept as Float32: sorting moves
  // values between shared-exponent blocks) and of indices.
  CHECK(operand(k, 24).role == OperandRole::Intermediate);
  CHECK(operand(k, 24).minTiles == 8);
  CHECK(operand(k, 24).df == DataFormat::Float32);
  CHECK(operand(k, 25).minTiles == 8);
  CHECK(operand(k, 25).df == DataFormat::UInt16);
  const KernelText text = renderKernel(k);
  CHECK(contains(text.argsHeader, "constexpr int kTopkTiles = 8;"));
  CHECK(contains(text.source, "topk_kernel::topk_row<kTopkK, kTopkTiles, kTopkKreduce, kTopkValues, kTopkOutTiles>"));

  // k = 64 needs two output tile columns: one is an error naming the blocking.
  auto bad = configure(l, "k1");
  CHECK_FALSE(bad->config);
  CHECK(bad->diags.hasRule("hlk-unsupported-feature"));
}

TEST_CASE("embedding: the table resident (all rows, the core's columns), one index tile per core row", "[hlk]") {
  auto l = load(netlistText(queue("table", "HOST", "t: 1, mblock: [4, 2], ublock: [1, 2]", "Float16_b", 1) +
                                queue("x", "HOST", "t: 1, mblock: [2, 1], ublock: [1, 1]", "RawUInt32", 3) +
                                queue("out", "e0", "t: 1, mblock: [4, 2], ublock: [1, 2]", "Float16_b", 2),
                            "    e0: {type: embedding, grid_loc: [0, 0], grid_size: [2, 2], inputs: [table, x], in_df: "
                            "[Float16_b, RawUInt32], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, "
                            "math_fidelity: HiFi3, t: 1, mblock: [2, 1], ublock: [1, 2], attributes: {num_indices: 64}}\n",
                            "wormhole_b0"));
  auto c = configure(l, "e0");
  REQUIRE(c->config);
  const KernelConfig& k = *c->config;
  CHECK(k.family == Family::Embedding);
  CHECK(k.embedding.numIndices == 64);
  CHECK(k.embedding.tableRows == 4); // 4 tile rows: 128 table rows
  CHECK(k.embedding.tableCols == 2); // the table's 4 tile columns over 2 grid columns
  CHECK(k.common.destFormat == DataFormat::Float32);
  CHECK(*operand(k, 0).layout == Layout{1, {4, 1}, {1, 2}, UblockOrder::R});
  CHECK(operand(k, 0).minTiles == 8); // resident: 4 x 2 tiles
  CHECK(*operand(k, 1).layout == Layout{1, {1, 1}, {1, 1}, UblockOrder::R});
  CHECK(operand(k, 1).minTiles == 1);
}

TEST_CASE("op types net2hlks does not implement are named in the diagnostic", "[hlk]") {
  auto l = load(netlistText(queue("in0", "HOST", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Float16_b", 1) +
                                queue("ix", "HOST", "t: 1, mblock: [1, 1], ublock: [1, 1]", "RawUInt32", 3) +
                                queue("out", "d0", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Float16_b", 2),
                            "    d0: {type: buffer, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], in_df: "
                            "[Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, "
                            "math_fidelity: HiFi3, t: 1, mblock: [1, 1], ublock: [1, 1]}\n",
                            "wormhole_b0"));
  auto c = configure(l, "d0");
  CHECK_FALSE(c->config);
  REQUIRE(c->diags.errorCount() == 1);
  CHECK(c->diags.diagnostics()[0].rule == "hlk-unsupported-op");
  CHECK(c->diags.diagnostics()[0].message ==
        "op 'd0' in graph 'g': op type 'buffer' is not supported by net2hlks yet");
  CHECK(c->diags.diagnostics()[0].loc.line == 11); // the line of d0 (its type)
}

TEST_CASE("content hash: 16 hex digits, depends on both files and where they split", "[hlk]") {
  KernelText a{"header", "source"};
  std::string h = contentHash(a);
  CHECK(h.size() == 16);
  CHECK(h.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(contentHash(a) == h);
  CHECK(contentHash(KernelText{"header", "sourcE"}) != h);
  CHECK(contentHash(KernelText{"headers", "ource"}) != h);
}

TEST_CASE("splice: ranges, rounds and each input's blocking", "[hlk]") {
  // a: 2x6 tiles per t = 6 ublocks of [1, 2] (mblock [2, 3]); b: 2 ublocks.
  // Output mblock [2, 2] = 4 ublocks per t; a gives [1, 1, 2] (drop 1, copy 1,
  // 3 per round), b [0, 1, 1]: 2 units per round, so 2 rounds per t, which
  // consume a's 6 and b's 2 ublocks exactly.
  auto l = load(netlistText(
      queue("a", "HOST", "t: 2, mblock: [2, 3], ublock: [1, 2]", "Float16_b", 1) +
          queue("b", "HOST", "t: 2, mblock: [2, 1], ublock: [1, 2]", "Float16_b", 2) +
          queue("o", "su", "t: 2, mblock: [2, 2], ublock: [1, 2]", "Float16_b", 3),
      "    su: {type: splice, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a, b], in_df: [Float16_b, Float16_b], "
      "out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, math_fidelity: HiFi4, t: 2, mblock: [2, 2], "
      "ublock: [1, 2], ublock_order: c, attributes: {input0: [1, 1, 2], input1: [0, 1, 1]}}\n"));
  auto c = configure(l, "su");
  REQUIRE(c->config);
  const KernelConfig& k = *c->config;
  CHECK(k.family == Family::Splice);
  CHECK_FALSE(k.splice.tGranularity);
  REQUIRE(k.splice.inputs.size() == 2);
  CHECK(k.splice.inputs[0].index == 1);
  CHECK(k.splice.inputs[0].stride == 2);
  CHECK(k.splice.rounds == 2);
  CHECK(k.splice.passes == 2);
  CHECK(k.splice.unitUblocks == 1);
  CHECK(*operand(k, 0).layout == Layout{2, {2, 3}, {1, 2}, UblockOrder::C});
  CHECK(*operand(k, 1).layout == Layout{2, {2, 1}, {1, 2}, UblockOrder::C});
  CHECK(contains(renderKernel(k).argsHeader, "constexpr int kSpliceIndex[2] = {1, 0};"));
}

TEST_CASE("matmul gradient_op: partial sums in place only where they do not fit L1", "[hlk][gradient]") {
  // Grayskull: 917504 bytes of L1 for data, a Float16_b tile 2080 bytes.
  // m_k 2, u_kt 1, ublock [1, 1], mblock [r, c]: the gradient block and the
  // partial sums r x c tiles each, input 0 r tiles, input 1 c tiles.
  //   [10, 20]: 2 x 200 + 10 + 20 = 430 tiles = 894400 bytes: fits, spill.
  //   [10, 21]: 2 x 210 + 10 + 21 = 451 tiles = 938080 bytes: in place.
  auto text = [](int r, int c, const std::string& attrs) {
    const std::string rs = std::to_string(r), cs = std::to_string(c);
    return netlistText(queue("a", "HOST", "t: 1, mblock: [" + rs + ", 2], ublock: [1, 1]", "Float16_b", 1) +
                           queue("w", "HOST", "t: 1, mblock: [2, " + cs + "], ublock: [1, 1]", "Float16_b", 2) +
                           "  g: {type: ram, input: mm, entries: 1, grid_size: [1, 1], t: 1, mblock: [" + rs + ", " + cs +
                           "], ublock: [1, 1], df: Float16_b, target_device: 0, loc: dram, dram: [[0, 0x03000000]]}\n",
                       "    mm: {type: matmul, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a, w], gradient_op: true, "
                       "in_df: [Float16_b, Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, "
                       "math_fidelity: HiFi4, t: 1, mblock: [" + rs + ", " + cs + "], ublock: [1, 1], ublock_order: r, "
                       "attributes: {m_k: 2, u_kt: 1" + attrs + "}}\n");
  };
  auto fits = load(text(10, 20, ""));
  auto f = configure(fits, "mm");
  REQUIRE(f->config);
  CHECK(f->config->matmul.spill);
  CHECK_FALSE(f->config->matmul.partialsInPlace);
  // The gradient block is BUDA's accumulator operand 24; the spill moves up.
  CHECK(operand(*f->config, 24).role == OperandRole::Output);
  CHECK(operand(*f->config, 25).role == OperandRole::Spill);
  CHECK(f->config->outputOperand() == 24);
  CHECK(f->config->spillOperand() == 25);
  CHECK(hlk::gradientPartialsInPlace(fits.nl, fits.target()).empty());

  auto big = load(text(10, 21, ""));
  auto b = configure(big, "mm");
  REQUIRE(b->config);
  CHECK_FALSE(b->config->matmul.spill);
  CHECK(b->config->matmul.partialsInPlace);
  for (const auto& o : b->config->operands) CHECK(o.role != OperandRole::Spill);
  CHECK(b->config->spillOperand() == -1);
  CHECK(contains(renderKernel(*b->config).argsHeader, "constexpr int kOutputOperand = 24;"));
  KernelText k = renderKernel(*b->config);
  CHECK(contains(k.argsHeader, "constexpr bool kSpill = false;"));
  CHECK(contains(k.source, "pack_gradient_partial<kUblockTiles, kMblockUblocks>(t, ub);"));
  CHECK(hlk::gradientPartialsInPlace(big.nl, big.target()) == std::set<std::string>{"mm"});

  // sfpu_op needs the whole sum in dest: the partial sums keep their buffer
  // (and net2pipe reports the overflow).
  auto sfpu = load(text(10, 21, ", sfpu_op: gelu"));
  auto s = configure(sfpu, "mm");
  REQUIRE(s->config);
  CHECK(s->config->matmul.spill);
  CHECK(operand(*s->config, 25).role == OperandRole::Spill);
}
