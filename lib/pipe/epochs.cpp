#include "pipe/epochs.hpp"

#include <set>
#include <tuple>

namespace tessera::pipe {

using namespace netlist;

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

} // namespace

std::vector<TemporalEpoch> deriveEpochs(const Netlist& nl) {
  std::vector<TemporalEpoch> epochs;
  std::map<std::string, const Graph*> graphs;
  for (const Graph& g : nl.graphs) graphs.emplace(g.name, &g);
  std::map<std::pair<std::string, std::map<std::string, StaticSettings>>, size_t> index;
  std::set<std::string> executed;
  std::map<std::string, std::set<std::string>> touchedByGraph;
  for (const Program& p : nl.programs)
    for (const Instruction& ins : p.instructions) {
      if (ins.kind != InstrKind::Execute) continue;
      auto g = graphs.find(ins.graphName.value);
      if (g == graphs.end()) continue; // the validator reported it
      auto t = touchedByGraph.find(g->first);
      if (t == touchedByGraph.end()) t = touchedByGraph.emplace(g->first, queuesTouched(nl, *g->second)).first;
      const std::set<std::string>& touched = t->second;
      std::map<std::string, StaticSettings> settings;
      for (const QueueSetting& qs : ins.queueSettings) {
        if (!touched.count(qs.queue)) continue;
        StaticSettings s{literalTrue(qs.prologue), literalTrue(qs.epilogue)};
        if (s != StaticSettings{}) settings[qs.queue] = s;
      }
      auto key = std::make_pair(g->first, settings);
      auto [it, fresh] = index.emplace(key, epochs.size());
      if (fresh) {
        TemporalEpoch e;
        e.id = static_cast<uint32_t>(epochs.size());
        e.graph = g->second;
        e.settings = std::move(settings);
        epochs.push_back(std::move(e));
      }
      epochs[it->second].executions.push_back(Execution{p.name, ins.loc});
      executed.insert(g->first);
    }
  for (const Graph& g : nl.graphs) {
    if (executed.count(g.name)) continue;
    TemporalEpoch e;
    e.id = static_cast<uint32_t>(epochs.size());
    e.graph = &g;
    epochs.push_back(std::move(e));
  }
  return epochs;
}

} // namespace tessera::pipe
