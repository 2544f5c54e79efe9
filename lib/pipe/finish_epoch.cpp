// net2pipe's epoch builder, finishing: queue buffer use, packer windows,
// buffer sizes and the L1 fit, and the pending pipes chunked into pipes
// (epoch_builder.hpp).
#include "pipe/epoch_builder.hpp"

#include "pipe/pcie.hpp"

#include <algorithm>

namespace tessera::pipe::build {

using namespace netlist;

void EpochBuilder::finish() {
  // Queue buffers: how they are used this epoch.
  for (const PendingPipe& p : pending_) {
    if (p.toDram) continue;
    std::set<uint32_t> seen;
    for (const SourceTile& t : p.tiles) {
      Buf& b = bufs_[t.source];
      if (b.place != Buf::Place::Dram || !seen.insert(t.source).second) continue;
      if (epoch_.settingsOf(b.queue->name).prologue) {
        b.readProlog = true;
        if (b.prologFor.empty()) b.prologFor = p.op->name;
      } else {
        b.readStreamed = true;
      }
    }
  }
  for (Buf& b : bufs_)
    if (b.place == Buf::Place::Dram && b.written) b.writtenEpilogue = epoch_.settingsOf(b.queue->name).epilogue;

  std::vector<SourceStats> stats(bufs_.size());
  std::vector<std::vector<Run>> runs(pending_.size());
  for (size_t pi = 0; pi < pending_.size(); ++pi) {
    runs[pi] = toRuns(pending_[pi].tiles);
    std::map<uint32_t, int> runCount;
    for (size_t slot = 0; slot < pending_[pi].slotCount(); ++slot)
    for (const Run& r : runs[pi]) {
      SourceStats& s = stats[r.source];
      s.gcd = gcd64(gcd64(s.gcd, r.start), r.length);
      if (s.pipes.empty() || s.pipes.back() != pi) s.pipes.push_back(pi);
      const int n = ++runCount[r.source];
      if (n > 1 || r.start != 0 || r.length != static_cast<int64_t>(bufs_[r.source].doc.tilesPerInput)) s.inOrderOnce = false;
    }
  }
  // Packer windows: each reading pipe's order of this buffer's tiles.
  for (size_t pi = 0; pi < pending_.size(); ++pi) {
    std::map<uint32_t, std::vector<int64_t>> orders;
    const size_t passes = pending_[pi].successivePeriods ? 1 : pending_[pi].slotCount(); // each slot re-reads the list
    for (size_t slot = 0; slot < passes; ++slot)
      for (const SourceTile& t : pending_[pi].tiles)
        if (bufs_[t.source].packer && !stats[t.source].inOrderOnce && !chains_.onEthernet(t.source))
          orders[t.source].push_back(t.index);
    for (auto& [h, order] : orders) bufs_[h].window = std::max(bufs_[h].window, reorderWindow(order));
  }
  // Relays are FIFOs: a chain's origin keeps its readers' windows.
  if (multiChip()) chains_.originWindows(pending_);
  // Packers read out of order grow to their window; then every core's
  // buffers must fit its L1 (fitL1 shrinks them towards their minimum).
  for (Buf& b : bufs_) {
    if (!b.packer) continue;
    Buffer& d = b.doc;
    const int64_t window = (b.window + b.ublockTiles - 1) / b.ublockTiles * b.ublockTiles;
    b.minSize = std::max(b.minSize, window);
    if (window > static_cast<int64_t>(d.sizeTiles)) {
      d.comment += " (size grown from " + std::to_string(d.sizeTiles) + " to " + std::to_string(window) +
                   " tiles: read out of order)";
      d.sizeTiles = static_cast<uint32_t>(window);
    }
  }
  fitL1();
  for (size_t h = 0; h < bufs_.size(); ++h) {
    Buf& b = bufs_[h];
    Buffer& d = b.doc;
    const SourceStats& s = stats[h];
    b.hasReaders = !s.pipes.empty();
    const int64_t T = d.tilesPerInput;
    if (b.packer) {
      if (s.inOrderOnce) {
        d.scatterGatherNumTiles = static_cast<uint32_t>(gcd64(T, d.sizeTiles));
      } else {
        d.isScatter = true;
        d.scatterGatherNumTiles = static_cast<uint32_t>(gcd64(gcd64(s.gcd, T), d.sizeTiles));
        d.replicate = static_cast<uint32_t>((b.period ? b.period : T) / d.scatterGatherNumTiles);
      }
    } else if (b.place == Buf::Place::Dram) {
      const bool read = b.readProlog || b.readStreamed;
      d.bufferType = b.readProlog && !b.readStreamed && !b.written ? BufferType::DramProlog : BufferType::DramIo;
      if (b.readProlog) d.comment += ", prolog for op: " + b.prologFor;
      if (!b.written) d.ublockRt = d.ublockCt = d.mblockM = d.mblockN = 0; // only read: BUDA writes 0
      d.dramBufFlag = (b.readProlog && !b.readStreamed) || b.writtenEpilogue;
      d.writeDramBufFlag = b.writtenEpilogue;
      d.dramIoFlag = b.readStreamed || (b.written && !b.writtenEpilogue);
      const int64_t entries = d.dramIoFlag ? inputCount_ : 1;
      d.epochTiles = static_cast<uint32_t>(T * entries);
      if (read) {
        d.isScatter = true;
        int64_t chunk = gcd64(s.gcd, T);
        if (b.readStreamed) chunk = dramReadChunk(static_cast<uint32_t>(h), chunk, s);
        d.scatterGatherNumTiles = static_cast<uint32_t>(chunk);
        d.replicate = static_cast<uint32_t>(T / d.scatterGatherNumTiles);
      } else {
        d.scatterGatherNumTiles = static_cast<uint32_t>(T);
      }
    }
  }
  // Pipes: entries, periodic compression, DRAM reader bookkeeping.
  std::map<uint32_t, std::vector<size_t>> dramReaders; // buffer -> reading pipes
  for (size_t pi = 0; pi < pending_.size(); ++pi)
    for (const Run& r : runs[pi])
      if (bufs_[r.source].place == Buf::Place::Dram) {
        auto& v = dramReaders[r.source];
        if (v.empty() || v.back() != pi) v.push_back(pi);
      }
  dramReaders_ = dramReaders;
  for (size_t pi = 0; pi < pending_.size(); ++pi) {
    const PendingPipe& pp = pending_[pi];
    Pipe p;
    p.id = sh_.newId();
    p.comment = pp.comment;
    std::vector<BufferId> entries;
    std::vector<uint32_t> entrySource;
    int64_t chunkGcd = 0;
    for (const Run& r : runs[pi]) {
      const Buffer& d = bufs_[r.source].doc;
      if (!d.isScatter) {
        entries.push_back(d.uniqid);
        entrySource.push_back(r.source);
        chunkGcd = gcd64(chunkGcd, d.tilesPerInput);
        continue;
      }
      const int64_t g = d.scatterGatherNumTiles;
      for (int64_t o = r.start; o < r.start + r.length; o += g) {
        entries.push_back(d.uniqid + static_cast<uint64_t>(o));
        entrySource.push_back(r.source);
      }
      chunkGcd = gcd64(chunkGcd, g);
    }
    const size_t period = smallestPeriod(entries);
    if (period < entries.size()) {
      p.pipePeriodicRepeat = static_cast<uint32_t>(entries.size() / period);
      entries.resize(period);
      entrySource.resize(period);
    }
    p.inputList = entries;
    if (pp.slots.empty()) {
      std::vector<BufferId> outs;
      for (uint32_t h : pp.outputs) outs.push_back(bufs_[h].doc.uniqid);
      p.outputList.push_back(outs);
    } else {
      // Pass k goes to slot k % G: R = G x (the list's repeats) passes per
      // input give every slot the whole list (docs/pipegen-yaml.md).
      for (const auto& slot : pp.slots) {
        std::vector<BufferId> outs;
        for (uint32_t h : slot) outs.push_back(bufs_[h].doc.uniqid);
        p.outputList.push_back(outs);
      }
      p.outputListNested = true;
      // Successive periods: a round of the list's own repeats per slot.
      if (!pp.successivePeriods)
        p.pipePeriodicRepeat = std::max<uint32_t>(1, p.pipePeriodicRepeat) * static_cast<uint32_t>(pp.slots.size());
      p.outputPaddingList.assign(pp.slots.size(), 0);
    }
    const bool mcast = pp.multicast();
    p.mmioPipe = isMmioPipe(bufs_, pp);
    if (pp.toDram) {
      p.incomingNocId = 0;
      p.outgoingNocId = 0;
      const Buffer& src = bufs_[pp.tiles.front().source].doc;
      p.mcastCoreRc.push_back({src.chipId, src.core.r, src.core.c});
    } else {
      const CoreCoord first = bufs_[pp.outputs.front()].doc.core, last = bufs_[pp.outputs.back()].doc.core;
      p.outgoingNocId = mcast && first.c == last.c && first.r != last.r ? 1 : 0; // column multicasts on NOC 1
      p.incomingVc = 2;
      p.outgoingVc = mcast ? 4 : 2;
      const uint32_t chip = bufs_[pp.outputs.front()].doc.chipId;
      if (pp.slots.empty()) p.mcastCoreRc.push_back({chip, first.r, first.c});
      for (const auto& slot : pp.slots) // one per slot, as BUDA writes them
        p.mcastCoreRc.push_back({chip, bufs_[slot.front()].doc.core.r, bufs_[slot.front()].doc.core.c});
    }
    bool dram = false;
    for (uint32_t h : entrySource) dram |= bufs_[h].place != Buf::Place::Core;
    if (dram) {
      for (uint32_t h : entrySource) {
        if (bufs_[h].place == Buf::Place::Dram) {
          const auto& readers = dramReaders.at(h);
          p.dramPipeTotalReaders.push_back(static_cast<uint32_t>(readers.size()));
          p.dramPipeReaderIndex.push_back(
              static_cast<uint32_t>(std::find(readers.begin(), readers.end(), pi) - readers.begin()));
        } else {
          p.dramPipeTotalReaders.push_back(1);
          p.dramPipeReaderIndex.push_back(0);
        }
      }
    }
    // Destination granularity: the chunks it receives.
    for (uint32_t h : pp.allOutputs()) {
      Buffer& d = bufs_[h].doc;
      // (A relay is read as well: its chunks are those of its readers.)
      if (bufs_[h].place == Buf::Place::Core && !d.chainRelay()) d.scatterGatherNumTiles = static_cast<uint32_t>(chunkGcd);
    }
    pipes_.push_back(std::move(p));
  }
  // BUDA's convention: a prolog buffer names the core its first reader
  // writes (pipegen2 routes the read there; [255, 255] has no router).
  for (const auto& [h, readers] : dramReaders) {
    Buffer& d = bufs_[h].doc;
    if (d.bufferType != BufferType::DramProlog || pending_[readers.front()].toDram) continue;
    const Buffer& dest = bufs_[pending_[readers.front()].outputs.front()].doc;
    if (dest.chipId == d.chipId && !dest.ethernetChan) d.core = dest.core;
  }
}

// BUDA's DRAM read chunk (its net2pipe; pipegen2 gives a streamed DRAM
// read an L1 buffer of one chunk on the reading core, counted against the
// core's data buffer budget): no larger than a reading buffer that is
// smaller (the gcd with it, so chunks still tile both), then the largest
// divisor within DRAM_INPUT_STREAM_MAX_PENDING_READ_BYTES (64 KiB).
int64_t EpochBuilder::dramReadChunk(uint32_t h, int64_t chunk, const SourceStats& s) const {
  constexpr uint64_t kMaxPendingReadBytes = 64 * 1024;
  for (size_t pi : s.pipes) {
    if (pending_[pi].toDram) continue;
    for (uint32_t o : pending_[pi].allOutputs()) {
      if (bufs_[o].place != Buf::Place::Core) continue;
      const int64_t size = bufs_[o].doc.sizeTiles;
      if (size > 0 && size < chunk) chunk = gcd64(chunk, size);
    }
  }
  const uint64_t tile = std::max<uint32_t>(1, bufs_[h].doc.tileSize);
  if (uint64_t(chunk) * tile <= kMaxPendingReadBytes) return chunk;
  int64_t best = 1;
  for (int64_t dv = 1; dv * dv <= chunk; ++dv) {
    if (chunk % dv) continue;
    for (int64_t c : {dv, chunk / dv})
      if (uint64_t(c) * tile <= kMaxPendingReadBytes) best = std::max(best, c);
  }
  return best;
}

// A core whose buffers overflow L1 at their preferred sizes (double
// buffering, buf_size_mb) gives up the extra space, the largest saving
// first, down to each buffer's minimum (what its kernel pops or pushes at
// once, its readers' window). checkResources reports a core that still
// does not fit.
void EpochBuilder::fitL1() {
  std::map<uint64_t, std::vector<uint32_t>> byCore;
  for (size_t h = 0; h < bufs_.size(); ++h)
    if (bufs_[h].place == Buf::Place::Core) byCore[coreKey(static_cast<uint32_t>(h))].push_back(static_cast<uint32_t>(h));
  relayBytes_ = relayRingBytes();
  for (auto& [key, hs] : byCore) {
    const uint64_t limit = l1Limit(key);
    const auto relay = relayBytes_.find(key);
    uint64_t used = relay == relayBytes_.end() ? 0 : relay->second;
    for (uint32_t h : hs) used += uint64_t{bufs_[h].doc.sizeTiles} * bufs_[h].doc.tileSize;
    if (used <= limit) continue;
    auto saving = [&](uint32_t h) {
      const Buf& b = bufs_[h];
      const int64_t spare = static_cast<int64_t>(b.doc.sizeTiles) - b.minSize;
      return spare > 0 ? uint64_t(spare) * b.doc.tileSize : 0;
    };
    std::vector<uint32_t> order(hs);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return saving(a) > saving(b); });
    for (uint32_t h : order) {
      if (used <= limit) break;
      Buffer& d = bufs_[h].doc;
      const uint64_t save = saving(h);
      if (save == 0) continue;
      // Only as much as needed, in whole granules of the buffer.
      const int64_t granule = std::max<int64_t>(1, bufs_[h].granule);
      const uint64_t excess = used - limit;
      int64_t drop = static_cast<int64_t>((excess + d.tileSize - 1) / d.tileSize);
      drop = (drop + granule - 1) / granule * granule;
      const int64_t newSize = std::max<int64_t>(bufs_[h].minSize, static_cast<int64_t>(d.sizeTiles) - drop);
      used -= uint64_t(d.sizeTiles - newSize) * d.tileSize;
      d.comment += " (size reduced from " + std::to_string(d.sizeTiles) + " to " + std::to_string(newSize) +
                   " tiles to fit L1)";
      d.sizeTiles = static_cast<uint32_t>(newSize);
    }
  }
}

// L1 that pipegen's extra streams take on each hosting core: a ring of
// kExtraStreamRingTiles for every pipe not sent from a single source core
// (a DRAM read or a gather) that multicasts or writes DRAM.
std::map<uint64_t, uint64_t> EpochBuilder::relayRingBytes() const {
  std::map<uint64_t, uint64_t> bytes;
  for (const PendingPipe& p : pending_) {
    if (!p.multicast() && !p.toDram) continue;
    bool single = false;
    const uint32_t host = sendingCore(p, &single);
    if (single) continue;
    bytes[coreKey(host)] += uint64_t{kExtraStreamRingTiles} * bufs_[p.tiles.front().source].doc.tileSize;
  }
  return bytes;
}

} // namespace tessera::pipe::build
