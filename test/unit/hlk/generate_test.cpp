// Unit tests of kernel generation over a netlist (lib/hlk/driver.cpp) and of
// the manifest text (manifest.cpp): identical configurations share a kernel
// directory, the selection flags, and the manifest's fields.
#include "hlk_test_util.hpp"

#include "hlk/driver.hpp"

#include <catch2/catch.hpp>

using namespace tessera;
using namespace tessera::hlk;
using namespace hlktest;

namespace {

// Two graphs: g0 with adds a0, a1 (same configuration) and a2 (Bfp8_b
// output), g1 with the unary e0.
std::string twoGraphs() {
  const std::string add = "type: add, grid_size: [1, 1], inputs: [x, y], in_df: [Float16_b, Float16_b], "
                          "intermed_df: Float16_b, acc_df: Float16_b, math_fidelity: HiFi4, t: 1, "
                          "mblock: [1, 1], ublock: [1, 1]";
  return "devices:\n  arch: grayskull\nqueues:\n" +
         queue("x", "HOST", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Float16_b", 1) +
         queue("y", "HOST", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Float16_b", 2) +
         queue("o0", "a0", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Float16_b", 3) +
         queue("o1", "a1", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Float16_b", 4) +
         queue("o2", "a2", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Bfp8_b", 5) +
         queue("o3", "e0", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Float16_b", 6) +
         "graphs:\n"
         "  g0:\n    target_device: 0\n    input_count: 4\n"
         "    a0: {grid_loc: [0, 0], out_df: Float16_b, " + add + "}\n"
         "    a1: {grid_loc: [0, 1], out_df: Float16_b, " + add + "}\n"
         "    a2: {grid_loc: [0, 2], out_df: Bfp8_b, " + add + "}\n"
         "  g1:\n    target_device: 0\n    input_count: 1\n"
         "    e0: {type: exp, grid_loc: [0, 0], grid_size: [1, 1], inputs: [x], in_df: [Float16_b], out_df: Float16_b, "
         "intermed_df: Float16_b, acc_df: Float16_b, math_fidelity: HiFi4, t: 1, mblock: [1, 1], ublock: [1, 1]}\n"
         "programs:\n  - run:\n    - execute: {graph_name: g0}\n    - execute: {graph_name: g1}\n";
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

} // namespace

TEST_CASE("identical configurations share one kernel directory", "[hlk]") {
  auto l = load(twoGraphs());
  DiagnosticEngine diags;
  Generation gen;
  REQUIRE(generateKernels(l.nl, l.target(), {}, diags, gen));
  CHECK(diags.errorCount() == 0);
  REQUIRE(gen.ops.size() == 4);
  CHECK(gen.ops[0].op == "a0");
  CHECK(gen.ops[3].op == "e0");
  CHECK(gen.ops[0].kernelDir == gen.ops[1].kernelDir);
  CHECK(gen.ops[0].kernelDir != gen.ops[2].kernelDir);
  CHECK(gen.ops[0].inputCount == 4);
  CHECK(gen.ops[3].inputCount == 1);
  REQUIRE(gen.kernels.size() == 3);
  for (size_t i = 1; i < gen.kernels.size(); ++i) CHECK(gen.kernels[i - 1].dir < gen.kernels[i].dir);
  for (const KernelDir& k : gen.kernels) {
    CHECK(k.dir == "kernels/" + std::string(familyName(k.family)) + "-" + contentHash(k.text));
    if (k.dir == gen.ops[0].kernelDir) CHECK(k.users == std::vector<std::string>{"g0/a0", "g0/a1"});
  }
}

TEST_CASE("--graph and --op select what is generated", "[hlk]") {
  auto l = load(twoGraphs());
  DiagnosticEngine diags;
  Generation byGraph, byOp;
  REQUIRE(generateKernels(l.nl, l.target(), {"g1", ""}, diags, byGraph));
  REQUIRE(byGraph.ops.size() == 1);
  CHECK(byGraph.ops[0].op == "e0");
  REQUIRE(generateKernels(l.nl, l.target(), {"", "a2"}, diags, byOp));
  REQUIRE(byOp.ops.size() == 1);
  CHECK(byOp.ops[0].op == "a2");
  CHECK(byOp.kernels.size() == 1);
}

TEST_CASE("manifest: kernels, ops, operands", "[hlk]") {
  auto l = load(twoGraphs());
  DiagnosticEngine diags;
  Generation gen;
  gen.netlist = "two.yaml";
  gen.arch = "grayskull";
  gen.device = "grayskull_10x12";
  REQUIRE(generateKernels(l.nl, l.target(), {"", "a0"}, diags, gen));
  std::string m = manifestYaml(gen);
  const std::string dir = gen.ops[0].kernelDir;
  CHECK(contains(m, "version: 1\nnetlist: two.yaml\narch: grayskull\ndevice: grayskull_10x12\n"));
  CHECK(contains(m, "kernels:\n  - dir: " + dir + "\n    family: binary\n    ops: [g0/a0]\n"));
  CHECK(contains(m, "  # graph 'g0', op 'a0': add on grid [1, 1]\n  - graph: g0\n    op: a0\n    type: add\n"
                    "    kernel: " + dir + "\n    family: binary\n    input_count: 4\n    grid_size: [1, 1]\n"));
  CHECK(contains(m, "      - {operand: 0, role: input, index: 0, source: x, df: Float16_b, t: 1, mblock: [1, 1], "
                    "ublock: [1, 1], ublock_order: r, min_tiles: 1}\n"));
  CHECK(contains(m, "      - {operand: 16, role: output, df: Float16_b, t: 1, mblock: [1, 1], ublock: [1, 1], "
                    "ublock_order: r, untilized: false, min_tiles: 1}\n"));
}

TEST_CASE("ethernet_datacopy gets no kernel: the manifest lists it as skipped", "[hlk]") {
  // Two chips: eth copies x from chip 0 to chip 1, where e1 reads it.
  const std::string df = "in_df: [Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, "
                         "math_fidelity: HiFi4, t: 1, mblock: [1, 1], ublock: [1, 1]";
  auto l = load("devices:\n  arch: wormhole_b0\nqueues:\n" +
                    queue("x", "HOST", "t: 1, mblock: [1, 1], ublock: [1, 1]", "Float16_b", 1) +
                    "  o: {type: queue, input: e1, entries: 2, grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1], "
                    "df: Float16_b, target_device: 1, loc: dram, dram: [[2, 0x10000000]]}\n"
                    "graphs:\n"
                    "  g0:\n    target_device: 0\n    input_count: 1\n"
                    "    eth: {type: ethernet_datacopy, grid_size: [1, 1], inputs: [x], " + df +
                    ", attributes: {dest_device: 1}}\n"
                    "  g1:\n    target_device: 1\n    input_count: 1\n"
                    "    e1: {type: exp, grid_loc: [0, 0], grid_size: [1, 1], inputs: [eth], " + df + "}\n"
                    "programs:\n  - run:\n    - execute: {graph_name: g0}\n    - execute: {graph_name: g1}\n",
                false);
  DiagnosticEngine diags;
  Generation gen;
  REQUIRE(generateKernels(l.nl, l.target(), {}, diags, gen));
  CHECK(diags.errorCount() == 0);
  REQUIRE(gen.ops.size() == 1);
  CHECK(gen.ops[0].op == "e1");
  REQUIRE(gen.skipped.size() == 1);
  CHECK(gen.skipped[0].op == "eth");
  const std::string m = manifestYaml(gen);
  CHECK(contains(m, "\nskipped:\n  - {graph: g0, op: eth, type: ethernet_datacopy, reason: \"runs on ethernet cores, "
                    "which have no Tensix: their streams move the data\"}\n"));
  // Without such ops the manifest has no `skipped` key (its bytes are as before).
  Generation plain;
  REQUIRE(generateKernels(l.nl, l.target(), {"g1", ""}, diags, plain));
  CHECK_FALSE(contains(manifestYaml(plain), "skipped"));
}
