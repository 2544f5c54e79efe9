#include "netlist/model.hpp"

namespace tessera::netlist {

const Attribute* OpAttributes::find(const std::string& key) const {
  // The last occurrence wins, as with duplicate keys everywhere else.
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (it->key == key) return &*it;
  return nullptr;
}

} // namespace tessera::netlist
