#include "pipe/ethernet.hpp"

#include <algorithm>

namespace tessera::pipe {

std::optional<std::vector<EthHop>> LinkPlanner::chain(ChipId from, ChipId to, std::optional<uint32_t> firstChan,
                                                      std::optional<uint32_t> lastChan) {
  const std::vector<ChipId> route = cluster_.route(from, to);
  if (route.empty()) return std::nullopt;
  std::vector<EthHop> hops;
  for (size_t i = 0; i + 1 < route.size(); ++i) {
    const ChipId u = route[i], v = route[i + 1];
    const std::vector<EthLink> links = cluster_.linksBetween(u, v);
    if (links.empty()) return std::nullopt; // route() only steps over links
    // A pinned channel whose link leads the right way decides the hop (the
    // first channel before the last one on a single hop).
    std::optional<size_t> pick;
    for (size_t k = 0; k < links.size() && !pick; ++k)
      if (i == 0 && firstChan && links[k].a.chan == *firstChan) pick = k;
    for (size_t k = 0; k < links.size() && !pick; ++k)
      if (i + 2 == route.size() && lastChan && links[k].b.chan == *lastChan) pick = k;
    if (!pick) {
      size_t& n = next_[{std::min(u, v), std::max(u, v)}];
      pick = n % links.size();
      ++n;
    }
    hops.push_back(EthHop{links[*pick].a, links[*pick].b});
  }
  return hops;
}

std::optional<EthHop> LinkPlanner::hop(ChipId from, ChipId to) {
  const std::vector<EthLink> links = cluster_.linksBetween(from, to);
  if (links.empty()) return std::nullopt;
  size_t& n = next_[{std::min(from, to), std::max(from, to)}];
  const EthLink& l = links[n % links.size()];
  ++n;
  return EthHop{l.a, l.b};
}

std::string routeText(const std::vector<ChipId>& route) {
  std::string s = route.size() > 1 ? "chips " : "chip ";
  for (size_t i = 0; i < route.size(); ++i) s += (i ? " -> " : "") + std::to_string(route[i]);
  return s;
}

} // namespace tessera::pipe
