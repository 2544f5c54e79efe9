// Kernel configuration of the special op types (lib/hlk/config.cpp):
// depthwise, the quantization family, requant/dequant matmuls, a binary op
// with a transposed input 0, dropout, tilizer. Expected values are worked
// out by hand from the netlists in each test.
#include "hlk_test_util.hpp"

#include <catch2/catch.hpp>

using namespace tessera;
using namespace tessera::hlk;
using namespace hlktest;
using netlist::DataFormat;
using netlist::Dim2;
using netlist::MathFidelity;
using netlist::UblockOrder;

namespace {

std::string netlistText(const std::string& queues, const std::string& ops, const std::string& arch = "wormhole_b0") {
  return "devices:\n  arch: " + arch + "\nqueues:\n" + queues + "graphs:\n  g:\n    target_device: 0\n    input_count: 1\n" +
         ops + "programs:\n  - run:\n    - execute: {graph_name: g}\n";
}

bool hasRule(const DiagnosticEngine& d, const std::string& rule, const std::string& text) {
  for (const Diagnostic& x : d.diagnostics())
    if (x.rule == rule && x.message.find(text) != std::string::npos) return true;
  return false;
}

} // namespace

TEST_CASE("depthwise: m_k output-shaped blocks of input 0, one row of input 1 per block", "[hlk]") {
  // Output 4x6 tiles per t: mblock [2, 3] x ublock [2, 2]... here mblock [2, 3]
  // x ublock [1, 2] = 2x6 tiles; m_k 2: input 0 is 2x12 tiles, input 1 2x6.
  auto l = load(netlistText(
      queue("a", "HOST", "t: 1, mblock: [2, 12], ublock: [1, 1]", "Float16_b", 1) +
          queue("w", "HOST", "t: 1, mblock: [2, 6], ublock: [1, 1]", "Float16_b", 2) +
          queue("out", "dw", "t: 1, mblock: [2, 3], ublock: [1, 2]", "Float16_b", 3),
      "    dw: {type: depthwise, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a, w], in_df: [Float16_b, Float16_b], "
      "out_df: Float16_b, intermed_df: Float16, acc_df: Float16_b, math_fidelity: HiFi3, t: 1, mblock: [2, 3], "
      "ublock: [1, 2], ublock_order: r, attributes: {m_k: 2, u_kt: 1}}\n"));
  auto c = configure(l, "dw");
  REQUIRE(c->config);
  const KernelConfig& k = *c->config;
  CHECK(k.family == Family::Depthwise);
  CHECK(k.depthwise.mK == 2);
  CHECK(k.depthwise.spill);
  CHECK_FALSE(k.depthwise.bias);
  // Input 0: the two 2x6-tile blocks side by side, ublocks column by column
  // so that block 0 is the first 6 ublocks (2 rows x 3 columns of [1, 2]).
  const OperandInfo& in0 = operand(k, 0);
  CHECK(*in0.layout == Layout{1, {2, 6}, {1, 2}, UblockOrder::C});
  CHECK(in0.minTiles == 12);
  // Tile (1, 7) = block 1, its tile (1, 1): ublock column 3 (1 of block 1), row 1 -> ublock 3*2+1 = 7, tile 1.
  CHECK(in0.layout->index(1, 7) == 7 * 2 + 1);
  const OperandInfo& in1 = operand(k, 1);
  CHECK(*in1.layout == Layout{1, {2, 3}, {1, 2}, UblockOrder::R});
  CHECK(in1.minTiles == 6);
  CHECK(in1.layout->index(1, 4) == 6 + 4); // block 1's row starts after block 0's 6 tiles
  const OperandInfo& spill = operand(k, 24);
  CHECK(spill.role == OperandRole::Spill);
  CHECK(spill.df == DataFormat::Float16);
  CHECK(spill.minTiles == 12);
}

TEST_CASE("depthwise: u_kt other than 1, and multi-column grids, are reported", "[hlk]") {
  auto l = load(netlistText(
      queue("a", "HOST", "t: 1, mblock: [1, 2], ublock: [1, 1]", "Float16_b", 1) +
          queue("w", "HOST", "t: 1, mblock: [2, 1], ublock: [1, 1]", "Float16_b", 2) +
          queue("a2", "HOST", "t: 1, mblock: [1, 4], ublock: [1, 1]", "Float16_b", 4) +
          queue("w2", "HOST", "t: 1, mblock: [2, 2], ublock: [1, 1]", "Float16_b", 5) +
          queue("out", "dw", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Float16_b", 3),
      "    dw: {type: depthwise, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a, w], in_df: [Float16_b, Float16_b], "
      "out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, math_fidelity: HiFi4, t: 1, mblock: [1, 1], "
      "ublock: [1, 1], attributes: {m_k: 2, u_kt: 2}}\n"
      "    dg: {type: depthwise, grid_loc: [1, 0], grid_size: [1, 2], inputs: [a2, w2], in_df: [Float16_b, Float16_b], "
      "out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, math_fidelity: HiFi4, t: 1, mblock: [1, 1], "
      "ublock: [1, 1], attributes: {m_k: 2, u_kt: 1}}\n"),
      false);
  auto c = configure(l, "dw");
  CHECK_FALSE(c->config);
  CHECK(hasRule(c->diags, "hlk-attribute", "depthwise needs u_kt = 1"));
  auto g = configure(l, "dg");
  CHECK_FALSE(g->config);
  CHECK(hasRule(g->diags, "hlk-unsupported-feature", "depthwise on a grid of 2 columns"));
}

TEST_CASE("quantization family: Float32 dest and HiFi4 whatever acc_df says", "[hlk]") {
  const std::string q = queue("x", "HOST", "t: 1, mblock: [1, 2], ublock: [2, 1]", "Int32", 1) +
                        queue("s", "HOST", "t: 1, mblock: [1, 2], ublock: [2, 1]", "Float32", 2) +
                        queue("out", "dq", "t: 1, mblock: [1, 2], ublock: [2, 1]", "Float32", 3) +
                        queue("out2", "rq", "t: 1, mblock: [1, 2], ublock: [2, 1]", "Int8", 4);
  auto l = load(netlistText(
      q, "    dq: {type: dequantization, grid_loc: [0, 0], grid_size: [1, 1], inputs: [x, s], in_df: [Int32, Float32], "
         "out_df: Float32, intermed_df: Int32, acc_df: Int32, math_fidelity: HiFi4, t: 1, mblock: [1, 2], ublock: [2, 1], "
         "attributes: {zero_point: 3}}\n"
         "    rq: {type: requantization, grid_loc: [0, 1], grid_size: [1, 1], inputs: [x, s], in_df: [Int32, Float32], "
         "out_df: Int8, intermed_df: Int32, acc_df: Int32, math_fidelity: HiFi4, t: 1, mblock: [1, 2], ublock: [2, 1], "
         "attributes: {zero_point: -0.5}}\n"));
  auto d = configure(l, "dq");
  REQUIRE(d->config);
  CHECK(d->config->family == Family::Quant);
  CHECK(d->config->quant.dequant);
  CHECK(d->config->quant.zeroPointBits == 0xC0400000u); // -3.0f: the kernel adds the negated zero point
  CHECK(d->config->common.destFormat == DataFormat::Float32);
  CHECK(d->config->common.fidelity == MathFidelity::HiFi4);
  CHECK(*operand(*d->config, 1).layout == Layout{1, {1, 2}, {2, 1}, UblockOrder::R});
  auto r = configure(l, "rq");
  REQUIRE(r->config);
  CHECK_FALSE(r->config->quant.dequant);
  CHECK(r->config->quant.zeroPointBits == 0xBF000000u); // -0.5f
  const KernelText text = renderKernel(*r->config);
  CHECK(text.argsHeader.find("constexpr bool kRoundInt8 = true;") != std::string::npos);
}

TEST_CASE("requant matmul: the scale is the input after the bias", "[hlk]") {
  auto l = load(netlistText(
      queue("a", "HOST", "t: 1, mblock: [1, 2], ublock: [1, 1]", "Int8", 1) +
          queue("b", "HOST", "t: 1, mblock: [2, 1], ublock: [1, 1]", "Int8", 2) +
          queue("bias", "HOST", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Int32", 3) +
          queue("s", "HOST", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Float32", 4) +
          queue("out", "mm", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Int8", 5),
      "    mm: {type: matmul, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a, b, bias, s], in_df: [Int8, Int8, Int32, "
      "Float32], out_df: Int8, intermed_df: Int32, acc_df: Int32, math_fidelity: HiFi4, t: 1, mblock: [1, 1], "
      "ublock: [1, 1], attributes: {m_k: 1, u_kt: 2, bias: true, requant: true, zero_point: 5}}\n"));
  auto c = configure(l, "mm");
  REQUIRE(c->config);
  const KernelConfig& k = *c->config;
  CHECK(k.matmul.quant == 1);
  CHECK(k.matmul.zeroPointBits == 0x40A00000u); // 5.0f
  CHECK(k.matmul.biasBcast == contract::kBcastNone); // integer bias: element-wise
  CHECK(k.common.destFormat == DataFormat::Float32);
  CHECK(operand(k, 3).source == "s");
  CHECK(*operand(k, 3).layout == Layout{1, {1, 1}, {1, 1}, UblockOrder::R});
  CHECK(renderKernel(k).argsHeader.find("constexpr int kScaleOperand = 3;") != std::string::npos);
}

TEST_CASE("binary op: a transposed input 0 goes through dest; dropout p 0 and tilizer are copies", "[hlk]") {
  auto l = load(netlistText(
      queue("a", "HOST", "t: 1, mblock: [2, 1], ublock: [1, 1]", "Float16_b", 1) +
          queue("b", "HOST", "t: 1, mblock: [1, 2], ublock: [1, 1]", "Float16_b", 2) +
          queue("out", "sub", "t: 1, mblock: [1, 2], ublock: [1, 1]", "Float16_b", 3) +
          queue("out2", "dr", "t: 1, mblock: [1, 2], ublock: [1, 1]", "Float16_b", 4),
      "    sub: {type: subtract, grid_loc: [0, 0], grid_size: [1, 1], inputs: [a, b], input_0_tms: [transpose], "
      "in_df: [Float16_b, Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, math_fidelity: "
      "HiFi4, t: 1, mblock: [1, 2], ublock: [1, 1]}\n"
      "    dr: {type: dropout, grid_loc: [0, 1], grid_size: [1, 1], inputs: [b], in_df: [Float16_b], out_df: Float16_b, "
      "intermed_df: Float16_b, acc_df: Float16_b, math_fidelity: HiFi4, t: 1, mblock: [1, 2], ublock: [1, 1], "
      "attributes: {p: 0}}\n"));
  auto s = configure(l, "sub");
  REQUIRE(s->config);
  CHECK(s->config->binary.transposeIn0);
  const KernelText text = renderKernel(*s->config);
  CHECK(text.argsHeader.find("constexpr bool kTransposeIn0 = true;") != std::string::npos);
  CHECK(text.source.find("hlk_copy_tile_to_dst(0, d, d, true);") != std::string::npos);
  auto d = configure(l, "dr");
  REQUIRE(d->config);
  CHECK(d->config->family == Family::Unary);
  CHECK_FALSE(d->config->unary.sfpu);
}
