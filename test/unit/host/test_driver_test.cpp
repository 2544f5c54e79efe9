// Unit tests of the test-driver defaults (lib/netlist/test_driver): the
// directory-to-driver rule, each driver's stimulus and comparison values as
// the host and compare libraries read them, and the merge into a netlist's
// test-config. Expected values are read off the upstream driver sources
// (tenstorrent/tt-budabackend), cited per case.
#include "compare/compare.hpp"
#include "host/stimulus.hpp"
#include "netlist/parser.hpp"
#include "netlist/test_driver.hpp"

#include <catch2/catch.hpp>

#include <cfloat>
#include <map>
#include <string>

using namespace tessera;
using netlist::testDriverForPath;

namespace {

host::Stimulus stimulusOf(const std::string& driver, const std::string& queue = "in0") {
  const netlist::TestDriver* d = netlist::findTestDriver(driver);
  REQUIRE(d);
  return host::stimulusFor(d->stimulus ? &*d->stimulus : nullptr, queue);
}

compare::Config comparisonOf(const std::string& driver) {
  const netlist::TestDriver* d = netlist::findTestDriver(driver);
  REQUIRE(d);
  return d->comparison ? compare::configFor(*d->comparison, "out0") : compare::Config{};
}

// A minimal netlist with the given test-config text (empty: none).
netlist::Netlist parse(const std::string& testConfig) {
  std::string text = R"(devices: {arch: grayskull}
queues:
  in0:  {input: HOST, type: queue, entries: 1, grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1], df: Float16, target_device: 0, loc: dram, dram: [[0, 0x10000000]]}
  out0: {input: op0, type: queue, entries: 1, grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1], df: Float16, target_device: 0, loc: dram, dram: [[1, 0x10000000]]}
graphs:
  g0:
    target_device: 0
    input_count: 1
    op0: {type: nop, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], in_df: [Float16], out_df: Float16, intermed_df: Float16, acc_df: Float16, math_fidelity: HiFi4, t: 1, mblock: [1, 1], ublock: [1, 1]}
programs:
  - main:
      - execute: {graph_name: g0}
)" + testConfig;
  DiagnosticEngine diags;
  SourceBuffer source("n.yaml", text);
  auto nl = netlist::parseNetlist(source, diags);
  REQUIRE(nl);
  REQUIRE(diags.errorCount() == 0);
  return *nl;
}

} // namespace

TEST_CASE("the directory rule follows upstream's test directories", "[test-driver]") {
  CHECK(testDriverForPath("/c/netlists/verif/tm_tests/directed/netlist_dram_tm.yaml").name == "test_tm");
  CHECK(testDriverForPath("extended/verif/tm_tests/long_push/test_x/netlist_1.yaml").name == "test_tm");
  CHECK(testDriverForPath("verif/op_tests/netlists/netlist_unary.yaml").name == "test_op");
  CHECK(testDriverForPath("verif/graph_tests/netlists/softmax.yaml").name == "test_graph");
  CHECK(testDriverForPath("verif/data_movement/push/grayskull/singlechip/general/n.yaml").name == "test_graph");
  CHECK(testDriverForPath("verif/template_netlist/netlists/fused_op/n.yaml").name == "test_graph");
  CHECK(testDriverForPath("verif/netlist_tests/netlists/basic/netlist_reduce.yaml").name == "netlist_tests");
  CHECK(testDriverForPath("loader/tests/net_basic/netlist_multi_smaller_input.yaml").name == "test_netlist_program");
  CHECK(testDriverForPath("perf_lib/graph_tests/blackhole/unet.yaml").name == "test_inference");
  // Outside any of them, or only the file name matching: generic.
  CHECK(testDriverForPath("netlist_analyzer/tests/netlists/a.yaml").name == "generic");
  CHECK(testDriverForPath("verif/directed_tests/netlist_binary.yaml").name == "generic");
  CHECK(testDriverForPath("tm_tests.yaml").name == "generic");
  CHECK(testDriverForPath("x/verif/tm_testsX/a.yaml").name == "generic");
  CHECK(testDriverForPath("x/tm_tests/a.yaml").name == "generic"); // both components are needed
  CHECK(testDriverForPath("").name == "generic");
  // The deepest match wins: where the file lives, not where its tree is.
  CHECK(testDriverForPath("/loader/tests/copy/verif/op_tests/n.yaml").name == "test_op");
  CHECK(testDriverForPath("/verif/op_tests/copy/loader/tests/n.yaml").name == "test_netlist_program");
  CHECK(testDriverForPath("verif/graph_tests/../op_tests/n.yaml").name == "test_op"); // lexically normal
  // test_dual_view_ram: its netlists by file name, in verif/netlist_tests only.
  CHECK(testDriverForPath("verif/netlist_tests/netlists/basic_ram/netlist_dual_view_ram_single_graph_2.yaml").name ==
        "test_dual_view_ram");
  CHECK(testDriverForPath("verif/netlist_tests/netlists/basic_ram/netlist_dual_view_ram.yaml").name ==
        "test_dual_view_ram");
  CHECK(testDriverForPath("verif/netlist_tests/netlists/basic_ram/netlist_ram.yaml").name == "netlist_tests");
  CHECK(testDriverForPath("other/netlist_dual_view_ram.yaml").name == "generic");
  CHECK(testDriverForPath("verif/netlist_tests/x/verif/op_tests/netlist_dual_view_ram.yaml").name == "test_op");
}

TEST_CASE("test_tm: DebugTileId and AllClose (verif/tm_tests/test_tm_main.cpp)", "[test-driver]") {
  // generate_tensor({.type=DebugTileId, .debug_tile_id_base=0.01f, .debug_tile_id_step=0.01f})
  host::Stimulus s = stimulusOf("test_tm");
  CHECK(s.kind == host::StimulusKind::DebugTileId);
  CHECK(s.tileIdBase == 0.01);
  CHECK(s.tileIdStep == 0.01);
  // VerifComparisonConfig comp(AllClose); check_pcc 0.98, check_pct 0.80, atol 0.01, rtol 0.025
  compare::Config c = comparisonOf("test_tm");
  CHECK(c.method == compare::Method::AllClose);
  CHECK(c.atol == 0.01);
  CHECK(c.rtol == 0.025);
  CHECK(c.checkPcc == 0.98);
  CHECK(c.checkPct == 0.80);
  // The value of tile 3 of an entry: base + 3 * step.
  formats::Tensor t = host::generateEntry(s, 1, 32, 128, 0, "in0", 0);
  CHECK(t.at(0, 0, 5, 3 * 32 + 7) == Approx(0.04f));
}

TEST_CASE("test_tm_randomize: Normal(0, 1) and AllCloseHw rtol 0.15 (test_tm_main.cpp --randomize)", "[test-driver]") {
  host::Stimulus s = stimulusOf("test_tm_randomize");
  CHECK(s.kind == host::StimulusKind::Normal);
  CHECK(s.mean == 0.0);
  CHECK(s.stddev == 1.0);
  compare::Config c = comparisonOf("test_tm_randomize");
  CHECK(c.method == compare::Method::AllCloseHw);
  CHECK(c.atol == 0.01);
  CHECK(c.rtol == 0.15);
  CHECK(c.checkPcc == 0.98);
  CHECK(c.checkPct == 0.80);
}

TEST_CASE("test_graph: verif/graph_tests/default_test_config.yaml", "[test-driver]") {
  // stimulus-config: {type: Uniform, uniform_lower_bound: -1.0, uniform_upper_bound: 1.0}
  host::Stimulus s = stimulusOf("test_graph");
  CHECK(s.kind == host::StimulusKind::Uniform);
  CHECK(s.lower == -1.0);
  CHECK(s.upper == 1.0);
  // comparison-config: {type: AllCloseHw, atol: 0.01, rtol: 0.15, check_pcc: 0.99, check_pct: 0.80}
  compare::Config c = comparisonOf("test_graph");
  CHECK(c.method == compare::Method::AllCloseHw);
  CHECK(c.atol == 0.01);
  CHECK(c.rtol == 0.15);
  CHECK(c.checkPcc == 0.99);
  CHECK(c.checkPct == 0.80);
}

TEST_CASE("netlist_tests and test_inference: verif/netlist_tests/default_test_config.yaml", "[test-driver]") {
  for (const char* name : {"netlist_tests", "test_inference"}) {
    INFO(name);
    // stimulus-config: {type: Uniform, uniform_lower_bound: 0.001, uniform_upper_bound: 2.0}
    host::Stimulus s = stimulusOf(name);
    CHECK(s.kind == host::StimulusKind::Uniform);
    CHECK(s.lower == 0.001);
    CHECK(s.upper == 2.0);
    // comparison-config: {type: AllCloseHw, atol: 0.01, rtol: 0.15, check_pct: 0.0, check_pcc: 0.98}
    compare::Config c = comparisonOf(name);
    CHECK(c.method == compare::Method::AllCloseHw);
    CHECK(c.atol == 0.01);
    CHECK(c.rtol == 0.15);
    CHECK(c.checkPct == 0.0);
    CHECK(c.checkPcc == 0.98);
  }
}

TEST_CASE("test_netlist_program: every input 1.0 (loader/tests/test_netlist_program.cpp)", "[test-driver]") {
  // get_tilized_tensor: tensor = 1.0f; the driver compares nothing.
  host::Stimulus s = stimulusOf("test_netlist_program");
  CHECK(s.kind == host::StimulusKind::Constant);
  CHECK(s.constant == 1.0);
  CHECK_FALSE(netlist::findTestDriver("test_netlist_program")->comparison);
}

TEST_CASE("generic and test_op add nothing: the loader's own defaults", "[test-driver]") {
  for (const char* name : {"generic", "test_op"}) {
    INFO(name);
    const netlist::TestDriver* d = netlist::findTestDriver(name);
    REQUIRE(d);
    CHECK_FALSE(d->stimulus);
    CHECK_FALSE(d->comparison);
  }
  CHECK(netlist::testDrivers().front().name == "generic");
  CHECK(netlist::findTestDriver("test_bogus") == nullptr);
}

TEST_CASE("defaults fill only the sections a netlist leaves out", "[test-driver]") {
  const netlist::TestDriver& tm = *netlist::findTestDriver("test_tm");
  SECTION("no test-config: both sections") {
    netlist::Netlist nl = parse("");
    netlist::AppliedDefaults a = netlist::applyTestDriver(nl, tm);
    CHECK(a.stimulus);
    CHECK(a.comparison);
    REQUIRE(nl.testConfig);
    CHECK(host::stimulusFor(&*nl.testConfig->stimulus, "in0").kind == host::StimulusKind::DebugTileId);
    CHECK(compare::configFor(*nl.testConfig->comparison, "out0").rtol == 0.025);
  }
  SECTION("test-args only: both sections, test-args kept") {
    netlist::Netlist nl = parse("test-config:\n  test-args: {microbatch_count: 2}\n");
    netlist::AppliedDefaults a = netlist::applyTestDriver(nl, tm);
    CHECK(a.any());
    REQUIRE(nl.testConfig);
    CHECK(nl.testConfig->extra.size() == 1);
    CHECK(nl.testConfig->stimulus);
  }
  SECTION("the netlist's stimulus-config is kept whole") {
    netlist::Netlist nl = parse("test-config:\n  stimulus-config: {type: Constant, constant_value: 3}\n");
    netlist::AppliedDefaults a = netlist::applyTestDriver(nl, tm);
    CHECK_FALSE(a.stimulus);
    CHECK(a.comparison);
    host::Stimulus s = host::stimulusFor(&*nl.testConfig->stimulus, "in0");
    CHECK(s.kind == host::StimulusKind::Constant);
    CHECK(s.constant == 3.0);
  }
  SECTION("a partial comparison-config is not completed from the driver") {
    // BUDA keeps the netlist's `default` entry whole; its omitted fields take
    // tt::constants (atol 1e-3), not the driver's.
    netlist::Netlist nl = parse("test-config:\n  comparison-config: {type: AllCloseHw, rtol: 0.5}\n");
    netlist::AppliedDefaults a = netlist::applyTestDriver(nl, tm);
    CHECK(a.stimulus);
    CHECK_FALSE(a.comparison);
    compare::Config c = compare::configFor(*nl.testConfig->comparison, "out0");
    CHECK(c.rtol == 0.5);
    CHECK(c.atol == 1e-3);
  }
  SECTION("a driver without sections leaves the netlist untouched") {
    netlist::Netlist nl = parse("");
    CHECK_FALSE(netlist::applyTestDriver(nl, *netlist::findTestDriver("generic")).any());
    CHECK_FALSE(nl.testConfig);
  }
}

TEST_CASE("test_inference feeds *eps*, *mean*, *var*, *sum* queues constants", "[test-driver]") {
  // test_inference.cpp push_data_to_device: eps -> epsilon, mean/var ->
  // 1/sequence_length (test-arg, default 128), sum -> 1.0, in that order.
  const netlist::TestDriver& inf = *netlist::findTestDriver("test_inference");
  netlist::Netlist nl = parse("");
  netlist::applyTestDriver(nl, inf);
  const netlist::StimulusConfig& cfg = *nl.testConfig->stimulus;
  host::Stimulus eps = host::stimulusFor(&cfg, "layernorm_eps_mean");
  CHECK(eps.kind == host::StimulusKind::Constant);
  CHECK(eps.constant == Approx(FLT_EPSILON)); // eps before mean
  CHECK(host::stimulusFor(&cfg, "lc.mean").constant == 1.0 / 128);
  CHECK(host::stimulusFor(&cfg, "variance").constant == 1.0 / 128);
  CHECK(host::stimulusFor(&cfg, "reduce_sum_in").constant == 1.0);
  CHECK(host::stimulusFor(&cfg, "input_0").kind == host::StimulusKind::Uniform);

  netlist::Netlist nl384 = parse("test-config:\n  test-args: {sequence_length: 384}\n");
  netlist::applyTestDriver(nl384, inf);
  CHECK(host::stimulusFor(&*nl384.testConfig->stimulus, "x_mean").constant == 1.0 / 384);
}

// A netlist of test_dual_view_ram's shape: `reader` has t = `readerT`.
static netlist::Netlist dualView(int readerT, const std::string& testConfig = "") {
  const std::string t = std::to_string(readerT);
  std::string text = R"(devices: {arch: grayskull}
queues:
  q0:     {input: HOST, type: queue, entries: 4, grid_size: [1, 1], t: )" + t + R"(, mblock: [1, 1], ublock: [1, 1], df: Float16, target_device: 0, loc: dram, dram: [[0, 0x10000000]]}
  writer: {input: op0, type: ram, entries: 4, grid_size: [1, 1], t: )" + t + R"(, mblock: [1, 1], ublock: [1, 1], df: Float16, target_device: 0, loc: dram, dram: [[0, 0x12000000]]}
  reader: {input: HOST, type: ram, alias: writer, entries: 4, grid_size: [1, 1], t: )" + t + R"(, mblock: [1, 1], ublock: [1, 1], df: Float16, target_device: 0, loc: dram, dram: [[0, 0x12000000]]}
graphs:
  g0:
    target_device: 0
    input_count: 1
    op0: {type: nop, grid_loc: [0, 0], grid_size: [1, 1], inputs: [q0], in_df: [Float16], out_df: Float16, intermed_df: Float16, acc_df: Float16, math_fidelity: HiFi4, t: )" + t + R"(, mblock: [1, 1], ublock: [1, 1]}
programs:
  - main:
      - param: [$p_cache_write]
      - execute: {graph_name: g0}
)" + testConfig;
  DiagnosticEngine diags;
  SourceBuffer source("n.yaml", text);
  auto nl = netlist::parseNetlist(source, diags);
  REQUIRE(nl);
  REQUIRE(diags.errorCount() == 0);
  return *nl;
}

TEST_CASE("test_dual_view_ram: params, zeroed rams, default_test_config.yaml (test_dual_view_ram.cpp)",
          "[test-driver]") {
  const netlist::TestDriver* d = netlist::findTestDriver("test_dual_view_ram");
  REQUIRE(d);
  // Its option defaults: write index t_dim_reader / 2, read index 0
  // (rd_cache_index_start -1), loop counts 1, increments 0.
  std::map<std::string, int64_t> got;
  for (const auto& [p, v] : netlist::driverParams(*d, dualView(3))) got[p->name] = v;
  const std::map<std::string, int64_t> want = {
      {"$p_cache_write", 1},        {"$p_cache_read", 0},          {"$p_inner_loop_count", 1},
      {"$p_outer_loop_count", 1},   {"$p_inner_loop_wr_incr", 0},  {"$p_outer_loop_wr_incr", 0},
      {"$p_inner_loop_rd_incr", 0}, {"$p_outer_loop_rd_incr", 0}};
  CHECK(got == want);
  got.clear();
  for (const auto& [p, v] : netlist::driverParams(*d, dualView(7))) got[p->name] = v;
  CHECK(got["$p_cache_write"] == 3);
  // Without a queue named reader the driver has no write index.
  netlist::Netlist none = parse("");
  for (const auto& [p, v] : netlist::driverParams(*d, none)) CHECK(p->name != "$p_cache_write");

  // The stimulus and comparison of verif/netlist_tests/default_test_config.yaml.
  host::Stimulus s = stimulusOf("test_dual_view_ram", "q0");
  CHECK(s.kind == host::StimulusKind::Uniform);
  CHECK(s.lower == 0.001);
  CHECK(s.upper == 2.0);
  compare::Config c = comparisonOf("test_dual_view_ram");
  CHECK(c.method == compare::Method::AllCloseHw);
  CHECK(c.checkPcc == 0.98);
  CHECK(c.checkPct == 0.0);

  // writer and reader get a Constant 0 override, also in a netlist's own
  // stimulus-config (kept otherwise); an override naming one exactly wins.
  netlist::Netlist own = dualView(3, "test-config:\n  stimulus-config:\n    type: Normal\n    normal_mean: 0.5\n"
                                     "    overrides:\n      reader: {type: Constant, constant_value: 2.0}\n");
  netlist::AppliedDefaults a = netlist::applyTestDriver(own, *d);
  CHECK_FALSE(a.stimulus);
  CHECK(a.comparison);
  CHECK(a.zeroed == std::vector<std::string>{"writer"});
  const netlist::StimulusConfig& cfg = *own.testConfig->stimulus;
  CHECK(host::stimulusFor(&cfg, "writer").kind == host::StimulusKind::Constant);
  CHECK(host::stimulusFor(&cfg, "writer").constant == 0.0);
  CHECK(host::stimulusFor(&cfg, "reader").constant == 2.0);
  CHECK(host::stimulusFor(&cfg, "q0").kind == host::StimulusKind::Normal);
  CHECK(host::stimulusFor(&cfg, "q0").mean == 0.5);
}
