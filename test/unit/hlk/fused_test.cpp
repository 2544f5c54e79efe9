// Unit tests of the fused-op planner of net2hlks (lib/hlk/fused.cpp): chains,
// lockstep groups, streamed and whole reads, buffer capacities (worked out by
// hand below), the tile-level verifier, and the diagnostics net2hlks adds to
// the validator's fused-op rules.
#include "hlk_test_util.hpp"

#include "hlk/fused.hpp"

#include <catch2/catch.hpp>

using namespace tessera;
using namespace tessera::hlk;
using namespace hlktest;
using netlist::UblockOrder;

namespace {

// One fused_op graph op `op` on inputs q0..q<n-1> (2x4 tiles each:
// mblock [2, 2] x ublock [1, 2]) writing `out`, and fused op 0 = `fused`.
std::string fusedNetlist(int inputs, const std::string& fused, const std::string& order = "r",
                         const std::string& arch = "grayskull") {
  std::string queues, ins, dfs;
  for (int i = 0; i < inputs; ++i) {
    queues += queue("q" + std::to_string(i), "HOST", "t: 1, mblock: [2, 2], ublock: [1, 2]", "Float16_b", i + 1);
    ins += (i ? ", q" : "q") + std::to_string(i);
    dfs += i ? ", Float16_b" : "Float16_b";
  }
  queues += queue("out", "op", "t: 1, mblock: [2, 2], ublock: [1, 2]", "Float16_b", 9);
  return "devices:\n  arch: " + arch + "\nqueues:\n" + queues +
         "graphs:\n  g:\n    target_device: 0\n    input_count: 1\n"
         "    op: {type: fused_op, grid_loc: [0, 0], grid_size: [1, 1], inputs: [" + ins + "], in_df: [" + dfs +
         "], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, math_fidelity: HiFi4, t: 1, "
         "mblock: [2, 2], ublock: [1, 2], ublock_order: " + order + ", attributes: {fused_op_id: 0}}\n"
         "programs:\n  - run:\n    - execute: {graph_name: g}\n"
         "fused_ops:\n  0:\n" + fused;
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// softmax over rows: exp, sum over c into intermed1, reciprocal, and
// exp(x) * (1/sum) with the sum broadcast over the columns.
const std::string kSoftmax = R"(    inputs: 2
    intermediates: 2
    schedules:
      -
        - e0: {type: exp, inputs: [input0], mblock: [2, 2], ublock: [1, 2], output: intermed0}
        - s0: {type: reduce, inputs: [intermed0], pop: [intermed0], attributes: {dim: c, type: sum, m_k: 2, u_kt: 2}, mblock: [2, 1], ublock: [1, 1], output: intermed1}
      -
        - r0: {type: reciprocal, inputs: [intermed1], pop: [intermed1], mblock: [2, 1], ublock: [1, 1], output: intermed1}
        - e1: {type: exp, inputs: [input1], mblock: [2, 2], ublock: [1, 2], output: dest}
        - m0: {type: multiply, inputs: [dest, intermed1], input_1_tms: [broadcast: {c: 4}, tile_broadcast: c], pop: [intermed1], mblock: [2, 2], ublock: [1, 2], output: output}
)";

} // namespace

TEST_CASE("fused softmax: chains, groups, reads and capacities", "[hlk][fused]") {
  auto l = load(fusedNetlist(2, kSoftmax));
  auto c = configure(l, "op");
  REQUIRE(c->config);
  const KernelConfig& k = *c->config;
  REQUIRE(k.family == Family::Fused);
  const FusedPlan& p = *k.fused;
  REQUIRE(p.subs.size() == 5);
  // Groups: e0 | s0 (reduce) | r0 | e1 -> dest -> m0. r0 writes [2, 1] x [1, 1],
  // the e1/m0 chain [2, 2] x [1, 2]: different blocks, so no lockstep.
  REQUIRE(p.groups.size() == 4);
  CHECK(p.groups[0].chains.size() == 1);
  CHECK(p.groups[3].chains.size() == 1);
  CHECK(p.groups[3].chains[0].subs == std::vector<size_t>{3, 4});
  // input0 and input1 each have a single reader in its own blocking: streamed.
  CHECK(p.subs[0].inputs[0].kind == ReadPlan::Kind::Stream);
  CHECK(p.subs[3].inputs[0].kind == ReadPlan::Kind::Stream);
  // s0 reads all of intermed0 (8 tiles): waited for whole, popped at the end.
  REQUIRE(p.groups[1].waitAtStart.size() == 1);
  CHECK(p.groups[1].waitAtStart[0].operand == 24);
  CHECK(p.groups[1].waitAtStart[0].tiles == 8);
  CHECK(p.subs[1].mK * p.subs[1].uKt == 4);
  // m0 reads intermed1 (2x1 tiles) broadcast to 2x4 tiles: column = col % 1, tile_broadcast c.
  const ReadPlan& bcast = p.subs[4].inputs[1];
  CHECK(bcast.kind == ReadPlan::Kind::Random);
  CHECK(bcast.colsMod == 1);
  CHECK(bcast.rowsMod == 0);
  CHECK(bcast.tileBcast == contract::kBcastCol);
  CHECK(bcast.layout == Layout{1, {2, 1}, {1, 1}, UblockOrder::R});
  CHECK(p.subs[4].inputs[0].kind == ReadPlan::Kind::Dest);
  CHECK(p.spillOperand == -1);

  // Capacities: intermed0 holds e0's whole 8-tile block until s0 ends;
  // intermed1 holds s0's 2 tiles plus r0's 2 (r0 reads one value and writes
  // the next into the same buffer) = 4.
  CHECK(operand(k, 0).minTiles == 2);
  CHECK(operand(k, 1).minTiles == 2);
  CHECK(operand(k, 16).minTiles == 2);
  CHECK(operand(k, 24).role == OperandRole::Intermediate);
  CHECK(operand(k, 24).minTiles == 8);
  CHECK(operand(k, 25).minTiles == 4);
  CHECK(*operand(k, 0).layout == Layout{1, {2, 2}, {1, 2}, UblockOrder::R});

  CHECK(verifyFusedPlan(p).error.empty());
  KernelText text = renderKernel(k);
  CHECK(contains(text.source, "hlk_binary_tile_dest_a(kEltMul, 25, tile_index<2, 1, 1, 1, true>(row, (col) % 1), d, kBcastCol);"));
  CHECK(contains(text.source, "hlk_reduce_tile(kReduceSum, kReduceCols, 24, tile_index<2, 2, 1, 2, true>(ubR * 1 + h, k), h, 0x3F800000u, k != 0);"));
  CHECK(contains(text.source, "hlk_wait_tiles(24, 8);"));
  CHECK(contains(text.argsHeader, "constexpr int kIntermediates = 2;"));
  CHECK(contains(text.argsHeader, "constexpr int kSpillOperand = -1;"));
}

TEST_CASE("the verifier finds a wrong index, a missing pop and a hanging wait", "[hlk][fused]") {
  auto l = load(fusedNetlist(2, kSoftmax));
  auto c = configure(l, "op");
  REQUIRE(c->config);
  {
    FusedPlan bad = *c->config->fused;
    bad.subs[4].inputs[1].colsMod = 0; // read intermed1 at (row, col): past its one column
    CHECK_FALSE(verifyFusedPlan(bad).error.empty());
  }
  {
    FusedPlan bad = *c->config->fused;
    bad.groups[1].popAtEnd.clear(); // intermed0 never popped
    CHECK(contains(verifyFusedPlan(bad).error, "operand 24 ends the t with 8 tile(s)"));
  }
  {
    FusedPlan bad = *c->config->fused;
    bad.groups[1].waitAtStart[0].tiles = 9; // more than e0 ever writes
    CHECK(contains(verifyFusedPlan(bad).error, "it would hang"));
  }
}

TEST_CASE("element-wise chains of one block run in lockstep; the value between them streams", "[hlk][fused]") {
  auto l = load(fusedNetlist(2, R"(    inputs: 2
    intermediates: 1
    schedules:
      -
        - a: {type: exp, inputs: [input0], mblock: [2, 2], ublock: [1, 2], output: intermed0}
        - b: {type: add, inputs: [intermed0, input1], pop: [intermed0], mblock: [2, 2], ublock: [1, 2], output: output}
)"));
  auto c = configure(l, "op");
  REQUIRE(c->config);
  const FusedPlan& p = *c->config->fused;
  REQUIRE(p.groups.size() == 1);
  REQUIRE(p.groups[0].chains.size() == 2);
  CHECK(p.subs[1].inputs[0].kind == ReadPlan::Kind::Stream);
  CHECK(p.groups[0].waitAtStart.empty());
  // intermed0 only ever holds the ublock in flight: 1x2 tiles.
  CHECK(operand(*c->config, 24).minTiles == 2);
  CHECK(contains(renderKernel(*c->config).source, "hlk_wait_tiles(24, 2);  // intermed0 from 'a': streamed"));
}

TEST_CASE("an input read in two tile orders is rejected", "[hlk][fused]") {
  // With ublock_order c, input0 as matmul input 0 (mblock [2, 1] x ublock
  // [1, 4]: row-major) and as the add's input (mblock [2, 2] x ublock [1, 2],
  // column-major ublocks) would have to arrive in two orders.
  auto l = load(
      "devices:\n  arch: grayskull\nqueues:\n" +
      queue("q0", "HOST", "t: 1, mblock: [2, 2], ublock: [1, 2]", "Float16_b", 1) +
      queue("q1", "HOST", "t: 1, mblock: [1, 1], ublock: [4, 1]", "Float16_b", 2) +
      queue("out", "op", "t: 1, mblock: [2, 2], ublock: [1, 2]", "Float16_b", 3) +
      "graphs:\n  g:\n    target_device: 0\n    input_count: 1\n"
      "    op: {type: fused_op, grid_loc: [0, 0], grid_size: [1, 1], inputs: [q0, q1], in_df: [Float16_b, Float16_b], "
      "out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, math_fidelity: HiFi4, t: 1, "
      "mblock: [2, 2], ublock: [1, 2], ublock_order: c, attributes: {fused_op_id: 0}}\n"
      "programs:\n  - run:\n    - execute: {graph_name: g}\n"
      "fused_ops:\n  0:\n"
      R"(    inputs: 2
    intermediates: 1
    schedules:
      -
        - mm: {type: matmul, inputs: [input0, input1], attributes: {m_k: 1, u_kt: 4}, mblock: [2, 1], ublock: [1, 1], output: intermed0}
      -
        - sub: {type: subtract, inputs: [input0, intermed0], input_1_tms: [broadcast: {c: 4}], pop: [intermed0], mblock: [2, 2], ublock: [1, 2], output: output}
)");
  auto c = configure(l, "op");
  CHECK_FALSE(c->config);
  REQUIRE(c->diags.errorCount() >= 1);
  const Diagnostic& d = c->diags.diagnostics()[0];
  CHECK(d.rule == "hlk-fused-input-layout");
  CHECK(contains(d.message, "fused op '0' schedule 1 sub-op 'sub': reads input0 as mblock [2, 2] x ublock [1, 2]"));
  CHECK(contains(d.message, "but sub-op 'mm' reads it as mblock [2, 1] x ublock [1, 4]"));
  REQUIRE(d.notes.size() == 2);
  CHECK(d.notes[1].message == "op 'op' in graph 'g' uses fused op '0'");
}

TEST_CASE("a dest value nobody reads is rejected; unsupported sub-op types are named", "[hlk][fused]") {
  auto l = load(fusedNetlist(2, R"(    inputs: 2
    intermediates: 0
    schedules:
      -
        - a: {type: exp, inputs: [input0], mblock: [2, 2], ublock: [1, 2], output: dest}
        - b: {type: sqrt, inputs: [input1], mblock: [2, 2], ublock: [1, 2], output: output}
)"));
  auto c = configure(l, "op");
  CHECK_FALSE(c->config);
  REQUIRE(c->diags.errorCount() >= 1);
  CHECK(c->diags.diagnostics()[0].rule == "hlk-fused-dest-chain");
  CHECK(contains(c->diags.diagnostics()[0].message,
                 "fused op '0' schedule 0 sub-op 'a': writes dest, but the next sub-op of the schedule does not read it"));

  auto q = load(fusedNetlist(1, R"(    inputs: 1
    intermediates: 0
    schedules:
      -
        - drop: {type: dropout, inputs: [input0], attributes: {p: 0.1}, mblock: [2, 2], ublock: [1, 2], output: output}
)"),
                false);
  auto cq = configure(q, "op");
  CHECK_FALSE(cq->config);
  REQUIRE(cq->diags.errorCount() >= 1);
  CHECK(cq->diags.diagnostics()[0].rule == "hlk-fused-unsupported");
  CHECK(contains(cq->diags.diagnostics()[0].message,
                 "fused op '0' schedule 0 sub-op 'drop': dropout with p = 0.1 (random; only p = 0, the identity, is "
                 "modelled) is not supported by net2hlks yet"));
}

// in0 2x4 tiles (q0), in1 4x2 tiles: m_k 2 x u_kt 2; output [2, 2] x [1, 1]
// into intermed0, then a nop to the output... blocked [2, 2] x [1, 1] too.
static std::string fusedMatmulNetlist(const std::string& intermedDf) {
  return "devices:\n  arch: grayskull\nqueues:\n" +
         queue("q0", "HOST", "t: 1, mblock: [2, 2], ublock: [1, 2]", "Float16_b", 1) +
         queue("q1", "HOST", "t: 1, mblock: [2, 2], ublock: [2, 1]", "Float16_b", 2) +
         queue("out", "op", "t: 1, mblock: [2, 2], ublock: [1, 1]", "Float16_b", 3) +
         "graphs:\n  g:\n    target_device: 0\n    input_count: 1\n"
         "    op: {type: fused_op, grid_loc: [0, 0], grid_size: [1, 1], inputs: [q0, q1], in_df: [Float16_b, Float16_b], "
         "out_df: Float16_b, intermed_df: " + intermedDf + ", acc_df: Float16_b, math_fidelity: HiFi4, t: 1, "
         "mblock: [2, 2], ublock: [1, 1], attributes: {fused_op_id: 0}}\n"
         "programs:\n  - run:\n    - execute: {graph_name: g}\n"
         "fused_ops:\n  0:\n"
         R"(    inputs: 2
    intermediates: 1
    schedules:
      -
        - mm: {type: matmul, inputs: [input0, input1], attributes: {m_k: 2, u_kt: 2}, mblock: [2, 2], ublock: [1, 1], output: intermed0}
      -
        - n: {type: nop, inputs: [intermed0], pop: [intermed0], mblock: [2, 2], ublock: [1, 1], output: output}
)";
}

TEST_CASE("fused matmul with m_k > 1 sums in dest, one output ublock at a time", "[hlk][fused]") {
  // intermed_df is dest's format: no operand for partial sums (as BUDA's).
  auto l = load(fusedMatmulNetlist("Float16_b"));
  auto c = configure(l, "op");
  REQUIRE(c->config);
  const KernelConfig& k = *c->config;
  CHECK(k.fused->spillOperand == -1);
  for (const OperandInfo& o : k.operands) CHECK(o.operand != 25);
  // The nop runs with the matmul, output ublock by ublock: intermed0 holds one.
  CHECK(operand(k, 24).minTiles == 1);
  // Matmul inputs are held whole: in0 2x4 = 8 tiles, in1 4x2 = 8 tiles.
  CHECK(operand(k, 0).minTiles == 8);
  CHECK(*operand(k, 0).layout == Layout{1, {2, 2}, {1, 2}, UblockOrder::R});
  // Input 1 column of ublocks by column, as BUDA's net2pipe sends it to a fused matmul.
  CHECK(*operand(k, 1).layout == Layout{1, {2, 2}, {2, 1}, UblockOrder::C});
  CHECK(verifyFusedPlan(*k.fused).error.empty());
  CHECK_FALSE(contains(renderKernel(k).source, "begin_sum<1>"));
}

TEST_CASE("fused matmul whose intermed_df would round the partial sums spills one ublock of them", "[hlk][fused]") {
  auto l = load(fusedMatmulNetlist("Bfp8_b"));
  auto c = configure(l, "op");
  REQUIRE(c->config);
  const KernelConfig& k = *c->config;
  CHECK(k.fused->spillOperand == 25);
  CHECK(operand(k, 25).role == OperandRole::Spill);
  CHECK(operand(k, 25).minTiles == 1); // one output ublock's partial sums, not the block's 4
  CHECK(operand(k, 24).minTiles == 1);
  CHECK(verifyFusedPlan(*k.fused).error.empty());
  CHECK(contains(renderKernel(k).source, "pack_tiles(25, 1);  // partial sums"));
}

// A matmul whose input 0 the lockstep group before it writes runs interleaved
// with it: a row of ublocks (m_k of them) when its output is wider than one
// ublock, one ublock (with a one-ublock spill) when it is one ublock wide.
TEST_CASE("fused matmul fed by the group before it holds one row or one ublock of its input 0", "[hlk][fused]") {
  auto netlist = [](const std::string& outBlock, const std::string& in1Block, int64_t mk) {
    return "devices:\n  arch: grayskull\nqueues:\n" +
           queue("q0", "HOST", "t: 1, mblock: [2, " + std::to_string(mk) + "], ublock: [1, 2]", "Float16_b", 1) +
           queue("q1", "HOST", "t: 1, " + in1Block, "Float16_b", 2) +
           queue("out", "op", "t: 1, " + outBlock + ", ublock: [1, 1]", "Float16_b", 3) +
           "graphs:\n  g:\n    target_device: 0\n    input_count: 1\n"
           "    op: {type: fused_op, grid_loc: [0, 0], grid_size: [1, 1], inputs: [q0, q1], in_df: [Float16_b, "
           "Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, math_fidelity: HiFi4, t: 1, " +
           outBlock + ", ublock: [1, 1], attributes: {fused_op_id: 0}}\n"
           "programs:\n  - run:\n    - execute: {graph_name: g}\n"
           "fused_ops:\n  0:\n    inputs: 2\n    intermediates: 2\n    schedules:\n      -\n"
           "        - a: {type: abs, inputs: [input0], mblock: [2, " + std::to_string(mk) +
           "], ublock: [1, 2], output: intermed0}\n"
           "        - mm: {type: matmul, inputs: [intermed0, input1], " + outBlock +
           ", ublock: [1, 1], pop: [intermed0], attributes: {m_k: " + std::to_string(mk) +
           ", u_kt: 2}, output: intermed1}\n      -\n"
           "        - n: {type: nop, inputs: [intermed1], " + outBlock + ", ublock: [1, 1], pop: [intermed1], output: output}\n";
  };
  SECTION("rows: output mblock [2, 2], m_k 3") {
    auto l = load(netlist("mblock: [2, 2]", "mblock: [3, 2], ublock: [2, 1]", 3));
    auto c = configure(l, "op");
    REQUIRE(c->config);
    const KernelConfig& k = *c->config;
    // The nop of the next schedule joins the matmul's group (its output streams).
    REQUIRE(k.fused->groups.size() == 2);
    CHECK(k.fused->groups[1].chains.size() == 2);
    CHECK(operand(k, 25).minTiles == 1);
    CHECK(k.fused->groups[1].feed == GroupPlan::Feed::Rows);
    CHECK(k.fused->groups[1].feedTiles == 6);
    CHECK(operand(k, 24).minTiles == 6); // one row: 3 ublocks of 2 (the whole value: 12)
    CHECK(k.fused->spillOperand == -1);
    CHECK(verifyFusedPlan(*k.fused).error.empty());
    CHECK(contains(renderKernel(k).source, "hlk_wait_tiles(24, 6);  // intermed0: this row"));
  }
  SECTION("ublocks: output mblock [2, 1], m_k 4") {
    auto l = load(netlist("mblock: [2, 1]", "mblock: [4, 1], ublock: [2, 1]", 4));
    auto c = configure(l, "op");
    REQUIRE(c->config);
    const KernelConfig& k = *c->config;
    REQUIRE(k.fused->groups.size() == 2);
    CHECK(k.fused->groups[1].chains.size() == 2);
    CHECK(operand(k, 25).minTiles == 1);
    CHECK(k.fused->groups[1].feed == GroupPlan::Feed::Ublocks);
    CHECK(operand(k, 24).minTiles == 2); // one ublock (the whole value: 16)
    CHECK(k.fused->spillOperand == 26);
    CHECK(operand(k, 26).minTiles == 1); // one output ublock of partial sums
    CHECK(verifyFusedPlan(*k.fused).error.empty());
  }
}
