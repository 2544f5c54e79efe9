// Unit tests of the fused-op constraints (lib/netlist/fused_op_validator.cpp):
// one small netlist per rule that must trigger it, valid fused ops (taken
// from corpus patterns) that must not trigger anything, and the reporting
// policy (notes, de-duplication across users, unreferenced fused ops).
#include "device/soc_descriptor.hpp"
#include "netlist/parser.hpp"
#include "netlist/validator.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace tessera;
using namespace tessera::netlist;

namespace {

// The graph op using fused op 0, and the fused op itself.
struct Case {
  Arch arch = Arch::Grayskull;
  std::string grid = "[1, 1]";
  std::string mblock = "[1, 1]";
  std::string ublock = "[1, 1]";
  std::string order = "r";
  std::string inDf = "[Float16_b, Float16_b, Float16_b]";
  std::string accDf = "Float16_b";
  std::string outDf = "Float16_b";
  std::string intermedDf = "Float16_b";
  std::string fidelity = "HiFi3";
  std::string extraOpFields; // appended to the op's flow map, e.g. ", tile_dim: [16, 32]"
  int users = 1;             // graph ops using fused op 0 (0: unreferenced)
  std::string fused;         // the text under `0:` (indented by 4)
};

std::string netlistText(const Case& c) {
  std::string text = "devices:\n  arch: " + std::string(archName(c.arch)) + "\nqueues:\n";
  for (int q = 0; q < 3; ++q)
    text += "  q" + std::to_string(q) + ": {type: queue, input: HOST, entries: 1, grid_size: [1, 1], t: 1, "
            "mblock: [1, 1], ublock: [1, 1], df: Float16_b, target_device: 0, loc: dram, dram: [[0, 0x3" +
            std::to_string(q) + "000000]]}\n";
  text += "graphs:\n  g:\n    target_device: 0\n    input_count: 1\n";
  for (int u = 0; u < c.users; ++u)
    text += "    op" + std::to_string(u) + ": {type: fused_op, grid_loc: [" + std::to_string(u * 2) +
            ", 0], grid_size: " + c.grid + ", inputs: [q0, q1, q2], in_df: " + c.inDf + ", acc_df: " + c.accDf +
            ", out_df: " + c.outDf + ", intermed_df: " + c.intermedDf + ", ublock_order: " + c.order +
            ", math_fidelity: " + c.fidelity + ", t: 1, mblock: " + c.mblock + ", ublock: " + c.ublock +
            ", attributes: {fused_op_id: 0}" + c.extraOpFields + "}\n";
  if (c.users == 0)
    text += "    other: {type: nop, grid_loc: [0, 0], grid_size: [1, 1], inputs: [q0], in_df: [Float16_b], "
            "acc_df: Float16_b, out_df: Float16_b, intermed_df: Float16_b, math_fidelity: HiFi3, t: 1, "
            "mblock: [1, 1], ublock: [1, 1]}\n";
  text += "programs:\n  - run:\n    - execute: {graph_name: g}\nfused_ops:\n  0:\n" + c.fused;
  return text;
}

// Parses the case (which must parse without errors) and runs the fused-op checks only.
DiagnosticEngine check(const Case& c) {
  SourceBuffer source("test.yaml", netlistText(c));
  DiagnosticEngine parseDiags;
  auto nl = parseNetlist(source, parseDiags);
  INFO(source.text());
  for (const Diagnostic& d : parseDiags.diagnostics())
    if (d.severity == Severity::Error) FAIL_CHECK(d.message << " [" << d.rule << "]");
  REQUIRE(nl.has_value());
  SocDescriptor soc = loadBundledDescriptor(defaultDescriptorName(c.arch));
  DiagnosticEngine diags;
  validateFusedOps(*nl, ValidationTarget{c.arch, &soc}, diags);
  return diags;
}

std::string dump(const DiagnosticEngine& diags) {
  std::string s;
  for (const Diagnostic& d : diags.diagnostics()) {
    s += std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message + " [" + d.rule + "]\n";
    for (const DiagNote& n : d.notes) s += "  note: " + n.message + "\n";
  }
  return s;
}

// The case must produce `rule` (and every fused-op diagnostic must be well-formed).
void requireRule(const Case& c, const std::string& rule) {
  DiagnosticEngine diags = check(c);
  INFO(netlistText(c));
  INFO(dump(diags));
  CHECK(diags.hasRule(rule));
  for (const Diagnostic& d : diags.diagnostics()) {
    CHECK(d.rule.rfind("fused-", 0) == 0);
    CHECK(d.loc.valid());
    CHECK(d.message.find("fused op '0' schedule ") == 0);
  }
}

void requireClean(const Case& c) {
  DiagnosticEngine diags = check(c);
  INFO(netlistText(c));
  INFO(dump(diags));
  CHECK(diags.errorCount() == 0);
}

// A fused op of one schedule with the given sub-ops (each a full `- name: {...}` line body).
std::string oneSchedule(const std::string& ops, int inputs = 3, int intermediates = 2) {
  return "    inputs: " + std::to_string(inputs) + "\n    intermediates: " + std::to_string(intermediates) +
         "\n    schedules:\n      -\n" + ops;
}

std::string schedules(const std::vector<std::string>& scheds, int inputs = 3, int intermediates = 2) {
  std::string s = "    inputs: " + std::to_string(inputs) + "\n    intermediates: " + std::to_string(intermediates) +
                  "\n    schedules:\n";
  for (const std::string& ops : scheds) s += "      -\n" + ops;
  return s;
}

std::string sub(const std::string& name, const std::string& fields) {
  return "        - " + name + ": {" + fields + "}\n";
}

} // namespace

// ---------------------------------------------------------------- valid fused ops

TEST_CASE("valid fused ops produce no fused-op errors", "[fused]") {
  SECTION("element-wise chain through dest with tile broadcast (softmax)") {
    Case c;
    c.mblock = "[2, 1]";
    c.ublock = "[2, 4]";
    c.fused = oneSchedule(sub("sub", "type: subtract, inputs: [input0, input1], input_1_tms: [tile_broadcast: c], "
                                     "mblock: [2, 1], ublock: [2, 4], output: dest") +
                          sub("exp", "type: exp, inputs: [dest], mblock: [2, 1], ublock: [2, 4], output: output"));
    for (Arch a : {Arch::Grayskull, Arch::Wormhole, Arch::WormholeB0, Arch::Blackhole}) {
      c.arch = a;
      requireClean(c);
    }
  }
  SECTION("layernorm: matmul reduce, column broadcast of its result in a later schedule") {
    Case c;
    c.mblock = "[2, 6]";
    c.ublock = "[2, 4]";
    c.fused = schedules(
        {sub("add", "type: add, inputs: [input0, input1], mblock: [2, 6], ublock: [2, 4], output: intermed0") +
             sub("avg", "type: matmul, inputs: [intermed0, input2], attributes: {m_k: 6, u_kt: 4}, pop: [intermed0], "
                        "mblock: [2, 1], ublock: [2, 1], output: intermed1"),
         sub("add2", "type: add, inputs: [input0, input1], mblock: [2, 6], ublock: [2, 4], output: dest") +
             sub("sub", "type: subtract, inputs: [dest, intermed1], input_1_tms: [broadcast: {c: 24}], "
                        "pop_last: [intermed1], mblock: [2, 6], ublock: [2, 4], output: output")});
    requireClean(c);
    c.users = 3; // the same fused op used by several ops
    requireClean(c);
  }
  SECTION("row broadcast of a matmul result on a [1, n] grid (outer-product matmul)") {
    Case c;
    c.grid = "[1, 2]";
    c.mblock = "[4, 1]";
    c.ublock = "[2, 4]";
    c.fused = schedules(
        {sub("mm", "type: matmul, inputs: [input0, input1], attributes: {m_k: 1, u_kt: 1}, mblock: [1, 1], "
                   "ublock: [1, 4], output: intermed0"),
         sub("add", "type: add, inputs: [input2, intermed0], input_1_tms: [broadcast: {r: 8}], pop_last: [intermed0], "
                    "mblock: [4, 1], ublock: [2, 4], output: output")},
        3, 1);
    requireClean(c);
  }
  SECTION("reduce over r of a single-column mblock with ublock_order r") {
    Case c;
    c.fused = schedules(
        {sub("add", "type: add, inputs: [input0, input1], mblock: [2, 1], ublock: [1, 1], output: intermed0") +
             sub("red", "type: reduce, inputs: [intermed0], pop: [intermed0], attributes: {dim: r, type: max, m_k: 2, "
                        "u_kt: 1}, mblock: [1, 1], ublock: [1, 1], output: intermed1"),
         sub("nop", "type: nop, inputs: [intermed1], pop: [intermed1], mblock: [1, 1], ublock: [1, 1], "
                    "output: output")});
    requireClean(c);
  }
  SECTION("intermediate reused for smaller ublocks") {
    Case c;
    c.ublock = "[2, 2]";
    c.fused = oneSchedule(
        sub("a", "type: add, inputs: [input0, input1], mblock: [1, 1], ublock: [2, 2], output: intermed0") +
        sub("b", "type: multiply, inputs: [intermed0, intermed0], pop: [intermed0], mblock: [1, 1], ublock: [2, 2], "
                 "output: intermed1") +
        sub("c", "type: exp, inputs: [intermed1], pop: [intermed1], mblock: [1, 1], ublock: [2, 2], output: output"));
    requireClean(c);
  }
  SECTION("integer fused op: quantize, add, requantize, dequantize") {
    Case c;
    c.arch = Arch::WormholeB0;
    c.mblock = "[4, 3]";
    c.ublock = "[2, 1]";
    c.inDf = "[Float32, Float32, Float32]";
    c.accDf = "Int32";
    c.outDf = "Float32";
    c.intermedDf = "Int8";
    c.fused = oneSchedule(
        sub("q1", "type: quantization, inputs: [input0, input1], mblock: [4, 3], ublock: [2, 1], output: intermed0") +
        sub("q2", "type: quantization, inputs: [input2, input1], mblock: [4, 3], ublock: [2, 1], output: intermed1") +
        sub("add", "type: add, inputs: [intermed0, intermed1], pop: [intermed0, intermed1], mblock: [4, 3], "
                   "ublock: [2, 1], output: dest") +
        sub("rq", "type: requantization, inputs: [input1, dest], mblock: [4, 3], ublock: [2, 1], output: intermed0") +
        sub("mul", "type: multiply, inputs: [intermed0, intermed0], pop: [intermed0], mblock: [4, 3], "
                   "ublock: [2, 1], output: dest") +
        sub("dq", "type: dequantization, inputs: [input1, dest], pop: [input1], mblock: [4, 3], ublock: [2, 1], "
                  "output: output"));
    requireClean(c);
  }
}

// ---------------------------------------------------------------- structure

TEST_CASE("fused-op structural rules", "[fused]") {
  Case c;
  SECTION("fused-input-range: beyond the fused op's inputs") {
    c.fused = oneSchedule(sub("a", "type: nop, inputs: [input5], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-input-range");
  }
  SECTION("fused-input-range: beyond the graph op's inputs") {
    c.fused = oneSchedule(sub("a", "type: nop, inputs: [input3], mblock: [1, 1], ublock: [1, 1], output: output"), 4);
    requireRule(c, "fused-input-range");
  }
  SECTION("fused-input-range: not a buffer name") {
    c.fused = oneSchedule(sub("a", "type: nop, inputs: [in0], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-input-range");
  }
  SECTION("fused-intermed-range") {
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: intermed1") +
            sub("b", "type: nop, inputs: [intermed1], pop: [intermed1], mblock: [1, 1], ublock: [1, 1], "
                     "output: output"),
        3, 1);
    requireRule(c, "fused-intermed-range");
  }
  SECTION("fused-output: nothing writes output") {
    c.fused = oneSchedule(sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: dest"));
    requireRule(c, "fused-output");
  }
  SECTION("fused-output: bad output name") {
    c.fused = oneSchedule(sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: out") +
                          sub("b", "type: nop, inputs: [input1], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-output");
  }
  SECTION("fused-output: output written outside the last schedule") {
    c.fused = schedules({sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: output"),
                         sub("b", "type: nop, inputs: [input1], mblock: [1, 1], ublock: [1, 1], output: output")});
    requireRule(c, "fused-output");
  }
  SECTION("fused-pop-list") {
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], pop: [input1], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-pop-list");
  }
  SECTION("fused-unsupported-op: splice") {
    c.fused = oneSchedule(
        sub("a", "type: splice, inputs: [input0, input1], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-unsupported-op");
  }
  SECTION("fused-unsupported-op: sparse matmul") {
    c.fused = oneSchedule(sub("a", "type: matmul, inputs: [input0, input1], attributes: {identity: true, m_k: 1, "
                                   "u_kt: 1}, mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-unsupported-op");
  }
  SECTION("fused-small-tile") {
    c.extraOpFields = ", tile_dim: [16, 32]";
    c.fused = oneSchedule(sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-small-tile");
  }
  SECTION("fused-reduce-max-rc-z") {
    c.fused = oneSchedule(sub("a", "type: reduce, inputs: [input0], attributes: {type: max, dim: z, m_k: 1, u_kt: 1}, "
                                   "mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-reduce-max-rc-z");
  }
  SECTION("fused-schedule-split") {
    c.fused = oneSchedule(
        sub("mm", "type: matmul, inputs: [input0, input1], attributes: {m_k: 1, u_kt: 1}, mblock: [1, 1], "
                  "ublock: [1, 1], output: intermed0") +
        sub("a", "type: nop, inputs: [intermed0], pop: [intermed0], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-schedule-split");
  }
  SECTION("fused-ublock-fits-dest") {
    c.ublock = "[4, 3]";
    c.fused = oneSchedule(sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [4, 3], output: output"));
    requireRule(c, "fused-ublock-fits-dest");
  }
  SECTION("fused-ublock-fits-dest: Float32 accumulation halves dest") {
    c.arch = Arch::WormholeB0;
    c.accDf = "Float32";
    c.ublock = "[2, 4]";
    c.fused = oneSchedule(sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [2, 4], output: output"));
    requireRule(c, "fused-ublock-fits-dest");
  }
}

// ---------------------------------------------------------------- TMs and broadcasts

TEST_CASE("fused-op TM and broadcast rules", "[fused]") {
  Case c;
  SECTION("fused-transpose") {
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], input_0_tms: [transpose], mblock: [1, 1], ublock: [1, 1], "
                 "output: output"));
    requireRule(c, "fused-transpose");
  }
  SECTION("fused-tile-broadcast-input: on input 0") {
    c.fused = oneSchedule(sub("a", "type: add, inputs: [input0, input1], input_0_tms: [tile_broadcast: r], "
                                   "mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-tile-broadcast-input");
  }
  SECTION("fused-tile-broadcast-input: on a non-FPU-binary op") {
    c.fused = oneSchedule(sub("a", "type: maximum, inputs: [input0, input1], input_1_tms: [tile_broadcast: r], "
                                   "mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-tile-broadcast-input");
  }
  SECTION("fused-rc-broadcast") {
    c.mblock = "[2, 2]";
    c.fused = oneSchedule(
        sub("nop", "type: datacopy, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
        sub("s", "type: sine, inputs: [intermed0], input_0_tms: [broadcast: {c: 2}, broadcast: {r: 2}], "
                 "pop: [intermed0], mblock: [2, 2], ublock: [1, 1], output: output"));
    requireRule(c, "fused-rc-broadcast");
  }
  SECTION("fused-bcast-source") {
    c.mblock = "[2, 1]";
    c.fused = oneSchedule(sub("b", "type: datacopy, inputs: [input0], input_0_tms: [broadcast: {r: 2}], "
                                   "mblock: [2, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-bcast-source");
  }
  SECTION("fused-bcast-mblock") {
    c.mblock = "[4, 1]";
    c.fused = oneSchedule(
        sub("nop", "type: datacopy, inputs: [input0], mblock: [2, 1], ublock: [1, 1], output: intermed0") +
        sub("b", "type: datacopy, inputs: [intermed0], pop: [intermed0], input_0_tms: [broadcast: {r: 2}], "
                 "mblock: [4, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-bcast-mblock");
  }
  SECTION("fused-bcast-ublock") {
    c.ublock = "[4, 1]";
    c.fused = oneSchedule(
        sub("nop", "type: datacopy, inputs: [input0], mblock: [1, 1], ublock: [2, 1], output: intermed0") +
        sub("b", "type: datacopy, inputs: [intermed0], pop: [intermed0], input_0_tms: [broadcast: {r: 2}], "
                 "mblock: [1, 1], ublock: [4, 1], output: output"));
    requireRule(c, "fused-bcast-ublock");
  }
  SECTION("fused-bcast-mblock-row") {
    c.mblock = "[2, 2]";
    c.fused = oneSchedule(
        sub("nop", "type: datacopy, inputs: [input0], mblock: [1, 2], ublock: [1, 1], output: intermed0") +
        sub("b", "type: datacopy, inputs: [intermed0], pop: [intermed0], input_0_tms: [broadcast: {r: 2}], "
                 "mblock: [2, 2], ublock: [1, 1], output: output"));
    requireRule(c, "fused-bcast-mblock-row");
  }
  SECTION("fused-matmul-col-bcast") {
    c.mblock = "[2, 1]";
    c.fused = schedules(
        {sub("nop", "type: datacopy, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
             sub("mm", "type: matmul, inputs: [intermed0, input1], input_0_tms: [broadcast: {r: 2}], pop: [intermed0], "
                       "attributes: {m_k: 1, u_kt: 1}, mblock: [2, 1], ublock: [1, 1], output: intermed1"),
         sub("out", "type: nop, inputs: [intermed1], pop: [intermed1], mblock: [2, 1], ublock: [1, 1], "
                    "output: output")});
    requireRule(c, "fused-matmul-col-bcast");
  }
  SECTION("fused-matmul-ublock-bcast (issue 1135)") {
    c.fused = schedules(
        {sub("nop", "type: datacopy, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
             sub("mm", "type: matmul, inputs: [intermed0, input1], input_0_tms: [broadcast: {c: 2}], pop: [intermed0], "
                       "attributes: {m_k: 1, u_kt: 2}, mblock: [1, 1], ublock: [1, 1], output: intermed1"),
         sub("out", "type: nop, inputs: [intermed1], pop: [intermed1], mblock: [1, 1], ublock: [1, 1], "
                    "output: output")});
    DiagnosticEngine diags = check(c);
    INFO(dump(diags));
    CHECK(diags.hasRule("fused-matmul-ublock-bcast"));
    CHECK(dump(diags).find("known unsupported feature") != std::string::npos);
  }
  SECTION("fused-grid-broadcast") {
    c.grid = "[2, 1]";
    c.mblock = "[2, 1]";
    c.fused = oneSchedule(
        sub("nop", "type: datacopy, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
        sub("b", "type: datacopy, inputs: [intermed0], pop: [intermed0], input_0_tms: [broadcast: {r: 2}], "
                 "mblock: [2, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-grid-broadcast");
  }
}

// ---------------------------------------------------------------- dest

TEST_CASE("fused-op dest rules", "[fused]") {
  Case c;
  SECTION("fused-dest-input1-grayskull") {
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: dest") +
        sub("b", "type: add, inputs: [input1, dest], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-dest-input1-grayskull");
    c.arch = Arch::WormholeB0; // wormhole can move dest into source B
    requireClean(c);
  }
  SECTION("fused-dest-into-matmul-reduce") {
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: dest") +
        sub("r", "type: reduce, inputs: [dest], attributes: {type: sum, dim: c, m_k: 1, u_kt: 1}, mblock: [1, 1], "
                 "ublock: [1, 1], output: output"));
    requireRule(c, "fused-dest-into-matmul-reduce");
  }
  SECTION("fused-dest-into-maximum") {
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: dest") +
        sub("m", "type: maximum, inputs: [dest, input1], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-dest-into-maximum");
  }
  SECTION("fused-dest-outside-schedule: read in the next schedule") {
    c.fused = schedules({sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: dest"),
                         sub("b", "type: exp, inputs: [dest], mblock: [1, 1], ublock: [1, 1], output: output")});
    requireRule(c, "fused-dest-outside-schedule");
  }
  SECTION("fused-dest-outside-schedule: matmul writes dest") {
    c.fused = schedules(
        {sub("mm", "type: matmul, inputs: [input0, input1], attributes: {m_k: 1, u_kt: 1}, mblock: [1, 1], "
                   "ublock: [1, 1], output: dest"),
         sub("b", "type: nop, inputs: [input2], mblock: [1, 1], ublock: [1, 1], output: output")});
    requireRule(c, "fused-dest-outside-schedule");
  }
  SECTION("fused-dest-fork") {
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: dest") +
        sub("b", "type: exp, inputs: [dest], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
        sub("c", "type: add, inputs: [dest, intermed0], pop: [intermed0], mblock: [1, 1], ublock: [1, 1], "
                 "output: output"));
    requireRule(c, "fused-dest-fork");
  }
  SECTION("fused-binary-sfpu") {
    c.fused = oneSchedule(
        sub("m", "type: maximum, inputs: [input0, input1], mblock: [1, 1], ublock: [1, 1], output: dest") +
        sub("e", "type: exp, inputs: [dest], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-binary-sfpu");
  }
}

// ---------------------------------------------------------------- intermediates

TEST_CASE("fused-op intermediate buffer rules", "[fused]") {
  Case c;
  SECTION("fused-intermed-lifetime: used in a later schedule") {
    c.mblock = "[1, 2]";
    c.fused = schedules(
        {sub("add", "type: datacopy, inputs: [input0], mblock: [1, 2], ublock: [1, 1], output: intermed0") +
             sub("mm", "type: matmul, inputs: [intermed0, input1], attributes: {m_k: 2, u_kt: 1}, mblock: [1, 1], "
                       "ublock: [1, 1], output: intermed1"),
         sub("add1", "type: add, inputs: [intermed0, intermed1], input_1_tms: [broadcast: {c: 2}], "
                     "pop: [intermed0, intermed1], mblock: [1, 2], ublock: [1, 1], output: output")});
    requireRule(c, "fused-intermed-lifetime");
  }
  SECTION("fused-intermed-lifetime: read before written") {
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [intermed0], pop: [intermed0], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-intermed-lifetime");
  }
  SECTION("fused-intermed-not-popped: never popped") {
    c.fused = oneSchedule(sub("np", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
                          sub("s", "type: subtract, inputs: [intermed0, input1], mblock: [1, 1], ublock: [1, 1], "
                                   "output: output"));
    requireRule(c, "fused-intermed-not-popped");
  }
  SECTION("fused-intermed-not-popped: overwritten while holding data") {
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
        sub("b", "type: nop, inputs: [input1], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
        sub("c", "type: nop, inputs: [intermed0], pop: [intermed0], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-intermed-not-popped");
  }
  SECTION("fused-intermed-ublock-reuse") {
    c.ublock = "[1, 3]";
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [2, 2], output: intermed0") +
        sub("b", "type: nop, inputs: [intermed0], pop: [intermed0], mblock: [1, 1], ublock: [2, 2], output: dest") +
        sub("c", "type: nop, inputs: [input1], mblock: [1, 1], ublock: [1, 3], output: intermed0") +
        sub("d", "type: nop, inputs: [intermed0], pop: [intermed0], mblock: [1, 1], ublock: [1, 3], output: output"));
    requireRule(c, "fused-intermed-ublock-reuse");
  }
  SECTION("fused-reblock") {
    c.ublock = "[2, 1]";
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], mblock: [2, 1], ublock: [1, 1], output: intermed0") +
        sub("b", "type: nop, inputs: [intermed0], pop: [intermed0], mblock: [1, 1], ublock: [2, 1], output: output"));
    requireRule(c, "fused-reblock");
  }
  SECTION("fused-dims") {
    c.mblock = "[2, 1]";
    c.fused = schedules(
        {sub("nop0", "type: datacopy, inputs: [input0], mblock: [2, 4], ublock: [2, 1], output: intermed0") +
             sub("mm", "type: matmul, inputs: [intermed0, input1], pop: [intermed0], attributes: {m_k: 4, u_kt: 1}, "
                       "mblock: [2, 1], ublock: [2, 1], output: intermed1"),
         sub("nop1", "type: datacopy, inputs: [intermed1], pop: [intermed1], mblock: [2, 1], ublock: [1, 1], "
                     "output: output")});
    requireRule(c, "fused-dims");
  }
  SECTION("fused-output-shape") {
    c.mblock = "[2, 2]";
    c.fused = oneSchedule(sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-output-shape");
  }
}

// ---------------------------------------------------------------- matmul

TEST_CASE("fused-op matmul rules", "[fused]") {
  Case c;
  SECTION("fused-matmul-output-mk") {
    c.mblock = "[2, 1]";
    c.fused = oneSchedule(
        sub("nop", "type: datacopy, inputs: [input0], mblock: [2, 2], ublock: [1, 1], output: intermed0") +
        sub("mm", "type: matmul, inputs: [intermed0, input1], pop: [intermed0], attributes: {m_k: 2, u_kt: 1}, "
                  "mblock: [2, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-matmul-output-mk");
  }
  SECTION("fused-matmul-input1-intermed") {
    c.fused = schedules(
        {sub("nop", "type: datacopy, inputs: [input0], mblock: [2, 1], ublock: [1, 1], output: intermed0") +
             sub("mm", "type: matmul, inputs: [input1, intermed0], pop: [intermed0], attributes: {m_k: 2, u_kt: 1}, "
                       "mblock: [1, 1], ublock: [1, 1], output: intermed1"),
         sub("out", "type: datacopy, inputs: [intermed1], pop: [intermed1], mblock: [1, 1], ublock: [1, 1], "
                    "output: output")});
    requireRule(c, "fused-matmul-input1-intermed");
  }
  SECTION("fused-matmul-input0-intermed") {
    c.mblock = "[1, 2]";
    c.fused = schedules(
        {sub("mm0", "type: matmul, inputs: [input0, input1], attributes: {m_k: 1, u_kt: 1}, mblock: [1, 1], "
                    "ublock: [1, 1], output: intermed0"),
         sub("mm1", "type: matmul, inputs: [intermed0, input2], pop: [intermed0], attributes: {m_k: 1, u_kt: 1}, "
                    "mblock: [1, 2], ublock: [1, 1], output: intermed1"),
         sub("out", "type: nop, inputs: [intermed1], pop: [intermed1], mblock: [1, 2], ublock: [1, 1], "
                    "output: output")});
    requireRule(c, "fused-matmul-input0-intermed");
  }
  SECTION("fused-matmul-input1-fork") {
    c.mblock = "[1, 2]";
    c.fused = schedules(
        {sub("mm", "type: matmul, inputs: [input0, input1], attributes: {m_k: 1, u_kt: 1}, mblock: [1, 2], "
                   "ublock: [1, 1], output: intermed0"),
         sub("add", "type: add, inputs: [intermed0, input1], pop: [intermed0], mblock: [1, 2], ublock: [1, 1], "
                    "output: output")});
    requireRule(c, "fused-matmul-input1-fork");
  }
  SECTION("fused-matmul-intermed-dims") {
    c.mblock = "[8, 1]";
    c.fused = schedules(
        {sub("mul", "type: multiply, inputs: [input0, input1], mblock: [8, 1], ublock: [1, 4], output: intermed0") +
             sub("mm", "type: matmul, inputs: [intermed0, input2], attributes: {m_k: 4, u_kt: 1}, pop: [intermed0], "
                       "mblock: [8, 1], ublock: [1, 1], output: intermed1"),
         sub("out", "type: nop, inputs: [intermed1], pop_last: [intermed1], mblock: [8, 1], ublock: [1, 1], "
                    "output: output")});
    requireRule(c, "fused-matmul-intermed-dims");
  }
  SECTION("fused-grid-matmul") {
    c.grid = "[1, 2]";
    c.fused = schedules(
        {sub("mm", "type: matmul, inputs: [input0, input1], attributes: {m_k: 2, u_kt: 1}, mblock: [1, 1], "
                   "ublock: [1, 1], output: intermed0"),
         sub("out", "type: nop, inputs: [intermed0], pop: [intermed0], mblock: [1, 1], ublock: [1, 1], "
                    "output: output")},
        3, 1);
    requireRule(c, "fused-grid-matmul");
  }
  SECTION("fused-matmul-count") {
    c.grid = "[2, 1]";
    std::string mm = "type: matmul, inputs: [input0, input1], attributes: {m_k: 1, u_kt: 1}, mblock: [1, 1], "
                     "ublock: [1, 1], output: intermed";
    c.fused = schedules({sub("mm0", mm + "0"), sub("mm1", mm + "1"), sub("mm2", mm + "2"),
                         sub("a", "type: add, inputs: [intermed0, intermed1], pop: [intermed0, intermed1], "
                                  "mblock: [1, 1], ublock: [1, 1], output: dest") +
                             sub("b", "type: add, inputs: [dest, intermed2], pop: [intermed2], mblock: [1, 1], "
                                      "ublock: [1, 1], output: output")},
                        3, 3);
    requireRule(c, "fused-matmul-count");
    c.grid = "[1, 1]"; // a single core needs no multicast
    requireClean(c);
  }
}

// ---------------------------------------------------------------- op-level settings

TEST_CASE("fused-op rules that depend on the graph op", "[fused]") {
  Case c;
  SECTION("fused-ublock-order") {
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], ublock_order: c, mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-ublock-order");
  }
  SECTION("fused-math-fidelity") {
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], math_fidelity: LoFi, mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-math-fidelity");
  }
  SECTION("fused-reduce-row-order") {
    c.mblock = "[1, 2]";
    c.fused = schedules(
        {sub("a", "type: nop, inputs: [input0], mblock: [2, 2], ublock: [1, 1], output: intermed0") +
             sub("r", "type: reduce, inputs: [intermed0], pop: [intermed0], attributes: {type: sum, dim: r, m_k: 2, "
                      "u_kt: 1}, mblock: [1, 2], ublock: [1, 1], output: intermed1"),
         sub("o", "type: nop, inputs: [intermed1], pop: [intermed1], mblock: [1, 2], ublock: [1, 1], output: output")});
    requireRule(c, "fused-reduce-row-order");
    c.order = "c";
    requireClean(c);
  }
  SECTION("fused-reduce-col-order") {
    c.order = "c";
    c.mblock = "[2, 1]";
    c.fused = schedules(
        {sub("a", "type: nop, inputs: [input0], mblock: [2, 2], ublock: [1, 1], output: intermed0") +
             sub("r", "type: reduce, inputs: [intermed0], pop: [intermed0], attributes: {type: sum, dim: c, m_k: 2, "
                      "u_kt: 1}, mblock: [2, 1], ublock: [1, 1], output: intermed1"),
         sub("o", "type: nop, inputs: [intermed1], pop: [intermed1], mblock: [2, 1], ublock: [1, 1], output: output")});
    requireRule(c, "fused-reduce-col-order");
    c.order = "r";
    requireClean(c);
  }
}

// ---------------------------------------------------------------- integer fused ops

TEST_CASE("integer fused-op rules", "[fused]") {
  Case c;
  c.arch = Arch::WormholeB0;
  c.inDf = "[Int8, Int8, Float32]";
  c.accDf = "Int32";
  c.outDf = "Int8";
  c.intermedDf = "Int8";
  SECTION("fused-int-op-type") {
    c.fused = oneSchedule(sub("a", "type: exp, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-int-op-type");
  }
  SECTION("fused-int-float-mix") {
    c.accDf = "Float16_b";
    c.fused = oneSchedule(
        sub("a", "type: add, inputs: [input0, input1], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-int-float-mix");
  }
  SECTION("fused-int-dest-input") {
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: dest") +
        sub("b", "type: add, inputs: [dest, input1], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-int-dest-input");
  }
  SECTION("fused-int-formats: intermediate format") {
    c.intermedDf = "Float16_b";
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
        sub("b", "type: add, inputs: [intermed0, input1], pop: [intermed0], mblock: [1, 1], ublock: [1, 1], "
                 "output: output"));
    requireRule(c, "fused-int-formats");
  }
  SECTION("fused-int-formats: quantization without Int32 accumulation") {
    c.accDf = "Float16_b";
    c.inDf = "[Float32, Float32, Float32]";
    c.fused = oneSchedule(
        sub("q", "type: quantization, inputs: [input0, input1], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-int-formats");
  }
  SECTION("fused-int-input-df") {
    c.fused = oneSchedule(
        sub("a", "type: multiply, inputs: [input0, input2], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-int-input-df");
  }
  SECTION("fused-int-output-df") {
    c.outDf = "Float16_b";
    c.fused = oneSchedule(
        sub("a", "type: add, inputs: [input0, input1], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-int-output-df");
  }
  SECTION("fused-int-ublock-size") {
    c.ublock = "[2, 2]";
    c.inDf = "[Float32, Int8, Float32]";
    c.outDf = "Float32";
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input1], mblock: [1, 1], ublock: [2, 2], output: dest") +
        sub("d", "type: dequantization, inputs: [input0, dest], mblock: [1, 1], ublock: [2, 2], output: output"));
    requireRule(c, "fused-int-ublock-size");
  }
  SECTION("fused-int-quantization-inputs") {
    c.fused = oneSchedule(
        sub("q", "type: quantization, inputs: [input0, input2], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-int-quantization-inputs");
  }
  SECTION("fused-int-requant-inputs") {
    c.fused = oneSchedule(
        sub("a", "type: nop, inputs: [input1], mblock: [1, 1], ublock: [1, 1], output: dest") +
        sub("r", "type: requantization, inputs: [input0, dest], mblock: [1, 1], ublock: [1, 1], output: output"));
    requireRule(c, "fused-int-requant-inputs");
  }
}

// ---------------------------------------------------------------- reporting policy

TEST_CASE("fused-op diagnostics name the sub-op and the user, once per problem", "[fused]") {
  Case c;
  c.users = 3;
  c.fused = oneSchedule(sub("np", "type: nop, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
                        sub("s", "type: subtract, inputs: [intermed0, input1], mblock: [1, 1], ublock: [1, 1], "
                                 "output: output"));
  DiagnosticEngine diags = check(c);
  INFO(dump(diags));
  REQUIRE(diags.errorCount() == 1);
  const Diagnostic& d = diags.diagnostics().front();
  CHECK(d.rule == "fused-intermed-not-popped");
  CHECK(d.message.find("fused op '0' schedule 0 sub-op 's': ") == 0);
  bool namesUser = false;
  for (const DiagNote& n : d.notes) namesUser |= n.message == "op 'op0' in graph 'g' uses fused op '0'";
  CHECK(namesUser);
}

TEST_CASE("op-level problems are reported for each offending user", "[fused]") {
  Case c;
  c.users = 2;
  c.grid = "[2, 1]";
  c.mblock = "[2, 1]";
  c.fused = oneSchedule(
      sub("nop", "type: datacopy, inputs: [input0], mblock: [1, 1], ublock: [1, 1], output: intermed0") +
      sub("b", "type: datacopy, inputs: [intermed0], pop: [intermed0], input_0_tms: [broadcast: {r: 2}], "
               "mblock: [2, 1], ublock: [1, 1], output: output"));
  DiagnosticEngine diags = check(c);
  INFO(dump(diags));
  CHECK(diags.errorCount() == 2); // one fused-grid-broadcast per op, at each op's grid_size
  for (const Diagnostic& d : diags.diagnostics()) CHECK(d.rule == "fused-grid-broadcast");
}

TEST_CASE("an unreferenced fused op is checked for op-independent rules only", "[fused]") {
  Case c;
  c.users = 0;
  c.fused = oneSchedule(
      sub("nop", "type: datacopy, inputs: [input0], mblock: [2, 1], ublock: [1, 1], output: intermed0") +
      sub("b", "type: datacopy, inputs: [intermed0], pop: [intermed0], input_0_tms: [broadcast: {r: 2}], "
               "mblock: [4, 1], ublock: [1, 1], output: output"));
  DiagnosticEngine diags = check(c);
  INFO(dump(diags));
  CHECK(diags.hasRule("fused-bcast-mblock"));      // about the fused op itself
  CHECK_FALSE(diags.hasRule("fused-output-shape")); // needs a graph op
  for (const Diagnostic& d : diags.diagnostics())
    for (const DiagNote& n : d.notes) CHECK(n.message.find(" uses fused op ") == std::string::npos);
}
