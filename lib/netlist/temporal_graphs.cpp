#include "netlist/temporal_graphs.hpp"

#include <algorithm>

namespace tessera::netlist {

namespace {

int64_t chipOf(const Graph& g) { return g.targetDevice.present() ? g.targetDevice.value : 0; }

} // namespace

TemporalGraphs deriveTemporalGraphs(const Netlist& nl, Arch arch) {
  const size_t n = nl.graphs.size();
  // Graph index by name (the first of duplicate names: the validator reports the rest).
  std::map<std::string, size_t> graphIndex;
  for (size_t i = 0; i < n; ++i) graphIndex.emplace(nl.graphs[i].name, i);
  std::set<std::string> queueNames;
  for (const Queue& q : nl.queues) queueNames.insert(q.name);
  std::map<std::string, size_t> opGraph; // op name -> graph index
  for (size_t i = 0; i < n; ++i)
    for (const Op& op : nl.graphs[i].ops) opGraph.emplace(op.name, i);

  // members[id]: graph indices; tgOf[graph]: id. Ids are never reused, so
  // an emptied id stays empty until compression.
  std::vector<std::set<size_t>> members;
  std::vector<size_t> tgOf(n, SIZE_MAX);
  auto moveInto = [&](size_t from, size_t to) {
    for (size_t g : members[from]) tgOf[g] = to;
    members[to].insert(members[from].begin(), members[from].end());
    members[from].clear();
  };

  // 1. Union by op-to-op edges between graphs.
  for (size_t i = 0; i < n; ++i) {
    if (tgOf[i] == SIZE_MAX) {
      tgOf[i] = members.size();
      members.push_back({i});
    }
    const size_t mine = tgOf[i];
    std::set<std::string> ownOps;
    for (const Op& op : nl.graphs[i].ops) ownOps.insert(op.name);
    std::set<size_t> producers;
    for (const Op& op : nl.graphs[i].ops)
      for (const Operand& in : op.inputs) {
        if (queueNames.count(in.name) || ownOps.count(in.name)) continue;
        auto it = opGraph.find(in.name);
        if (it != opGraph.end() && it->second != i) producers.insert(it->second);
      }
    for (size_t p : producers) {
      if (tgOf[p] == SIZE_MAX) {
        tgOf[p] = mine;
        members[mine].insert(p);
      } else if (tgOf[p] != mine) {
        moveInto(tgOf[p], mine);
      }
    }
  }

  // 2. Adjacent executes on disjoint chips share one temporal graph.
  auto chipsOf = [&](size_t id) {
    std::set<int64_t> chips;
    for (size_t g : members[id]) chips.insert(chipOf(nl.graphs[g]));
    return chips;
  };
  if (arch != Arch::Grayskull) {
    std::optional<size_t> last;
    for (const Program& p : nl.programs)
      for (const Instruction& ins : p.instructions) {
        if (ins.kind != InstrKind::Execute) continue;
        auto g = graphIndex.find(ins.graphName.value);
        if (g == graphIndex.end()) continue; // the validator reported it
        size_t cur = tgOf[g->second];
        if (last && cur != *last) {
          std::set<int64_t> a = chipsOf(*last), b = chipsOf(cur);
          bool overlap = std::any_of(b.begin(), b.end(), [&](int64_t c) { return a.count(c) != 0; });
          if (!overlap) {
            moveInto(cur, *last);
            cur = *last;
          }
        }
        last = cur;
      }
  }

  // 3. Compress ids, keeping their order.
  TemporalGraphs out;
  for (const std::set<size_t>& m : members) {
    if (m.empty()) continue;
    TemporalGraph tg;
    tg.id = static_cast<uint32_t>(out.list.size());
    for (size_t g : m) { // std::set: ascending index, i.e. netlist order
      tg.graphs.push_back(&nl.graphs[g]);
      tg.chips.insert(chipOf(nl.graphs[g]));
      out.ofGraph.emplace(nl.graphs[g].name, tg.id);
    }
    out.list.push_back(std::move(tg));
  }
  return out;
}

} // namespace tessera::netlist
