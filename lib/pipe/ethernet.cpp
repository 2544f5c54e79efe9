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

std::optional<EthHop> LinkPlanner::hop(ChipId from, ChipId to, uint64_t tileBytes) {
  const std::vector<EthLink> links = cluster_.linksBetween(from, to);
  if (links.empty()) return std::nullopt;
  size_t& n = next_[{std::min(from, to), std::max(from, to)}];
  size_t pick = n % links.size();
  ++n;
  if (tileBytes && !room(links[pick], tileBytes)) {
    // The least used link with room (fewest relays on its busier end).
    std::optional<size_t> best;
    uint32_t bestLoad = 0;
    for (size_t k = 0; k < links.size(); ++k) {
      if (!room(links[k], tileBytes)) continue;
      const uint32_t load = std::max(relaysAt(links[k].a), relaysAt(links[k].b));
      if (!best || load < bestLoad) {
        best = k;
        bestLoad = load;
      }
    }
    if (best) pick = *best;
  }
  const EthLink& l = links[pick];
  // Oriented from `from` (linksBetween gives the ends in that order).
  return EthHop{l.a, l.b};
}

void LinkPlanner::place(EthEndpoint at, uint64_t tileBytes) {
  Use& u = use_[at];
  ++u.relays;
  u.bytes += tileBytes;
}

bool LinkPlanner::room(EthEndpoint at, uint64_t tileBytes) const {
  auto it = use_.find(at);
  const Use u = it == use_.end() ? Use{} : it->second;
  return (!ethStreams_ || u.relays + 1 <= ethStreams_) && (!ethL1_ || u.bytes + tileBytes <= ethL1_);
}

bool LinkPlanner::usable(ChipId u, ChipId v, uint64_t tileBytes) const {
  for (const EthLink& l : cluster_.linksBetween(u, v))
    if (room(l, tileBytes)) return true;
  return false;
}

std::vector<ChipId> LinkPlanner::route(ChipId from, ChipId to, uint64_t tileBytes) const {
  const std::vector<ChipId> direct = cluster_.route(from, to);
  bool ok = !direct.empty();
  for (size_t i = 0; ok && i + 1 < direct.size(); ++i) ok = usable(direct[i], direct[i + 1], tileBytes);
  if (ok || direct.empty()) return direct;
  // Breadth first over links with room, neighbours in id order.
  std::map<ChipId, ChipId> parent{{from, from}};
  std::vector<ChipId> frontier{from};
  while (!frontier.empty() && !parent.count(to)) {
    std::vector<ChipId> next;
    for (ChipId u : frontier) {
      std::vector<ChipId> nbrs;
      for (const EthLink& l : cluster_.links) {
        if (l.a.chip == u) nbrs.push_back(l.b.chip);
        if (l.b.chip == u) nbrs.push_back(l.a.chip);
      }
      std::sort(nbrs.begin(), nbrs.end());
      nbrs.erase(std::unique(nbrs.begin(), nbrs.end()), nbrs.end());
      for (ChipId v : nbrs)
        if (!parent.count(v) && usable(u, v, tileBytes)) {
          parent[v] = u;
          next.push_back(v);
        }
    }
    frontier = std::move(next);
  }
  if (!parent.count(to)) return direct;
  std::vector<ChipId> path{to};
  while (path.back() != from) path.push_back(parent.at(path.back()));
  std::reverse(path.begin(), path.end());
  return path;
}

std::string routeText(const std::vector<ChipId>& route) {
  std::string s = route.size() > 1 ? "chips " : "chip ";
  for (size_t i = 0; i < route.size(); ++i) s += (i ? " -> " : "") + std::to_string(route[i]);
  return s;
}

} // namespace tessera::pipe
