// Unit tests of the interpreter's launches (docs/runtime.md "Launches"): a
// run of consecutive executes of one temporal graph's graphs, each graph at
// most once, is one call of Target::launch, with the host hooks around it.
// The netlists are parsed from inline YAML; which executes form a launch is
// worked out by hand from the temporal graph rule (docs/cluster.md).
#include "runtime/interpreter.hpp"

#include "netlist/parser.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

using namespace tessera;
using namespace tessera::runtime;

namespace {

std::string queue(const std::string& name, const std::string& input, int chip) {
  return "  " + name + ": {input: " + input + ", type: queue, entries: 8, grid_size: [1, 1], t: 1, mblock: [1, 1], "
         "ublock: [1, 1], df: Float32, target_device: " + std::to_string(chip) + ", loc: dram, dram: [[0, 0x1000]]}\n";
}

std::string graph(const std::string& name, int chip, const std::string& op, const std::string& input) {
  return "  " + name + ":\n    target_device: " + std::to_string(chip) + "\n    input_count: 1\n    " + op +
         ": {type: nop, grid_loc: [0, 0], grid_size: [1, 1], inputs: [" + input +
         "], in_df: [Float32], out_df: Float32, intermed_df: Float32, acc_df: Float32, math_fidelity: HiFi4, t: 1, "
         "mblock: [1, 1], ublock: [1, 1]}\n";
}

// in (chip 0) -> A.a (chip 0) -> B.b (chip 1, reads op a) -> outB (chip 1);
// C.c (chip 0) and D.d (chip 1) read in. A and B form one temporal graph by
// their edge on every arch; C and D by adjacent executes on disjoint chips,
// off grayskull. Lines: the first execute of the program is line 27.
std::string netlistText(const std::string& arch, const std::string& program) {
  return "devices:\n  arch: " + arch + "\nqueues:\n" + queue("in", "HOST", 0) + queue("outB", "b", 1) +
         queue("outC", "c", 0) + queue("outD", "d", 1) + "graphs:\n" + graph("A", 0, "a", "in") + graph("B", 1, "b", "a") +
         graph("C", 0, "c", "in") + graph("D", 1, "d", "in") + "programs:\n  - p:\n" + program;
}

// Records every call; a launch of several graphs runs each graph's ops,
// writing one entry into each queue an op feeds.
class RecordingTarget : public Target {
public:
  explicit RecordingTarget(std::vector<std::string>& calls, bool launches) : calls_(&calls), launches_(launches) {}
  std::string name() const override { return "recording"; }
  void execute(EpochIo& io) override {
    calls_->push_back("execute " + io.graph().name);
    for (const std::string& q : queuesWrittenBy(*store, io.graph())) io.write(q, store->get(q).zeroEntry());
  }
  void launch(const Launch& l) override {
    if (!launches_) return Target::launch(l); // the default: one graph only
    std::string line = "launch " + std::to_string(l.temporalGraph);
    for (EpochIo* io : l.graphs) line += " " + io->graph().name;
    calls_->push_back(line);
    for (EpochIo* io : l.graphs)
      for (const std::string& q : queuesWrittenBy(*store, io->graph())) io->write(q, store->get(q).zeroEntry());
  }
  QueueStore* store = nullptr;

private:
  std::vector<std::string>* calls_;
  bool launches_;
};

class Hooks : public HostHooks {
public:
  explicit Hooks(std::vector<std::string>& calls) : calls_(&calls) {}
  void beforeExecute(const netlist::Graph& g, QueueStore& store) override {
    calls_->push_back("before " + g.name);
    QueueState& in = store.get("in");
    if (in.occupancy() == 0) store.push("in", in.zeroEntry());
  }
  void afterExecute(const netlist::Graph& g, QueueStore&) override { calls_->push_back("after " + g.name); }

private:
  std::vector<std::string>* calls_;
};

struct Run {
  std::vector<std::string> calls;
  int64_t launches = 0, executes = 0;
  std::optional<RuntimeError> error;
};

Run run(const std::string& text, bool launches = true) {
  SourceBuffer source("t.yaml", text);
  DiagnosticEngine diags;
  auto nl = netlist::parseNetlist(source, diags);
  INFO(text);
  REQUIRE(nl);
  REQUIRE(diags.errorCount() == 0);
  Run r;
  QueueStore store(*nl);
  RecordingTarget target(r.calls, launches);
  target.store = &store;
  Hooks hooks(r.calls);
  Interpreter interp(*nl, store, target, hooks); // arch: the netlist's
  try {
    interp.run(nl->programs.front(), {});
  } catch (const RuntimeError& e) {
    r.error = e;
  }
  r.launches = interp.launchCount();
  r.executes = interp.executeCount();
  return r;
}

using Calls = std::vector<std::string>;

} // namespace

TEST_CASE("launch: consecutive executes of one temporal graph are one launch, hooks around it", "[runtime][launch]") {
  // Temporal graphs (wormhole_b0): {A, B} = 0 by the edge; C = 1; D (chip 1)
  // stays alone here (C and D are never executed next to each other).
  Run r = run(netlistText("wormhole_b0", "    - execute: {graph_name: A}\n    - execute: {graph_name: B}\n"
                                     "    - execute: {graph_name: C}\n"));
  REQUIRE(!r.error);
  CHECK(r.calls == Calls{"before A", "before B", "launch 0 A B", "after A", "after B", "before C", "launch 1 C",
                         "after C"});
  CHECK(r.launches == 2);
  CHECK(r.executes == 3);
}

TEST_CASE("launch: a graph seen again starts the next launch", "[runtime][launch]") {
  Run r = run(netlistText("wormhole_b0", "    - loop: 2\n    -   execute: {graph_name: B}\n    -   execute: {graph_name: A}\n"
                                     "    -   execute: {graph_name: A}\n    - endloop\n"));
  REQUIRE(!r.error);
  // Per iteration: {B, A}, then A alone (A again); the loop's endloop ends a run.
  CHECK(r.calls == Calls{"before B", "before A", "launch 0 B A", "after B", "after A", "before A", "launch 0 A",
                         "after A", "before B", "before A", "launch 0 B A", "after B", "after A", "before A",
                         "launch 0 A", "after A"});
}

TEST_CASE("launch: any other instruction between two executes ends the launch", "[runtime][launch]") {
  Run r = run(netlistText("wormhole_b0", "    - var: [$x]\n    - execute: {graph_name: A}\n    - varinst: [$x, inc, 1]\n"
                                     "    - execute: {graph_name: B}\n"));
  REQUIRE(!r.error);
  CHECK(r.launches == 2);
  CHECK(r.calls == Calls{"before A", "launch 0 A", "after A", "before B", "launch 0 B", "after B"});
}

TEST_CASE("launch: adjacent graphs on disjoint chips share a launch off grayskull only", "[runtime][launch]") {
  // C (chip 0) then D (chip 1): merged into C's temporal graph on wormhole_b0.
  // Ids: A=0, B=1 (takes A), C=2, D=3 -> D into C; compressed {A, B} = 0, {C, D} = 1.
  const std::string program = "    - execute: {graph_name: C}\n    - execute: {graph_name: D}\n";
  Run wh = run(netlistText("wormhole_b0", program));
  REQUIRE(!wh.error);
  CHECK(wh.calls == Calls{"before C", "before D", "launch 1 C D", "after C", "after D"});
  // grayskull: {A, B} = 0, C = 1, D = 2; two launches.
  Run gs = run(netlistText("grayskull", program));
  REQUIRE(!gs.error);
  CHECK(gs.calls == Calls{"before C", "launch 1 C", "after C", "before D", "launch 2 D", "after D"});
}

TEST_CASE("launch: a target without launches runs one graph and refuses several", "[runtime][launch]") {
  Run one = run(netlistText("wormhole_b0", "    - execute: {graph_name: C}\n    - execute: {graph_name: A}\n"), false);
  REQUIRE(!one.error);
  CHECK(one.calls == Calls{"before C", "execute C", "after C", "before A", "execute A", "after A"});

  Run two = run(netlistText("wormhole_b0", "    - execute: {graph_name: A}\n    - execute: {graph_name: B}\n"), false);
  REQUIRE(two.error);
  CHECK(two.error->rule == "launch-unsupported");
  CHECK(std::string(two.error->what()) ==
        "the recording target cannot run several graphs at once yet: temporal epoch 0 launches graphs 'A', 'B'");
  CHECK(two.error->loc.line == 27); // the first execute of the launch
}
