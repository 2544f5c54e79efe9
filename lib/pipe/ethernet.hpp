// Which ethernet links a relay chain crosses (docs/cluster.md "The data
// path", docs/net2pipe.md "Several chips"): the chips of
// ClusterDescriptor::route, and for each pair of neighbours one of their
// links, shared out round robin among the chains of an epoch.
#pragma once
#include "device/cluster.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessera::pipe {

// One link crossing of a chain, oriented from the sending chip to the
// receiving one.
struct EthHop {
  EthEndpoint from;
  EthEndpoint to;
  friend bool operator==(const EthHop&, const EthHop&) = default;
};

class LinkPlanner {
public:
  // `ethL1` bytes for data and `ethStreams` streams per ethernet core: what
  // decides whether a link's ends still take a relay (0: no limit).
  explicit LinkPlanner(const ClusterDescriptor& cluster, uint64_t ethL1 = 0, uint32_t ethStreams = 0)
      : cluster_(cluster), ethL1_(ethL1), ethStreams_(ethStreams) {}

  // A relay of `tileBytes`-byte tiles placed on an ethernet core (it can
  // shrink to one tile: that is what it is counted at).
  void place(EthEndpoint at, uint64_t tileBytes);

  // The chips a chain from `from` to `to` crosses: the cheapest route over
  // links whose two ends still take a relay of `tileBytes`, a hop costing
  // kHopCost plus the relays on its least used such link (load-aware, as
  // BUDA's router: among routes of one length the least used, a detour
  // around full links), ties to lower chip ids (so ClusterDescriptor::route
  // while nothing is placed); with no such route ClusterDescriptor::route
  // (the resource checks then report the core).
  std::vector<ChipId> route(ChipId from, ChipId to, uint64_t tileBytes) const;

  // The hops from chip `from` to chip `to` (empty when equal), nullopt when
  // the cluster has no route. `firstChan` pins the first hop to the link
  // of that channel of `from` when it leads to the route's next chip;
  // `lastChan` pins the last hop to the link arriving on that channel of
  // `to` (ethernet_datacopy's ingress and egress channels). Other hops take
  // the links of their chip pair in turn (the pair's counter is shared by
  // both directions, so the relays of an epoch spread over the ethernet
  // cores of both ends); pinned hops leave the counter alone.
  std::optional<std::vector<EthHop>> chain(ChipId from, ChipId to, std::optional<uint32_t> firstChan = std::nullopt,
                                           std::optional<uint32_t> lastChan = std::nullopt);

  // Whether the ethernet core at `at` still takes a relay of `tileBytes`.
  bool hasRoom(EthEndpoint at, uint64_t tileBytes) const { return room(at, tileBytes); }

  // One hop between neighbours `from` and `to`: the next of their links in
  // turn, or when that one's ends are full the least used link that takes
  // a relay of `tileBytes` (0: in turn); nullopt when they have none.
  std::optional<EthHop> hop(ChipId from, ChipId to, uint64_t tileBytes = 0);

private:
  struct Use {
    uint32_t relays = 0;
    uint64_t bytes = 0;
  };
  bool room(EthEndpoint at, uint64_t tileBytes) const;
  bool room(const EthLink& l, uint64_t tileBytes) const { return room(l.a, tileBytes) && room(l.b, tileBytes); }
  // What a hop between neighbours costs a route (kClosed: no link with room).
  uint64_t hopCost(ChipId u, ChipId v, uint64_t tileBytes) const;
  // One hop weighs as much as an ethernet core's 32 streams of relays: a
  // route takes one more hop only to avoid more than 32 relays' worth of load.
  static constexpr uint64_t kHopCost = 32;
  static constexpr uint64_t kClosed = UINT64_MAX;
  uint32_t relaysAt(EthEndpoint at) const {
    auto it = use_.find(at);
    return it == use_.end() ? 0 : it->second.relays;
  }

  const ClusterDescriptor& cluster_;
  uint64_t ethL1_ = 0;
  uint32_t ethStreams_ = 0;
  std::map<EthEndpoint, Use> use_;
  std::map<std::pair<ChipId, ChipId>, size_t> next_; // round robin per unordered chip pair
};

// "chip 1" / "chips 0 -> 1 -> 3": a route for messages.
std::string routeText(const std::vector<ChipId>& route);

} // namespace tessera::pipe
