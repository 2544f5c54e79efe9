// DRAM reads beyond a core's DRAM input streams, relayed through idle cores
// (docs/net2pipe.md "DRAM reads beyond the core's streams").
#include "pipe/dram_relays.hpp"

#include "pipe/pipegen_model.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

namespace tessera::pipe::build {

namespace {

using Core = std::tuple<uint32_t, uint32_t, uint32_t>; // chip, r, c (worker cores only)

// The smallest d dividing tiles.size() with tiles[i] == tiles[i % d].
size_t tilePeriod(const std::vector<SourceTile>& tiles) {
  const size_t n = tiles.size();
  for (size_t d = 1; d < n; ++d) {
    if (n % d) continue;
    bool ok = true;
    for (size_t i = d; i < n && ok; ++i) ok = tiles[i] == tiles[i - d];
    if (ok) return d;
  }
  return n;
}

// An idle core's relays: DRAM streams and L1 it has given out.
struct IdleUse {
  uint32_t streams = 0;
  uint64_t bytes = 0;
};

} // namespace

size_t relayExcessDramReads(DramRelayContext& ctx) {
  std::vector<Buf>& bufs = ctx.bufs;
  std::vector<PendingPipe>& pending = ctx.pending;
  auto coreOf = [&](uint32_t h) { return Core{bufs[h].doc.chipId, bufs[h].doc.core.r, bufs[h].doc.core.c}; };
  auto onWorker = [&](uint32_t h) { return bufs[h].place == Buf::Place::Core && !bufs[h].doc.ethernetChan; };

  // DRAM-reading pipes per hosting worker core; those that may move.
  std::map<Core, uint32_t> count;
  std::map<Core, std::vector<size_t>> movable;
  std::set<Core> busy; // worker cores holding a buffer of the epoch
  for (size_t h = 0; h < bufs.size(); ++h)
    if (onWorker(static_cast<uint32_t>(h))) busy.insert(coreOf(static_cast<uint32_t>(h)));
  for (size_t pi = 0; pi < pending.size(); ++pi) {
    const PendingPipe& p = pending[pi];
    if (p.toDram || p.tiles.empty()) continue;
    bool dram = false, offCore = true;
    for (const SourceTile& t : p.tiles) {
      dram |= bufs[t.source].place == Buf::Place::Dram;
      offCore &= bufs[t.source].place != Buf::Place::Core;
    }
    if (!dram) continue;
    const uint32_t host = ctx.sendingCore(p);
    if (!onWorker(host)) continue; // ethernet cores: relays.cpp places their DRAM reads
    const Core key = coreOf(host);
    ++count[key];
    if (offCore && p.slots.empty()) movable[key].push_back(pi);
  }

  const SocDescriptor& soc = *ctx.sh.target.device;
  std::map<Core, IdleUse> idle;
  std::vector<PendingPipe> added; // relay reads (A) appended after the epoch's pipes
  size_t moved = 0;
  for (const auto& [key, pis] : movable) {
    const uint32_t n = count[key];
    if (n <= ctx.limit) continue;
    const auto [chip, hr, hc] = key;
    uint32_t excess = n - ctx.limit;
    // The core's last DRAM pipes move first.
    for (auto it = pis.rbegin(); it != pis.rend() && excess > 0; ++it) {
      PendingPipe& p = pending[*it];
      const size_t period = tilePeriod(p.tiles);
      uint32_t like = p.tiles.front().source;
      for (const SourceTile& t : p.tiles)
        if (bufs[t.source].place == Buf::Place::Dram) {
          like = t.source;
          break;
        }
      const Buffer& src = bufs[like].doc;
      const uint32_t ringTiles = static_cast<uint32_t>(std::min<size_t>(period, kExtraStreamRingTiles));
      const uint64_t ring = uint64_t{ringTiles} * src.tileSize;
      // The nearest idle core of the chip (Manhattan distance, then row-major)
      // with a DRAM input stream and L1 to spare.
      std::optional<Core> best;
      int bestDistance = 0;
      for (int r = 0; r < soc.workerRows; ++r)
        for (int c = 0; c < soc.workerCols; ++c) {
          const Core at{chip, static_cast<uint32_t>(r), static_cast<uint32_t>(c)};
          if (busy.count(at)) continue;
          const IdleUse& use = idle[at];
          if (use.streams >= ctx.limit || use.bytes + ring > ctx.l1DataBytes) continue;
          const int distance = std::abs(r - static_cast<int>(hr)) + std::abs(c - static_cast<int>(hc));
          if (!best || distance < bestDistance) {
            best = at;
            bestDistance = distance;
          }
        }
      if (!best) break; // no idle core left: the resource check reports the core
      IdleUse& use = idle[*best];
      ++use.streams;
      use.bytes += ring;
      const auto [rchip, rr, rc] = *best;

      Buf b;
      b.category = 3;
      b.orderKey = bufs.size();
      b.op = p.op;
      b.minSize = ringTiles;
      Buffer& d = b.doc;
      d.uniqid = ctx.sh.newId();
      d.mdOpName = p.op ? p.op->name : src.mdOpName;
      d.bufferType = BufferType::Relay;
      const std::string reader = p.op ? "op " + p.op->name + " input " + std::to_string(p.input) : "a DRAM read";
      const std::string hostText = coreText(hr, hc);
      d.comment = "Relay for " + reader + ": DRAM tiles for " + hostText + " (it reads DRAM for " + std::to_string(n) +
                  " pipes, a core has " + std::to_string(ctx.limit) + " DRAM input streams) at " + coreText(rr, rc);
      d.chipId = rchip;
      d.core = CoreCoord{rr, rc};
      d.tilesPerInput = static_cast<uint32_t>(period);
      d.epochTiles = static_cast<uint32_t>(period * static_cast<size_t>(ctx.inputCount));
      d.sizeTiles = ringTiles;
      d.scatterGatherNumTiles = ringTiles;
      d.tileSize = src.tileSize;
      d.dataFormat = src.dataFormat;
      d.mblockK = 1;
      bufs.push_back(std::move(b));
      const uint32_t relay = static_cast<uint32_t>(bufs.size() - 1);

      // A: one period of the DRAM tiles into the relay.
      PendingPipe a;
      a.tiles.assign(p.tiles.begin(), p.tiles.begin() + static_cast<std::ptrdiff_t>(period));
      a.outputs = {relay};
      a.op = p.op;
      a.input = p.input;
      a.comment = "Relay: DRAM read for " + reader + " to the relay at " + coreText(rr, rc) + " (for " + hostText + ")";
      // B: the relay's period, as often as the original list repeats it.
      std::vector<SourceTile> fromRelay;
      fromRelay.reserve(p.tiles.size());
      for (size_t k = 0; k < p.tiles.size(); ++k) fromRelay.push_back(SourceTile{relay, static_cast<int64_t>(k % period)});
      p.tiles = std::move(fromRelay);
      p.comment += "; through the relay at " + coreText(rr, rc) + " (" + hostText + " has no DRAM input stream left)";
      added.push_back(std::move(a));
      --excess;
      ++moved;
    }
  }
  for (PendingPipe& a : added) pending.push_back(std::move(a));
  return moved;
}

} // namespace tessera::pipe::build
