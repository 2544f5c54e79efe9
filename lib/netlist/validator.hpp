// Semantic checks of a parsed netlist against a target device. Each rule has
// a stable id (printed as `[rule]`) listed in docs/netlist-rules.md.
#pragma once
#include "device/cluster.hpp"
#include "device/soc_descriptor.hpp"
#include "netlist/model.hpp"
#include "support/diagnostics.hpp"

namespace tessera::netlist {

// One chip (singleChipCluster), shared: the cluster of a target built without one.
const ClusterDescriptor& oneChipCluster();

struct ValidationTarget {
  Arch arch;
  const SocDescriptor* device; // never null; every chip of the cluster is one of these
  const ClusterDescriptor* cluster = &oneChipCluster(); // never null: the chips target_device may name
};

// Every rule of docs/netlist-rules.md except the fused-op constraints.
void validateNetlist(const Netlist& netlist, const ValidationTarget& target, DiagnosticEngine& diags);

// The fused-op constraints of net2hlks (seeds/net2hlks-fused-op-constraints.md):
// one distinct rule id per constraint. Called by validateNetlist.
void validateFusedOps(const Netlist& netlist, const ValidationTarget& target, DiagnosticEngine& diags);

// Rules of BUDA's own parser checked nowhere else (lib/netlist/parity_rules.cpp):
// tile_dim and binary input-0 transposes on grayskull, duplicate fused sub-op
// names, embedding index blocking. Called by validateNetlist.
void validateBudaParity(const Netlist& netlist, const ValidationTarget& target, DiagnosticEngine& diags);

} // namespace tessera::netlist
