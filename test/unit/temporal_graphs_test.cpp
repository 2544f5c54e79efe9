// Unit tests of deriveTemporalGraphs (lib/netlist/temporal_graphs). Netlists
// are built in memory; every expected grouping and id is worked out by hand
// from the three steps documented in temporal_graphs.hpp.
#include "netlist/temporal_graphs.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

using namespace tessera;
using namespace tessera::netlist;

namespace {

SourceLoc here() { return SourceLoc{1, 1}; }

struct Builder {
  Netlist nl;

  // A graph on `chip` (nullopt: no target_device) with one op per entry of
  // `ops`: {op name, its input names}.
  Builder& graph(const std::string& name, std::optional<int64_t> chip,
                 std::vector<std::pair<std::string, std::vector<std::string>>> ops) {
    Graph g;
    g.name = name;
    if (chip) g.targetDevice.set(*chip, here());
    for (auto& [opName, inputs] : ops) {
      Op op;
      op.name = opName;
      op.graph = name;
      for (const std::string& in : inputs) op.inputs.push_back(Operand{in, here(), {}, {}, {}, {}});
      g.ops.push_back(std::move(op));
    }
    nl.graphs.push_back(std::move(g));
    return *this;
  }
  Builder& queue(const std::string& name) {
    Queue q;
    q.name = name;
    q.input.set("HOST", here());
    nl.queues.push_back(std::move(q));
    return *this;
  }
  // A program; entries are graph names to execute, or "loop" / "endloop".
  Builder& program(const std::string& name, std::vector<std::string> body) {
    Program p;
    p.name = name;
    for (const std::string& b : body) {
      Instruction ins;
      if (b == "loop") {
        ins.kind = InstrKind::Loop;
      } else if (b == "endloop") {
        ins.kind = InstrKind::EndLoop;
      } else {
        ins.kind = InstrKind::Execute;
        ins.graphName.set(b, here());
      }
      p.instructions.push_back(std::move(ins));
    }
    nl.programs.push_back(std::move(p));
    return *this;
  }
};

// The temporal graphs as lists of graph names, by id.
std::vector<std::vector<std::string>> names(const TemporalGraphs& tgs) {
  std::vector<std::vector<std::string>> out;
  for (size_t i = 0; i < tgs.list.size(); ++i) {
    CHECK(tgs.list[i].id == i);
    std::vector<std::string> gs;
    for (const Graph* g : tgs.list[i].graphs) gs.push_back(g->name);
    out.push_back(gs);
  }
  return out;
}

using Groups = std::vector<std::vector<std::string>>;

} // namespace

TEST_CASE("single chip: one temporal graph per graph, in netlist order", "[temporal]") {
  Builder b;
  b.queue("in").queue("mid");
  b.graph("g0", 0, {{"a", {"in"}}}).graph("g1", std::nullopt, {{"b", {"mid"}}}).graph("g2", 0, {{"c", {"mid"}}});
  b.program("p", {"g2", "g0", "g1", "g2"});
  TemporalGraphs tgs = deriveTemporalGraphs(b.nl, Arch::WormholeB0);
  CHECK(names(tgs) == Groups{{"g0"}, {"g1"}, {"g2"}});
  CHECK(tgs.find("g2") == 2u);
  CHECK(!tgs.find("nope"));
  CHECK(tgs.list[1].chips == std::set<int64_t>{0}); // no target_device: chip 0
}

TEST_CASE("op-to-op edges join graphs; the consumer's id survives", "[temporal]") {
  // A=0, B=1, C=2; C reads A's op, so C takes {A} into id 2. Compressed:
  // B -> 0, {A, C} -> 1 (not the order of first appearance).
  Builder b;
  b.queue("in");
  b.graph("A", 0, {{"a", {"in"}}}).graph("B", 1, {{"b", {"in"}}}).graph("C", 1, {{"c", {"a", "in"}}});
  TemporalGraphs tgs = deriveTemporalGraphs(b.nl, Arch::WormholeB0);
  CHECK(names(tgs) == Groups{{"B"}, {"A", "C"}});
  CHECK(tgs.list[1].chips == std::set<int64_t>{0, 1});
  CHECK(tgs.find("A") == 1u);
}

TEST_CASE("edges join transitively, also through an earlier consumer", "[temporal]") {
  // P=0 reads Q's op: Q (not yet seen) joins 0. R=1 reads Q: {P, Q} moves into 1.
  // S=2 stays alone. Result: {P, Q, R} -> 0, S -> 1.
  Builder b;
  b.queue("in");
  b.graph("P", 0, {{"p", {"q"}}}).graph("Q", 1, {{"q", {"in"}}}).graph("R", 2, {{"r", {"q", "p"}}});
  b.graph("S", 3, {{"s", {"in"}}});
  TemporalGraphs tgs = deriveTemporalGraphs(b.nl, Arch::Grayskull); // edges join on every arch
  CHECK(names(tgs) == Groups{{"P", "Q", "R"}, {"S"}});
}

TEST_CASE("an input naming a queue or an op of the same graph joins nothing", "[temporal]") {
  Builder b;
  b.queue("x");
  // Graph H has an op named like G's queue input; G's input `x` is a queue.
  b.graph("G", 0, {{"g", {"x"}}, {"g2", {"g"}}}).graph("H", 1, {{"h", {"x", "unknown"}}});
  b.program("p", {"G", "G"});
  TemporalGraphs tgs = deriveTemporalGraphs(b.nl, Arch::WormholeB0);
  CHECK(names(tgs) == Groups{{"G"}, {"H"}});
}

TEST_CASE("adjacent executes on disjoint chips merge into the previous one", "[temporal]") {
  Builder b;
  b.queue("in");
  b.graph("A", 0, {{"a", {"in"}}}).graph("B", 1, {{"b", {"in"}}}).graph("C", 0, {{"c", {"in"}}});
  SECTION("merged, then an overlap stops the merging") {
    // A; B (chips {1} vs {0}) joins A; C (chip 0 vs {0, 1}) overlaps.
    b.program("p", {"A", "B", "C"});
    TemporalGraphs tgs = deriveTemporalGraphs(b.nl, Arch::WormholeB0);
    CHECK(names(tgs) == Groups{{"A", "B"}, {"C"}});
    CHECK(tgs.list[0].chips == std::set<int64_t>{0, 1});
  }
  SECTION("the previous execute keeps its id") {
    // C=2 runs first, then B=1 (disjoint): B moves into 2. A=0 overlaps {0, 1}.
    // Compressed: A -> 0, {B, C} -> 1.
    b.program("p", {"C", "B", "A"});
    TemporalGraphs tgs = deriveTemporalGraphs(b.nl, Arch::WormholeB0);
    CHECK(names(tgs) == Groups{{"A"}, {"B", "C"}});
  }
  SECTION("the previous execute is carried across programs and loops") {
    b.program("p0", {"loop", "A", "endloop"}).program("p1", {"loop", "B", "endloop"});
    TemporalGraphs tgs = deriveTemporalGraphs(b.nl, Arch::Wormhole);
    CHECK(names(tgs) == Groups{{"A", "B"}, {"C"}});
  }
  SECTION("never on grayskull") {
    b.program("p", {"A", "B", "C"});
    TemporalGraphs tgs = deriveTemporalGraphs(b.nl, Arch::Grayskull);
    CHECK(names(tgs) == Groups{{"A"}, {"B"}, {"C"}});
  }
  SECTION("graphs that are never executed stay alone") {
    b.program("p", {"A", "C"});
    TemporalGraphs tgs = deriveTemporalGraphs(b.nl, Arch::WormholeB0);
    CHECK(names(tgs) == Groups{{"A"}, {"B"}, {"C"}});
  }
}

TEST_CASE("a merge keeps the previous execute's id, not the lower one", "[temporal]") {
  // X=0, Y=1, Z=2; Z runs, then X (disjoint chips): X moves into Z's 2.
  // Compressed: Y -> 0, {X, Z} -> 1 (keeping the lower id would give {X, Z} -> 0).
  Builder b;
  b.queue("in");
  b.graph("X", 0, {{"x", {"in"}}}).graph("Y", 0, {{"y", {"in"}}}).graph("Z", 1, {{"z", {"in"}}});
  b.program("p", {"Z", "X"});
  TemporalGraphs tgs = deriveTemporalGraphs(b.nl, Arch::WormholeB0);
  CHECK(names(tgs) == Groups{{"Y"}, {"X", "Z"}});
}

TEST_CASE("no merge when chips overlap", "[temporal]") {
  Builder b;
  b.queue("in");
  b.graph("A", 0, {{"a", {"in"}}}).graph("B", 0, {{"b", {"in"}}}).graph("D", 1, {{"d", {"in"}}});
  b.graph("E", 1, {{"e", {"d"}}}); // {D, E} on chip 1 joined by an edge
  // A (chip 0); B (chip 0) overlaps; {D, E} (chip 1) joins B; A overlaps {0, 1}.
  b.program("p", {"A", "B", "E", "A"});
  TemporalGraphs tgs = deriveTemporalGraphs(b.nl, Arch::WormholeB0);
  // Ids before compression: A=0, B=1, D=2 (moved into E's 3), E=3; E's
  // execute moves {D, E} into B's 1. Compressed: A -> 0, {B, D, E} -> 1.
  CHECK(names(tgs) == Groups{{"A"}, {"B", "D", "E"}});
  CHECK(tgs.find("D") == 1u);
}

TEST_CASE("an empty netlist has no temporal graphs", "[temporal]") {
  Netlist nl;
  TemporalGraphs tgs = deriveTemporalGraphs(nl, Arch::WormholeB0);
  CHECK(tgs.list.empty());
  CHECK(tgs.ofGraph.empty());
}
