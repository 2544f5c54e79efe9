#include "pipe/epochs.hpp"

#include "netlist/temporal_graphs.hpp"

#include <optional>
#include <set>
#include <tuple>

namespace tessera::pipe {

using namespace netlist;

uint32_t chipOf(const Graph& g) { return g.targetDevice.present() ? static_cast<uint32_t>(g.targetDevice.value) : 0; }
uint32_t chipOf(const Queue& q) { return q.targetDevice.present() ? static_cast<uint32_t>(q.targetDevice.value) : 0; }

namespace {

// The queues a graph reads (op inputs) or writes (queues fed by its ops).
std::set<std::string> queuesTouched(const Netlist& nl, const Graph& g) {
  std::set<std::string> ops, touched;
  for (const Op& op : g.ops) ops.insert(op.name);
  std::set<std::string> queueNames;
  for (const Queue& q : nl.queues) queueNames.insert(q.name);
  for (const Op& op : g.ops)
    for (const Operand& in : op.inputs)
      if (queueNames.count(in.name)) touched.insert(in.name);
  for (const Queue& q : nl.queues)
    if (ops.count(q.input.value)) touched.insert(q.name);
  return touched;
}

bool literalTrue(const std::optional<Operand64>& v) { return v && !v->isVar && v->value != 0; }

// One launch being collected: consecutive executes of one temporal graph.
struct Launch {
  uint32_t temporalGraph = 0;
  std::set<std::string> graphs;
  std::map<std::string, StaticSettings> settings;
  std::vector<Execution> executions;
};

} // namespace

std::vector<TemporalEpoch> deriveEpochs(const Netlist& nl, Arch arch) {
  const TemporalGraphs tgs = deriveTemporalGraphs(nl, arch);
  std::vector<TemporalEpoch> epochs;
  std::map<std::string, const Graph*> graphs;
  for (const Graph& g : nl.graphs) graphs.emplace(g.name, &g);
  std::map<std::pair<uint32_t, std::map<std::string, StaticSettings>>, size_t> index;
  std::set<uint32_t> executed;
  std::map<std::string, std::set<std::string>> touchedByGraph;

  auto close = [&](std::optional<Launch>& launch) {
    if (!launch) return;
    auto key = std::make_pair(launch->temporalGraph, launch->settings);
    auto [it, fresh] = index.emplace(key, epochs.size());
    if (fresh) {
      const TemporalGraph& tg = tgs.list[launch->temporalGraph];
      TemporalEpoch e;
      e.id = static_cast<uint32_t>(epochs.size());
      e.temporalGraph = tg.id;
      e.graphs = tg.graphs;
      for (const Graph* g : tg.graphs) e.chips.insert(chipOf(*g));
      e.settings = launch->settings;
      epochs.push_back(std::move(e));
    }
    TemporalEpoch& e = epochs[it->second];
    e.executions.insert(e.executions.end(), launch->executions.begin(), launch->executions.end());
    executed.insert(launch->temporalGraph);
    launch.reset();
  };

  for (const Program& p : nl.programs) {
    std::optional<Launch> launch;
    for (const Instruction& ins : p.instructions) {
      if (ins.kind != InstrKind::Execute) { // the runtime's rule (docs/runtime.md "Launches")
        close(launch);
        continue;
      }
      auto g = graphs.find(ins.graphName.value);
      auto tg = tgs.find(ins.graphName.value);
      if (g == graphs.end() || !tg) continue; // the validator reported it
      if (launch && (launch->temporalGraph != *tg || launch->graphs.count(g->first))) close(launch);
      if (!launch) {
        launch.emplace();
        launch->temporalGraph = *tg;
      }
      launch->graphs.insert(g->first);
      auto t = touchedByGraph.find(g->first);
      if (t == touchedByGraph.end()) t = touchedByGraph.emplace(g->first, queuesTouched(nl, *g->second)).first;
      for (const QueueSetting& qs : ins.queueSettings) {
        if (!t->second.count(qs.queue)) continue;
        StaticSettings s{literalTrue(qs.prologue), literalTrue(qs.epilogue)};
        if (s != StaticSettings{}) launch->settings.emplace(qs.queue, s); // the first execute's wins
      }
      launch->executions.push_back(Execution{p.name, ins.loc});
    }
    close(launch);
  }
  for (const TemporalGraph& tg : tgs.list) {
    if (executed.count(tg.id)) continue;
    TemporalEpoch e;
    e.id = static_cast<uint32_t>(epochs.size());
    e.temporalGraph = tg.id;
    e.graphs = tg.graphs;
    for (const Graph* g : tg.graphs) e.chips.insert(chipOf(*g));
    epochs.push_back(std::move(e));
  }
  return epochs;
}

} // namespace tessera::pipe
