// Temporal graphs: the graphs that run together as one temporal epoch, on
// all their chips at once (docs/cluster.md "Temporal epochs over several
// chips"). The rule is the BUDA netlist parser's, so artifacts and runtime
// launches line up with what a BUDA user expects.
#pragma once
#include "device/arch.hpp"
#include "netlist/model.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tessera::netlist {

struct TemporalGraph {
  uint32_t id = 0;
  std::vector<const Graph*> graphs; // netlist order
  std::set<int64_t> chips;          // the graphs' target_device (0 when absent)
};

struct TemporalGraphs {
  std::vector<TemporalGraph> list;          // by id: list[i].id == i
  std::map<std::string, uint32_t> ofGraph;  // graph name -> id, every graph of the netlist

  std::optional<uint32_t> find(const std::string& graph) const {
    auto it = ofGraph.find(graph);
    if (it == ofGraph.end()) return std::nullopt;
    return it->second;
  }
};

// 1. Every graph starts alone, ids in netlist order; walking the graphs in
//    netlist order, a graph whose op reads an op of another graph (an input
//    that names no queue and no op of its own graph) takes that graph's
//    temporal graph into its own (it keeps its own id).
// 2. Walking every program's `execute`s in netlist order (programs in file
//    order, loops not unrolled, the previous execute carried across
//    programs), an execute whose temporal graph differs from the previous
//    execute's and shares no chip with it is merged into the previous one
//    (which keeps its id). Never on grayskull.
// 3. Emptied ids are dropped; the rest keep their order, renumbered 0..n-1.
// Upstream walks programs in hash-map order; file order is the one
// deterministic choice and agrees whenever a netlist has one program.
// Single-chip netlists without cross-graph edges get one temporal graph per
// graph, in netlist order. Inputs naming nothing known are ignored (the
// validator reports them).
TemporalGraphs deriveTemporalGraphs(const Netlist& nl, Arch arch);

} // namespace tessera::netlist
