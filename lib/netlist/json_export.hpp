// The normalised model as JSON (`netlist-check --emit-json`): a stable shape
// documented in docs/netlist-json.md and schemas/netlist.schema.json.
#pragma once
#include "netlist/model.hpp"

#include <nlohmann/json.hpp>

namespace tessera::netlist {

// Deterministic: object keys in a fixed order, defaults filled in.
nlohmann::ordered_json netlistToJson(const Netlist& netlist);

} // namespace tessera::netlist
