#include "pipe/ethernet.hpp"

#include <algorithm>
#include <set>

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

uint64_t LinkPlanner::hopCost(ChipId u, ChipId v, uint64_t tileBytes) const {
  // The least used link of the pair that still takes the relay, by the
  // relays on its busier end; none: the hop is closed.
  std::optional<uint32_t> load;
  for (const EthLink& l : cluster_.linksBetween(u, v))
    if (room(l, tileBytes)) {
      const uint32_t busier = std::max(relaysAt(l.a), relaysAt(l.b));
      load = load ? std::min(*load, busier) : busier;
    }
  return load ? kHopCost + *load : kClosed;
}

std::vector<ChipId> LinkPlanner::route(ChipId from, ChipId to, uint64_t tileBytes) const {
  const std::vector<ChipId> direct = cluster_.route(from, to);
  if (direct.size() < 2) return direct;
  std::map<ChipId, std::vector<ChipId>> nbrs;  // ascending, each once
  for (const EthLink& l : cluster_.links) {
    nbrs[l.a.chip].push_back(l.b.chip);
    nbrs[l.b.chip].push_back(l.a.chip);
  }
  for (auto& [c, n] : nbrs) {
    std::sort(n.begin(), n.end());
    n.erase(std::unique(n.begin(), n.end()), n.end());
  }
  // Dijkstra from `to` (a hop costs the same both ways): each hop weighs
  // kHopCost plus the relays already on its least used link, so routes
  // stay short and, among routes of one length, avoid the busy links
  // (BUDA's router weighs hops by the streams already on their ethernet
  // cores). Links without room are closed: a detour around full ones.
  std::map<ChipId, uint64_t> dist{{to, 0}};
  std::set<std::pair<uint64_t, ChipId>> open{{0, to}};
  std::map<std::pair<ChipId, ChipId>, uint64_t> cost;
  auto costOf = [&](ChipId u, ChipId v) {
    auto key = std::make_pair(std::min(u, v), std::max(u, v));
    auto it = cost.find(key);
    if (it == cost.end()) it = cost.emplace(key, hopCost(u, v, tileBytes)).first;
    return it->second;
  };
  while (!open.empty()) {
    auto [d, u] = *open.begin();
    open.erase(open.begin());
    if (d != dist.at(u)) continue;
    for (ChipId v : nbrs[u]) {
      const uint64_t c = costOf(u, v);
      if (c == kClosed) continue;
      auto it = dist.find(v);
      if (it == dist.end() || d + c < it->second) {
        if (it != dist.end()) open.erase({it->second, v});
        dist[v] = d + c;
        open.insert({d + c, v});
      }
    }
  }
  if (!dist.count(from)) return direct;  // no route with room: the resource checks report the core
  // Walk from `from`, each step to the lowest-id neighbour on a cheapest
  // route: with no load yet, ClusterDescriptor::route's own route.
  std::vector<ChipId> path{from};
  for (ChipId cur = from; cur != to;) {
    std::optional<ChipId> next;
    for (ChipId v : nbrs[cur]) {
      const uint64_t c = costOf(cur, v);
      auto it = dist.find(v);
      if (c != kClosed && it != dist.end() && it->second + c == dist.at(cur)) {
        next = v;
        break;
      }
    }
    if (!next) return direct;  // unreachable: dist came from these costs
    cur = *next;
    path.push_back(cur);
  }
  return path;
}

std::string routeText(const std::vector<ChipId>& route) {
  std::string s = route.size() > 1 ? "chips " : "chip ";
  for (size_t i = 0; i < route.size(); ++i) s += (i ? " -> " : "") + std::to_string(route[i]);
  return s;
}

} // namespace tessera::pipe
