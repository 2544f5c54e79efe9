// Netlists over several chips: which chip each element is on, which graphs
// run together, and the rules that only several chips raise
// (ethernet_datacopy, routes between chips). docs/cluster.md is the contract.
#pragma once
#include "netlist/validator.hpp"

#include <optional>
#include <vector>

namespace tessera::netlist {

// The chip a graph or queue is on: its target_device (0 when absent), or
// nullopt when that is not a chip id (negative or beyond 32 bits).
std::optional<ChipId> chipOf(const Graph& g);
std::optional<ChipId> chipOf(const Queue& q);

// The chips a netlist's default cluster needs: the highest valid
// target_device + 1 (1 when there is none), saturating at UINT32_MAX.
uint32_t chipsNamed(const Netlist& nl);

// Whether an op may read an op of a graph on another chip without a queue
// in between, as the BUDA backend's is_queueless_multichip_supported says:
// grayskull (through the host), wormhole and wormhole_b0; not blackhole.
bool crossChipOpEdgesSupported(Arch arch);

// Graphs joined by op-to-op edges (an op reading an op of another graph):
// each group runs as one temporal epoch, all its graphs at once. Groups are
// ordered by their first graph in the file, graphs in file order.
std::vector<std::vector<const Graph*>> opJoinedGraphs(const Netlist& nl);

// "cluster 'wormhole_2chip' (chips 0..1)": how diagnostics name the cluster.
std::string clusterText(const ClusterDescriptor& c);

// The several-chip rules: ethernet_datacopy ops (attributes, links, routes,
// consumers) and a route for every chip-to-chip transfer. Called by
// validateNetlist; every rule is in docs/netlist-rules.md.
void validateMultichip(const Netlist& nl, const ValidationTarget& target, DiagnosticEngine& diags);

} // namespace tessera::netlist
