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
  explicit LinkPlanner(const ClusterDescriptor& cluster) : cluster_(cluster) {}

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

  // One hop between neighbours `from` and `to`: the next of their links in
  // turn; nullopt when they have none.
  std::optional<EthHop> hop(ChipId from, ChipId to);

private:
  const ClusterDescriptor& cluster_;
  std::map<std::pair<ChipId, ChipId>, size_t> next_; // round robin per unordered chip pair
};

// "chip 1" / "chips 0 -> 1 -> 3": a route for messages.
std::string routeText(const std::vector<ChipId>& route);

} // namespace tessera::pipe
