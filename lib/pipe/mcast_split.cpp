// Multicasts beyond a core's multicast streams, sent as unicasts
// (docs/net2pipe.md "Multicasts beyond the core's streams").
#include "pipe/mcast_split.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace tessera::pipe::build {

namespace {

// Replaces each pipe marked in `split` by one unicast per destination, the
// same tiles in the same order; `why` ends each unicast's comment.
void toUnicasts(std::vector<PendingPipe>& pending, const std::vector<bool>& split, size_t splitCount,
                const std::string& why) {
  std::vector<PendingPipe> out;
  out.reserve(pending.size() + splitCount * 4);
  for (size_t pi = 0; pi < pending.size(); ++pi) {
    if (!split[pi]) {
      out.push_back(std::move(pending[pi]));
      continue;
    }
    const PendingPipe& p = pending[pi];
    const size_t n = p.outputs.size();
    for (size_t k = 0; k < n; ++k) {
      PendingPipe u;
      u.tiles = p.tiles;
      u.outputs = {p.outputs[k]};
      u.op = p.op;
      u.input = p.input;
      u.toDram = p.toDram;
      std::string what = p.comment;
      if (auto at = what.find(" (multicast)"); at != std::string::npos) what.erase(at, 12);
      u.comment = what + "; unicast " + std::to_string(k + 1) + " of " + std::to_string(n) + " of a multicast (" + why + ")";
      out.push_back(std::move(u));
    }
  }
  pending = std::move(out);
}

} // namespace

size_t splitExcessMulticasts(std::vector<PendingPipe>& pending, uint32_t limit, const SendingCoreFn& sendingCore) {
  std::map<uint64_t, uint32_t> count;              // multicasts per sending core
  // Of those, the plain (not time-multiplexed) ones, with whether the core's
  // packer sends them (else a relay stream there reads DRAM or gathers).
  std::map<uint64_t, std::vector<std::pair<size_t, bool>>> movable;
  for (size_t pi = 0; pi < pending.size(); ++pi) {
    const PendingPipe& p = pending[pi];
    if (p.toDram || !p.multicast()) continue;
    bool single = false;
    const uint64_t key = sendingCore(p, single);
    ++count[key];
    if (p.slots.empty()) movable[key].push_back({pi, single});
  }
  std::vector<bool> split(pending.size(), false);
  size_t splitCount = 0;
  for (auto& [key, pis] : movable) {
    uint32_t n = count[key];
    if (n <= limit) continue;
    // The packer's own multicasts first (their unicasts are fork streams of
    // the packer; a DRAM or gathered multicast's unicasts each read DRAM or
    // gather on their destination), fewest destinations first (each unicast
    // beyond the first costs a stream).
    std::stable_sort(pis.begin(), pis.end(), [&](const auto& a, const auto& b) {
      if (a.second != b.second) return a.second;
      return pending[a.first].outputs.size() < pending[b.first].outputs.size();
    });
    for (const auto& [pi, single] : pis) {
      if (n <= limit) break;
      split[pi] = true;
      --n;
      ++splitCount;
    }
  }
  if (!splitCount) return 0;
  toUnicasts(pending, split, splitCount, "the sending core has no multicast stream left");
  return splitCount;
}

size_t splitMulticastsWhere(std::vector<PendingPipe>& pending, const std::function<bool(const PendingPipe&)>& where,
                            const std::string& why) {
  std::vector<bool> split(pending.size(), false);
  size_t splitCount = 0;
  for (size_t pi = 0; pi < pending.size(); ++pi) {
    const PendingPipe& p = pending[pi];
    if (p.toDram || !p.slots.empty() || !p.multicast() || !where(p)) continue;
    split[pi] = true;
    ++splitCount;
  }
  if (splitCount) toUnicasts(pending, split, splitCount, why);
  return splitCount;
}

} // namespace tessera::pipe::build
