// Temporal epochs: which graphs run in each (one temporal graph, on all its
// chips), with which static queue settings (docs/net2pipe.md "Temporal
// epochs").
#pragma once
#include "device/arch.hpp"
#include "netlist/model.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tessera::pipe {

// The static queue settings of one execution (prologue and epilogue are
// literals: the validator rejects variables there).
struct StaticSettings {
  bool prologue = false;
  bool epilogue = false;
  friend bool operator==(const StaticSettings&, const StaticSettings&) = default;
  friend auto operator<=>(const StaticSettings&, const StaticSettings&) = default;
};

struct Execution {
  std::string program;
  SourceLoc loc; // the execute instruction
};

struct TemporalEpoch {
  uint32_t id = 0;
  uint32_t temporalGraph = 0;               // netlist::TemporalGraphs id
  std::vector<const netlist::Graph*> graphs; // the temporal graph's graphs, netlist order
  std::set<uint32_t> chips;                  // their target_device values
  // Settings of the queues its graphs read or write (absent: both false).
  std::map<std::string, StaticSettings> settings;
  std::vector<Execution> executions; // every execute that runs this epoch; empty: never executed
  StaticSettings settingsOf(const std::string& queue) const {
    auto it = settings.find(queue);
    return it == settings.end() ? StaticSettings{} : it->second;
  }
  const netlist::Graph& firstGraph() const { return *graphs.front(); }
};

// The chip a graph runs on: its target_device (0 when absent).
uint32_t chipOf(const netlist::Graph& g);
// The chip holding a queue's buffers: its target_device (0 when absent).
uint32_t chipOf(const netlist::Queue& q);

// A *launch* is a run of consecutive `execute`s (no other instruction
// between them, within one program) of distinct graphs of one temporal
// graph (netlist/temporal_graphs.hpp; the runtime launches the same runs,
// docs/runtime.md "Launches"); its settings are those of
// its executes for the queues their graphs touch. One epoch per distinct
// (temporal graph, launch settings), in the order of the first launch
// (programs in file order); then one epoch per temporal graph no program
// executes, in id order. A netlist whose temporal graphs are single graphs
// (every single-chip netlist) gets one epoch per (graph, settings) of one
// execute, as before temporal graphs existed.
std::vector<TemporalEpoch> deriveEpochs(const netlist::Netlist& nl, Arch arch);

} // namespace tessera::pipe
