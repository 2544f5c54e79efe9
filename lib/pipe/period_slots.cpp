// Successive periods of a packer to the slots of one pipe
// (docs/net2pipe.md "Successive periods to slots").
//
// An op on one core whose output is split among the cores of a large grid
// (datacopy_stack, t = 100, read by the 100 cores of an `hstack: 10,
// vstack: 10` consumer: each core takes one t slice) is read by one pipe per
// core, each a fork stream of the packer: more than the core's 64 streams.
// BUDA's net2pipe writes such readers as one pipe with a nested output_list
// whose inner lists take the packer's successive periods in turn (its
// hstack/vstack anchors: pipe_periodic_repeat 0, the packer's period one
// slice). pipegen sends pass k to slot k mod G and moves the packer to its
// next period after every round of one pass, so the slots take the input's
// runs in order, from one stream.
#include "pipe/period_slots.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace tessera::pipe::build {

namespace {

// The one run of `p`'s tiles, or nullopt when it reads several or repeats.
std::optional<Run> singleRun(const PendingPipe& p) {
  if (p.tiles.empty()) return std::nullopt;
  const std::vector<Run> runs = toRuns(p.tiles);
  if (runs.size() != 1) return std::nullopt;
  return runs.front();
}

} // namespace

size_t slotSuccessivePeriods(std::vector<PendingPipe>& pending, std::vector<Buf>& bufs, uint32_t streamLimit,
                             const CoreStreamsFn& coreStreams, const IndependentFn& independent) {
  // Reading pipes per packer; a packer with any reader that is not a plain
  // on-chip op-input pipe taking one run of it is left alone.
  std::map<uint32_t, std::vector<size_t>> readers;
  std::map<uint32_t, bool> eligible;
  for (size_t pi = 0; pi < pending.size(); ++pi) {
    const PendingPipe& p = pending[pi];
    std::vector<uint32_t> srcs;
    for (const SourceTile& t : p.tiles)
      if (std::find(srcs.begin(), srcs.end(), t.source) == srcs.end()) srcs.push_back(t.source);
    for (uint32_t h : srcs) {
      if (!bufs[h].packer || bufs[h].doc.chainRelay()) continue;
      readers[h].push_back(pi);
      auto [it, fresh] = eligible.emplace(h, true);
      const std::optional<Run> run = srcs.size() == 1 ? singleRun(p) : std::nullopt;
      bool ok = run && !p.toDram && p.op && p.slots.empty();
      if (ok)
        for (uint32_t o : p.outputs) {
          const Buffer& d = bufs[o].doc;
          ok &= bufs[o].place == Buf::Place::Core && !d.chainRelay() && d.chipId == bufs[h].doc.chipId;
        }
      it->second = it->second && ok;
    }
  }
  std::vector<bool> dropped(pending.size(), false);
  size_t served = 0;
  for (const auto& [h, pis] : readers) {
    if (!eligible[h] || pis.size() < 2) continue;
    if (coreStreams(h) + static_cast<uint32_t>(pis.size() - 1) <= streamLimit) continue;
    const int64_t T = static_cast<int64_t>(bufs[h].doc.tilesPerInput);
    const int64_t L = singleRun(pending[pis.front()])->length;
    if (L <= 0 || T % L != 0 || static_cast<int64_t>(pis.size()) != T / L) continue;
    // Slot k: the pipe reading [k L, (k + 1) L).
    std::vector<size_t> bySlot(pis.size(), SIZE_MAX);
    bool ok = true;
    for (size_t pi : pis) {
      const Run r = *singleRun(pending[pi]);
      if (r.length != L || r.start % L != 0) {
        ok = false;
        break;
      }
      size_t& at = bySlot[static_cast<size_t>(r.start / L)];
      if (at != SIZE_MAX) {
        ok = false;
        break;
      }
      at = pi;
    }
    for (size_t a = 0; ok && a < pis.size(); ++a)
      for (size_t b = a + 1; ok && b < pis.size(); ++b) ok = independent(pending[pis[a]], pending[pis[b]]);
    if (!ok) continue;
    // The first reader in pipe order carries them all; its list is one
    // period (the run at 0, as the packer's period restarts at 0).
    PendingPipe& first = pending[pis.front()];
    std::vector<SourceTile> period;
    for (int64_t i = 0; i < L; ++i) period.push_back(SourceTile{h, i});
    std::vector<std::vector<uint32_t>> slots;
    for (size_t pi : bySlot) slots.push_back(pending[pi].outputs);
    for (size_t k = 1; k < pis.size(); ++k) dropped[pis[k]] = true;
    first.tiles = std::move(period);
    first.outputs = slots.front();
    first.slots = std::move(slots);
    first.successivePeriods = true;
    first.comment += "; " + std::to_string(pis.size()) + " slots take successive periods of " + std::to_string(L) +
                     " tiles (the core has too few streams for a fork per reader)";
    bufs[h].period = L;
    ++served;
  }
  if (served == 0) return 0;
  std::vector<PendingPipe> kept;
  kept.reserve(pending.size());
  for (size_t pi = 0; pi < pending.size(); ++pi)
    if (!dropped[pi]) kept.push_back(std::move(pending[pi]));
  pending = std::move(kept);
  return served;
}

} // namespace tessera::pipe::build
