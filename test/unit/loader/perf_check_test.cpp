// loader --perf-check's arithmetic on hand-made per-input timelines (BUDA's
// perf postprocessor definitions, docs/loader.md "Performance checks"); every
// expected figure is worked out by hand in the comments.
#include "loader/perf_check.hpp"

#include "netlist/parser.hpp"

#include <catch2/catch.hpp>

using tessera::loader::PerfChecker;
using tessera::sim::ChipRunResult;
using tessera::sim::CoreEpochReport;
using tessera::sim::TimelineEvent;

namespace {

const char* kNetlist = R"(devices:
  arch: [grayskull]
queues:
  in0:  {type: queue, input: HOST, entries: 2, grid_size: [1, 1], t: 1, mblock: [1, 2], ublock: [1, 1], df: Float16_b, target_device: 0, loc: dram, dram: [[0, 0x30000000]]}
  out0: {type: queue, input: B, entries: 2, grid_size: [1, 1], t: 1, mblock: [1, 2], ublock: [1, 1], df: Float16_b, target_device: 0, loc: dram, dram: [[1, 0x30000000]]}
graphs:
  g0:
    target_device: 0
    input_count: 2
    A: {type: nop, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], t: 1, mblock: [1, 2], ublock: [1, 1], in_df: [Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, math_fidelity: HiFi4}
    B: {type: nop, grid_loc: [0, 1], grid_size: [1, 1], inputs: [A], t: 1, mblock: [1, 2], ublock: [1, 1], in_df: [Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: Float16_b, math_fidelity: HiFi4}
programs:
  - run:
      - var: {$c0: 0}
      - execute: {graph_name: g0, queue_settings: {in0: {prologue: false, epilogue: false, zero: false, rd_ptr_local: $c0, rd_ptr_global: $c0}}}
performance-check:
  graph:
    graph-name: g0
    program-name: run
    cycles-per-tensor: {expected: 400, rtol: 0.01}
    tensors-per-second: {expected: 2000000, rtol: 0.1}
  core:
    graph-name: g0
    program-name: run
    target-ops: [A]
    target-inputs: [0, 1]
    math-utilization: {expected: 40, rtol: 0.05}
    execution-cycles: {min_bound: 600}
    average-math-utilization: {expected: 60, rtol: 0.01}
    total-runtime: {expected: 1000, rtol: 0.01}
    output-bw: {expected: 10, rtol: 0.01}
)";

ChipRunResult run() {
  ChipRunResult r;
  r.inputCount = 2;
  CoreEpochReport a;
  a.name = "A[0,0]";
  a.kernel = true;
  a.timeline.firstUnpack = 100;
  a.timeline.input0Pops = {TimelineEvent{400, 2, 150}, TimelineEvent{900, 4, 450}};
  a.timeline.outputPushes = {TimelineEvent{500, 1, 100}, TimelineEvent{600, 2, 200}, TimelineEvent{1000, 3, 500},
                             TimelineEvent{1100, 4, 600}};
  CoreEpochReport b;
  b.name = "B[0,0]";
  b.kernel = true;
  b.noc = {1, 0};
  b.timeline.firstUnpack = 300;
  b.timeline.outputPushes = {TimelineEvent{700, 2, 10}, TimelineEvent{1000, 4, 20}};
  r.cores = {a, b};
  return r;
}

} // namespace

TEST_CASE("perf-check measures BUDA's metrics from per-input timelines", "[loader][perf-check]") {
  tessera::DiagnosticEngine diags;
  auto nl = tessera::netlist::parseNetlist(tessera::SourceBuffer("t.yaml", kNetlist), diags);
  REQUIRE(nl);
  REQUIRE(diags.errorCount() == 0);
  REQUIRE(nl->perfCheck);
  REQUIRE(nl->perfCheck->configs.size() == 2);

  PerfChecker checker(*nl, tessera::Arch::Grayskull);
  checker.add(0, "g0", run());
  checker.add(1, "other", run());  // no check names it: ignored
  bool passed = true;
  const std::string out = checker.report(passed);
  INFO(out);
  // Last pack per input: A [600, 1100], B [700, 1000] -> latest [700, 1100]:
  // (1100 - 700) / (2 - 1) = 400 cycles per tensor; at 1200 MHz 3,000,000 tensors/s.
  CHECK(out.find("  cycles-per-tensor: 400.00, expected 400.00 rtol 0.01 (1.00x): PASS\n") != std::string::npos);
  CHECK(out.find("  tensors-per-second: 3000000.00, expected 2000000.00 rtol 0.10 (1.50x): FAIL\n") != std::string::npos);
  // A input 0: first unpack 100, last pack 600 (2 tiles), math 200 -> 40%, 500 cycles.
  // A input 1: first unpack 400 (the pop of input 0's 2 tiles, math 150), last pack 1100 (math 600) -> 450 / 700.
  CHECK(out.find("  math-utilization A[0,0] input 0: 40.00, expected 40.00 rtol 0.05 (1.00x): PASS\n") != std::string::npos);
  CHECK(out.find("  math-utilization A[0,0] input 1: 64.29, expected 40.00 rtol 0.05 (1.61x): FAIL\n") != std::string::npos);
  CHECK(out.find("  execution-cycles A[0,0] input 0: 500.00, min bound 600.00: FAIL\n") != std::string::npos);
  CHECK(out.find("  execution-cycles A[0,0] input 1: 700.00, min bound 600.00: PASS\n") != std::string::npos);
  // Over both inputs: math 600 of 1100 - 100 cycles.
  CHECK(out.find("  average-math-utilization A[0,0]: 60.00, expected 60.00 rtol 0.01 (1.00x): PASS\n") != std::string::npos);
  CHECK(out.find("  total-runtime A[0,0]: 1000.00, expected 1000.00 rtol 0.01 (1.00x): PASS\n") != std::string::npos);
  // 2 tiles of 2080 bytes (Float16_b with its header) for the one input after
  // the first, over 1100 - 600 = 500 cycles = 416.67 ns: 9.98 GB/s.
  CHECK(out.find("  output-bw A[0,0]: 9.98, expected 10.00 rtol 0.01 (1.00x): PASS\n") != std::string::npos);
  CHECK(out.find("B[0,0]") == std::string::npos);  // not a target op
  CHECK(out.find("perf-check: 6 of 9 checks passed\n") != std::string::npos);
  CHECK_FALSE(passed);
}

TEST_CASE("perf-check fails a check whose graph never ran", "[loader][perf-check]") {
  tessera::DiagnosticEngine diags;
  auto nl = tessera::netlist::parseNetlist(tessera::SourceBuffer("t.yaml", kNetlist), diags);
  REQUIRE(nl);
  PerfChecker checker(*nl, tessera::Arch::Grayskull);
  bool passed = true;
  const std::string out = checker.report(passed);
  CHECK(out.find("perf-check 'graph' (graph 'g0'): the graph never ran: FAIL\n") != std::string::npos);
  CHECK_FALSE(passed);
}
