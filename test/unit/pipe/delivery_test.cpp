// End to end: what the pipes of a compiled epoch deliver, read the way
// docs/pipegen-yaml.md defines input_list (chunks of scatter buffers at
// offsets, whole inputs of non-scatter buffers, constant padding tiles,
// pipe_periodic_repeat), must be, tile for tile, the operand the golden
// model computes (lib/golden/tm.cpp on whole tensors) blocked in the
// consumer's order (formats::coreTileOrder). Every tile of every producer
// holds its own code, so a misplaced tile shows up by name.
#include "pipe/net2pipe.hpp"

#include "delivery.hpp"

#include "device/soc_descriptor.hpp"
#include "formats/blocking.hpp"
#include "netlist/blocking.hpp"
#include "golden/tm.hpp"
#include "netlist/parser.hpp"
#include "netlist/validator.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>

using namespace tessera;
using namespace tessera::pipe;
using namespace tessera::pipe::testing;

namespace {

struct Compiled {
  netlist::Netlist nl;
  std::unique_ptr<SocDescriptor> device;
  Compilation comp;
};

std::unique_ptr<Compiled> compile(const std::string& text) {
  auto c = std::make_unique<Compiled>();
  SourceBuffer source("delivery.yaml", text);
  DiagnosticEngine diags;
  auto nl = netlist::parseNetlist(source, diags);
  REQUIRE(nl);
  c->nl = std::move(*nl);
  c->device = std::make_unique<SocDescriptor>(loadBundledDescriptor("grayskull_10x12"));
  netlist::ValidationTarget target{Arch::Grayskull, c->device.get()};
  netlist::validateNetlist(c->nl, target, diags);
  const bool ok = compileNetlist(c->nl, target, diags, c->comp);
  for (const Diagnostic& d : diags.diagnostics())
    if (d.severity == Severity::Error) FAIL(d.message << " [" << d.rule << "]");
  REQUIRE(ok);
  return c;
}

// Every core of eltwise op `opName` (input `input`): the operand the golden
// model computes from the coded producer, in the op's order on that core.
void checkEltwiseInput(const Compiled& c, const std::string& opName, size_t input) {
  const PipegenYaml& y = c.comp.epochs.at(0).yaml;
  Delivery d(c.nl, c.comp.queueBuffers, y);
  const netlist::Op* op = nullptr;
  for (const auto& g : c.nl.graphs)
    for (const auto& o : g.ops)
      if (o.name == opName) op = &o;
  REQUIRE(op);
  const netlist::Operand& in = op->inputs.at(input);
  formats::Blocking pb;
  bool isQueue = false;
  for (const auto& q : c.nl.queues)
    if (q.name == in.name) {
      pb = netlist::blockingOf(q);
      isQueue = true;
    }
  if (!isQueue)
    for (const auto& g : c.nl.graphs)
      for (const auto& o : g.ops)
        if (o.name == in.name) pb = netlist::blockingOf(o);
  formats::Tensor x = codedTensor(d.idOf(in.name), pb);
  if (in.unpad) x = golden::unpadTiles(x, *in.unpad);
  x = golden::applyTms(x, in.tms);
  if (in.pad) x = golden::padTiles(x, *in.pad);
  const formats::Blocking ob = netlist::blockingOf(*op);
  REQUIRE(x.z == ob.t);
  REQUIRE(x.r == ob.rowTiles() * 32);
  REQUIRE(x.c == ob.colTiles() * 32);
  int64_t core = 0;
  const std::string prefix = "Op " + opName + ": ";
  const std::string suffix = ", kernel input buf " + std::to_string(input) + ", from " + in.name;
  for (const Buffer& b : y.buffers) {
    if (b.mdOpName != opName || b.bufferType != BufferType::Unpacker || b.id != input) continue;
    std::vector<float> want;
    for (const auto& tc : formats::coreTileOrder(ob, core / ob.gridC, core % ob.gridC))
      want.push_back(x.at(0, tc.t, tc.rt * 32 + 7, tc.ct * 32 + 21));
    INFO(b.comment);
    CHECK(d.received(b.uniqid) == want);
    ++core;
  }
  CHECK(core == ob.gridR * ob.gridC);
}

const std::string kDf = "acc_df: Float16_b, out_df: Float16_b, intermed_df: Float16_b, math_fidelity: HiFi4";

std::string q(const std::string& name, const std::string& input, const std::string& blocking, int chan, int cells = 1) {
  std::string dram;
  for (int k = 0; k < cells; ++k)
    dram += std::string(k ? ", " : "") + "[" + std::to_string(chan) + ", 0x1" + std::to_string(k) + "000000]";
  return "  " + name + ": {type: queue, input: " + input + ", entries: 2, " + blocking +
         ", df: Float16_b, target_device: 0, loc: dram, dram: [" + dram + "]}\n";
}

std::string nl(const std::string& queues, const std::string& ops) {
  return "devices:\n  arch: grayskull\nqueues:\n" + queues + "graphs:\n  g:\n    target_device: 0\n    input_count: 2\n" +
         ops + "programs:\n  - run:\n    - execute: {graph_name: g}\n";
}

} // namespace

TEST_CASE("pipes deliver the golden operand: queue to multi-core op through TMs", "[pipe][delivery]") {
  // [2, 2] queue cells of [t=2, 2x2] (column-major ublocks) -> 4x4 tiles,
  // t 2; hstack 2 -> [1, 4x8]; transpose -> [1, 8x4]; vslice 2 -> [2, 4x4]:
  // on a [2, 2] grid of [2, 2] tiles per core, each core gathers from
  // several queue cells out of order.
  auto c = compile(nl(q("in0", "HOST", "grid_size: [2, 2], t: 2, mblock: [2, 1], ublock: [1, 2], ublock_order: c", 0, 4) +
                          "  out0: {type: queue, input: d0, entries: 2, grid_size: [1, 1], t: 2, mblock: [4, 4], ublock: [1, 1], df: Float16_b, target_device: 0, loc: dram, dram: [[1, 0x10000000]]}\n",
                      "    d0: {type: nop, grid_loc: [0, 0], grid_size: [2, 2], inputs: [in0], in_df: [Float16_b], " + kDf +
                          ", buf_size_mb: 2, t: 2, mblock: [1, 2], ublock: [2, 1], input_0_tms: [hstack: 2, transpose, vslice: 2]}\n"));
  checkEltwiseInput(*c, "d0", 0);
}

TEST_CASE("pipes deliver the golden operand: op to op, scatter packers and gathers", "[pipe][delivery]") {
  // d0 [2, 2] grid -> d1 [1, 2] grid reading it transposed and broadcast in
  // z: packers read out of order (scatter chunks), each d1 core gathers
  // from several d0 cores; d2 reads d0 with hslice (a fork of d0).
  auto c = compile(nl(q("in0", "HOST", "grid_size: [1, 1], t: 1, mblock: [4, 4], ublock: [1, 1]", 0) +
                          "  o1: {type: queue, input: d1, entries: 2, grid_size: [1, 1], t: 2, mblock: [4, 4], ublock: [1, 1], df: Float16_b, target_device: 0, loc: dram, dram: [[1, 0x10000000]]}\n"
                          "  o2: {type: queue, input: d2, entries: 2, grid_size: [1, 1], t: 2, mblock: [4, 2], ublock: [1, 1], df: Float16_b, target_device: 0, loc: dram, dram: [[2, 0x10000000]]}\n",
                      "    d0: {type: datacopy, grid_loc: [0, 0], grid_size: [2, 2], inputs: [in0], in_df: [Float16_b], " + kDf +
                          ", buf_size_mb: 2, t: 1, mblock: [2, 1], ublock: [1, 2]}\n"
                          "    d1: {type: nop, grid_loc: [2, 0], grid_size: [1, 2], inputs: [d0], in_df: [Float16_b], " + kDf +
                          ", buf_size_mb: 2, t: 2, mblock: [2, 2], ublock: [2, 1], ublock_order: c, input_0_tms: [transpose, broadcast: {z: 2}]}\n"
                          "    d2: {type: datacopy, grid_loc: [3, 0], grid_size: [2, 1], inputs: [d0], in_df: [Float16_b], " + kDf +
                          ", buf_size_mb: 2, t: 2, mblock: [2, 2], ublock: [1, 1], input_0_tms: [hslice: 2]}\n"));
  checkEltwiseInput(*c, "d1", 0);
  checkEltwiseInput(*c, "d2", 0);
}

TEST_CASE("pipes deliver the golden operand: broadcasts, multicasts, padding", "[pipe][delivery]") {
  // A [1, 1x2] queue broadcast to [2, 2x4] on a [2, 2] grid (multicasts,
  // periodic lists); a binary op whose input 1 is unpadded and padded.
  auto c = compile(nl(q("in0", "HOST", "grid_size: [1, 1], t: 1, mblock: [1, 2], ublock: [1, 1]", 0) +
                          q("in1", "HOST", "grid_size: [1, 1], t: 2, mblock: [3, 3], ublock: [1, 1]", 1) +
                          "  o0: {type: queue, input: a0, entries: 2, grid_size: [1, 1], t: 2, mblock: [2, 4], ublock: [1, 1], df: Float16_b, target_device: 0, loc: dram, dram: [[2, 0x10000000]]}\n",
                      "    a0: {type: add, grid_loc: [0, 0], grid_size: [2, 2], inputs: [in0, in1], in_df: [Float16_b, Float16_b], " + kDf +
                          ", buf_size_mb: 2, t: 2, mblock: [1, 1], ublock: [1, 2], input_0_tms: [broadcast: {r: 2}, broadcast: {c: 2}, broadcast: {z: 2}], "
                          "input_1_unpad: {rt: 2, ct: 1}, input_1_pad: {rt: 1, ct: 2, pad_value: 3.0}}\n"));
  checkEltwiseInput(*c, "a0", 0);
  checkEltwiseInput(*c, "a0", 1);
}

TEST_CASE("pipes deliver the golden operand: matmul row and column multicasts", "[pipe][delivery][matmul]") {
  // mm on [2, 2] cores, mblock [1, 1] of [2, 2] ublocks, K = 4 = m_k 2 x
  // u_kt 2. in0 [1, 4x4]: core row r reads rows 2r..2r+1, all of K, as
  // {[m 1, m_k 2], [2, u_kt 2], column-major ublocks}; in1 (transposed
  // queue) [1, 4x4]: core column c reads columns 2c..2c+1, all of K, as
  // {[m_k 2, n 1], [u_kt 2, 2], row-major}.
  auto c = compile(nl(q("a", "HOST", "grid_size: [1, 1], t: 1, mblock: [2, 2], ublock: [2, 2]", 0) +
                          q("b", "HOST", "grid_size: [1, 1], t: 1, mblock: [4, 1], ublock: [1, 4]", 1) +
                          "  o: {type: queue, input: mm, entries: 2, grid_size: [2, 2], t: 1, mblock: [1, 1], ublock: [2, 2], df: Float16_b, target_device: 0, loc: dram, dram: [[2, 0x10000000], [2, 0x11000000], [2, 0x12000000], [2, 0x13000000]]}\n",
                      "    mm: {type: matmul, grid_loc: [0, 0], grid_size: [2, 2], inputs: [a, b], in_df: [Float16_b, Float16_b], " + kDf +
                          ", buf_size_mb: 2, t: 1, mblock: [1, 1], ublock: [2, 2], attributes: {m_k: 2, u_kt: 2}, input_1_tms: [transpose]}\n"));
  const PipegenYaml& y = c->comp.epochs.at(0).yaml;
  Delivery d(c->nl, c->comp.queueBuffers, y);
  const netlist::Op& mm = c->nl.graphs.at(0).ops.at(0);
  formats::Blocking qa = netlist::blockingOf(c->nl.queues.at(0)), qb = netlist::blockingOf(c->nl.queues.at(1));
  const formats::Tensor a = codedTensor(d.idOf("a"), qa);
  const formats::Tensor b = golden::applyTms(codedTensor(d.idOf("b"), qb), mm.inputs.at(1).tms);
  auto kernelOrder = [](const formats::Tensor& x, formats::Blocking layout, int64_t r0, int64_t c0) {
    std::vector<float> out;
    for (const auto& tc : formats::coreTileOrder(layout, 0, 0)) out.push_back(x.at(0, tc.t, (r0 + tc.rt) * 32 + 3, (c0 + tc.ct) * 32 + 30));
    return out;
  };
  formats::Blocking in0;
  in0.mblockR = 1;
  in0.mblockC = 2;
  in0.ublockR = 2;
  in0.ublockC = 2;
  in0.order = netlist::UblockOrder::C;
  formats::Blocking in1;
  in1.mblockR = 2;
  in1.mblockC = 1;
  in1.ublockR = 2;
  in1.ublockC = 2;
  int multicasts = 0;
  for (const Pipe& p : y.pipes) multicasts += p.outputList.at(0).size() == 2;
  CHECK(multicasts == 4); // one per core row (in0), one per core column (in1)
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t col = 0; col < 2; ++col) {
      const std::string core = "Op mm: [r=" + std::to_string(r) + ", c=" + std::to_string(col) + "]";
      for (const Buffer& buf : y.buffers) {
        if (buf.comment == core + ", kernel input buf 0, from a") CHECK(d.received(buf.uniqid) == kernelOrder(a, in0, 2 * r, 0));
        if (buf.comment == core + ", kernel input buf 1, from b") CHECK(d.received(buf.uniqid) == kernelOrder(b, in1, 0, 2 * col));
      }
    }
}

TEST_CASE("pipes deliver the golden operand: time-multiplexed multicasts", "[pipe][delivery][mcast]") {
  // src [1, 2x2] on one core; six ops b0..b5 on [1, 2] grids read it
  // broadcast c 2 ([1, 2x4]): both cores of each read all 4 src tiles in the
  // same order, so src sends six multicasts of the same list and a core has
  // 4 multicast streams: 2 too many, so b0, b1, b2 share one nested pipe
  // (3 slots, pipe_periodic_repeat 3) and each of their cores still receives
  // exactly its operand once per input.
  std::string queues = q("in0", "HOST", "grid_size: [1, 1], t: 1, mblock: [2, 2], ublock: [1, 1]", 0);
  std::string ops = "    src: {type: datacopy, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], in_df: [Float16_b], " + kDf +
                    ", buf_size_mb: 2, t: 1, mblock: [2, 2], ublock: [1, 1]}\n";
  for (int k = 0; k < 6; ++k) {
    const std::string n = std::to_string(k);
    queues += "  o" + n + ": {type: queue, input: b" + n +
              ", entries: 2, grid_size: [1, 1], t: 1, mblock: [2, 4], ublock: [1, 1], df: Float16_b, target_device: 0, loc: dram, dram: [[" +
              std::to_string(1 + k) + ", 0x10000000]]}\n";
    ops += "    b" + n + ": {type: datacopy, grid_loc: [" + std::to_string(1 + k) +
           ", 0], grid_size: [1, 2], inputs: [src], in_df: [Float16_b], " + kDf +
           ", buf_size_mb: 2, t: 1, mblock: [2, 2], ublock: [1, 1], input_0_tms: [broadcast: {c: 2}]}\n";
  }
  auto c = compile(nl(queues, ops));
  const PipegenYaml& y = c->comp.epochs.at(0).yaml;
  int nested = 0, plain = 0;
  for (const Pipe& p : y.pipes) {
    if (p.comment.find("from src") == std::string::npos) continue;
    if (p.outputList.size() == 3) {
      ++nested;
      CHECK(p.outputListNested);
      CHECK(p.pipePeriodicRepeat == 3);
      for (const auto& slot : p.outputList) CHECK(slot.size() == 2);
    } else {
      ++plain;
      CHECK(p.outputList.size() == 1);
    }
  }
  CHECK(nested == 1);
  CHECK(plain == 3);
  for (int k = 0; k < 6; ++k) checkEltwiseInput(*c, "b" + std::to_string(k), 0);
}
