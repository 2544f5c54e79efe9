// Clusters: chips joined by ethernet links, in the BUDA backend's cluster
// descriptor format (`chips`, `ethernet_connections`, `chips_with_mmio`;
// ../shared/corpus/clusters), or a documented default topology of an arch
// for a netlist that names N devices and no --cluster file.
// docs/cluster.md says what each field means and lists the defaults.
#pragma once
#include "device/arch.hpp"
#include "device/soc_descriptor.hpp"
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tessera {

using ChipId = uint32_t;

// One end of an ethernet link: a chip's ethernet channel (index into the SoC
// descriptor's `eth:` list, whose core it is).
struct EthEndpoint {
  ChipId chip = 0;
  uint32_t chan = 0;
  friend bool operator==(const EthEndpoint&, const EthEndpoint&) = default;
  friend auto operator<=>(const EthEndpoint&, const EthEndpoint&) = default;
};

// A two-way link. Stored once, with a < b.
struct EthLink {
  EthEndpoint a;
  EthEndpoint b;
  SourceLoc loc; // where the file lists it first (invalid for defaults)
};

// `chips:` value: where the chip sits ([x, y, rack, shelf]).
struct ChipLocation {
  int64_t x = 0, y = 0, rack = 0, shelf = 0;
};

struct ClusterDescriptor {
  std::string name;                         // file stem, or "default-<arch>-<R>x<C>"
  std::map<ChipId, ChipLocation> chips;     // every chip of the cluster
  std::vector<EthLink> links;               // sorted by (a, b)
  std::set<ChipId> mmio;                    // chips the host reaches over PCIe

  size_t chipCount() const { return chips.size(); }
  bool hasChip(ChipId chip) const { return chips.count(chip) != 0; }
  bool isMmio(ChipId chip) const { return mmio.count(chip) != 0; }
  // The other end of the link at `end`, nullopt when the channel is unconnected.
  std::optional<EthEndpoint> peer(EthEndpoint end) const;
  // The links between two chips, each oriented from `from` (a) to `to` (b),
  // in `from`'s channel order.
  std::vector<EthLink> linksBetween(ChipId from, ChipId to) const;
  // Fewest-hop chip sequence from `from` to `to` (both included; {from} when
  // equal), ties broken toward the lower chip id at each step so every tool
  // picks the same route. Empty when unreachable or a chip is unknown.
  std::vector<ChipId> route(ChipId from, ChipId to) const;
  // The MMIO chip the host reaches `chip` through: itself when it is MMIO,
  // else the MMIO chip with the fewest hops to it (lowest id on ties);
  // nullopt when no MMIO chip reaches it.
  std::optional<ChipId> mmioGateway(ChipId chip) const;
};

// Parses a cluster descriptor. Errors (rule `cluster-descriptor`) are located
// and name the element: a chip id that is not a non-negative integer, a link
// whose endpoint names an unknown chip or a channel outside [0, maxChannels),
// a link from a chip to itself, a channel used by two different links (the
// second listing is named), a file that lists some links in both directions
// but not this one (a link listed one-way), an MMIO chip that is not in
// `chips`, YAML that does not parse. `maxChannels` is the ethernet cores of
// the arch's SoC descriptor (16 on wormhole_b0).
std::optional<ClusterDescriptor> parseClusterDescriptor(const SourceBuffer& source, uint32_t maxChannels,
                                                        DiagnosticEngine& diags);

// The default cluster of `arch` for a netlist whose highest target_device is
// `chips - 1` (docs/cluster.md "Default topologies"). Wormhole and blackhole:
// a mesh from {1x1, 1x2, 2x2, 2x4, 3x4, 4x8} (the smallest holding `chips`),
// chip id r*C + c at [x=c, y=r], neighbours joined by two links, chip 0 the
// one MMIO chip; 33 chips is the Galaxy: a 4x8 mesh of chips 1..32 behind
// MMIO chip 0. Grayskull: `chips` chips, every one MMIO, no ethernet links
// (they talk through the host). Nullopt, with `why` set, when the arch has
// no default for that many chips.
std::optional<ClusterDescriptor> defaultCluster(Arch arch, uint32_t chips, std::string& why);
// The most chips `arch` has a default topology for (33, grayskull 256).
uint32_t maxDefaultChips(Arch arch);

// One chip: what a single-device netlist targets.
ClusterDescriptor singleChipCluster();

}  // namespace tessera
