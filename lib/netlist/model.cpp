#include "netlist/model.hpp"

#include <algorithm>

namespace tessera::netlist {

namespace {
// Names are unique after validation; before it, the first definition wins.
template <class T, class Key> const T* findByName(const std::vector<T>& items, const std::string& name, Key key) {
  auto it = std::find_if(items.begin(), items.end(), [&](const T& x) { return x.*key == name; });
  return it == items.end() ? nullptr : &*it;
}
} // namespace

const Attribute* OpAttributes::find(const std::string& key) const {
  // The last occurrence wins, as with duplicate keys everywhere else.
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (it->key == key) return &*it;
  return nullptr;
}

const Queue* Netlist::findQueue(const std::string& name) const { return findByName(queues, name, &Queue::name); }
const Graph* Netlist::findGraph(const std::string& name) const { return findByName(graphs, name, &Graph::name); }
const FusedOp* Netlist::findFusedOp(const std::string& id) const { return findByName(fusedOps, id, &FusedOp::id); }

const Op* Netlist::findOp(const std::string& name) const {
  for (const Graph& g : graphs)
    if (const Op* op = findByName(g.ops, name, &Op::name)) return op;
  return nullptr;
}

} // namespace tessera::netlist
