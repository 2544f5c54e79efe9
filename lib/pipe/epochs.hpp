// Temporal epochs: which graph runs in each, with which static queue
// settings (docs/net2pipe.md "Temporal epochs").
#pragma once
#include "netlist/model.hpp"

#include <map>
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
  const netlist::Graph* graph = nullptr;
  // Settings of the queues the graph reads or writes (absent: both false).
  std::map<std::string, StaticSettings> settings;
  std::vector<Execution> executions; // every execute that runs this epoch; empty: never executed
  StaticSettings settingsOf(const std::string& queue) const {
    auto it = settings.find(queue);
    return it == settings.end() ? StaticSettings{} : it->second;
  }
};

// One epoch per distinct (graph, static settings of the queues it touches),
// in the order of the first `execute` of each (programs in file order, each
// program's instructions in order, loops not unrolled); then one epoch per
// graph no program executes, in netlist order.
std::vector<TemporalEpoch> deriveEpochs(const netlist::Netlist& nl);

} // namespace tessera::pipe
