// `netlist-check --stats`: a summary of a netlist for humans.
#pragma once
#include "netlist/model.hpp"

#include <string>

namespace tessera::netlist {

// Ops by type, cores used per graph, queue bytes per DRAM channel (and host).
std::string formatStats(const Netlist& netlist);

} // namespace tessera::netlist
