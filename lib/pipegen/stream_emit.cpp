// pipegen's stream builder, output: the phases of every stream (blob.yaml)
// and the L1 placement of every ring (stream_builder.hpp).
#include "pipegen/stream_builder.hpp"

#include "device/arch_params.hpp"
#include "device/device_contract.h"
#include "support/yaml.hpp"

#include <algorithm>
#include <utility>

namespace tessera::pipegen::detail {

// ---------------------------------------------------------------------------
// Phases per stream.
// ---------------------------------------------------------------------------
bool samePhase(const blob::StreamPhase& a, const blob::StreamPhase& b) {
  return a.numMsgs == b.numMsgs && a.pipeId == b.pipeId && a.sourceEndpoint == b.sourceEndpoint &&
         a.remoteSource == b.remoteSource && a.dramInput == b.dramInput && a.localReceiver == b.localReceiver &&
         a.remoteReceiver == b.remoteReceiver && a.dramOutput == b.dramOutput && a.src == b.src && a.dest == b.dest &&
         a.dramBufNocAddr == b.dramBufNocAddr && a.srcPeriodTiles == b.srcPeriodTiles &&
         a.srcTileOffset == b.srcTileOffset && a.srcPeriodDone == b.srcPeriodDone &&
         a.srcFreedTiles == b.srcFreedTiles && a.srcChunkOffsets == b.srcChunkOffsets &&
         a.srcChunkTiles == b.srcChunkTiles && a.dramPadding == b.dramPadding &&
         a.paddingValue == b.paddingValue && a.dramRam == b.dramRam &&
         a.incomingDataNoc == b.incomingDataNoc && a.outgoingDataNoc == b.outgoingDataNoc && a.vc == b.vc &&
         a.intermediate == b.intermediate;
}

bool StreamBuilder::emitPhases(Generated& out) {
  size_t errors = diags_.errorCount();
  std::vector<std::vector<blob::StreamPhase>> phases(streams_.size());
  std::vector<std::vector<int>> phaseDram(streams_.size()); // DRAM buffer of each phase, -1 for none (or padding)
  std::vector<uint64_t> iters(streams_.size(), 1);
  for (size_t si = 0; si < streams_.size(); ++si) {
    StreamInfo& s = streams_[si];
    auto& list = phases[si];
    for (size_t ti : s.items) {
      const Transfer& t = transfers_[ti];
      if (t.absorbed) continue;
      const Pipe& p = pipeOfPlan(t.plan);
      blob::StreamPhase ph;
      int dramBuf = -1;
      ph.numMsgs = static_cast<uint32_t>(t.tiles);
      ph.pipeId = p.id;
      // A chain's sender feeds the first relay through that relay's pipe.
      const Pipe& hop = t.relays.empty() ? p : pipeWriting(static_cast<uint32_t>(streams_[static_cast<size_t>(t.relays.front())].buf));
      if (s.role == StreamRole::Relay && t.sender != static_cast<int>(si)) {
        dramBuf = emitRelayPhase(t, si, ph);
      } else if (t.sender == static_cast<int>(si)) {
        ph.pipeId = hop.id;
        if (t.src == Src::Packer) {
          ph.sourceEndpoint = true;
          if (t.periodTiles) ph.srcFreedTiles = static_cast<uint32_t>(t.freed);
        } else {
          ph.dramInput = true;
          const Buffer& d = bufferAt(static_cast<size_t>(t.dramIn));
          const BufInfo& din = info_[static_cast<size_t>(t.dramIn)];
          ph.dramBufNocAddr = dramAddr(d, s.name.chip);
          ph.dramRam = din.ramLike || din.padding;
          dramBuf = t.dramIn;
          if (din.padding) {
            ph.dramPadding = true;
            ph.paddingValue = static_cast<float>(d.paddingValue.value_or(0.0));
          }
        }
        ph.srcPeriodTiles = static_cast<uint32_t>(t.periodTiles);
        ph.srcTileOffset = static_cast<uint32_t>(t.offset);
        ph.srcPeriodDone = t.done;
        for (uint64_t o : t.chunkOffsets) ph.srcChunkOffsets.push_back(static_cast<uint32_t>(o));
        ph.srcChunkTiles = static_cast<uint32_t>(t.chunkTiles);
        if (t.dst == Dst::Local) ph.localReceiver = true;
        else if (t.dst == Dst::Remote) {
          ph.remoteReceiver = true;
          if (!t.relays.empty()) ph.dest.push_back(streams_[static_cast<size_t>(t.relays.front())].name);
          else
            for (int d : t.dest) ph.dest.push_back(streams_[static_cast<size_t>(d)].name);
        } else {
          ph.dramOutput = true;
          const Buffer& d = bufferAt(static_cast<size_t>(t.dramOut));
          ph.dramBufNocAddr = dramAddr(d, s.name.chip);
          ph.dramRam = info_[static_cast<size_t>(t.dramOut)].ramLike;
          dramBuf = t.dramOut;
        }
        ph.outgoingDataNoc = hop.outgoingNocId;
        ph.vc = hop.outgoingVc;
        ph.incomingDataNoc = hop.incomingNocId;
      } else {
        ph.remoteSource = true;
        ph.src.push_back(streams_[static_cast<size_t>(t.relays.empty() ? t.sender : t.relays.back())].name);
        size_t k = 0;
        while (k < t.dest.size() && t.dest[k] != static_cast<int>(si)) ++k;
        const Pipe& rp = k < t.destPlan.size() ? pipeOfPlan(t.destPlan[k]) : p;
        ph.pipeId = rp.id;
        if (k < t.dest.size() && t.destRole[k] == Dst::DramOut) {
          // A writer stream: its own pipe's queue (a fork's shared transfer serves several).
          dramBuf = static_cast<int>(plans_[t.destPlan[k]].groups[0][0]);
          ph.dramOutput = true;
          const Buffer& d = bufferAt(static_cast<size_t>(dramBuf));
          ph.dramBufNocAddr = dramAddr(d, s.name.chip);
          ph.dramRam = info_[static_cast<size_t>(dramBuf)].ramLike;
          ph.outgoingDataNoc = rp.outgoingNocId;
          ph.vc = rp.outgoingVc;
        } else {
          ph.localReceiver = true;
        }
        ph.incomingDataNoc = rp.incomingNocId;
      }
      // Tiles to or from another chip cross this ethernet core's link.
      for (const blob::StreamName& n : ph.dest) ph.ethSender |= n.chip != s.name.chip;
      for (const blob::StreamName& n : ph.src) ph.ethReceiver |= n.chip != s.name.chip;
      list.push_back(std::move(ph));
      phaseDram[si].push_back(dramBuf);
    }
    if (s.role == StreamRole::Operand && list.empty()) {
      const Buffer& b = bufferAt(static_cast<size_t>(s.buf));
      const BufInfo& in = info_[static_cast<size_t>(s.buf)];
      if (!in.isIntermediate && in.readerPlans.empty() && in.writerPipe < 0)
        diags_.warning("unconnected-buffer", locOf(b.pos),
                       bufName(b) + " ('" + b.mdOpName + "'): no pipe " + (in.isPacker ? "reads" : "feeds") +
                           " this operand buffer");
      blob::StreamPhase ph;
      ph.intermediate = true;
      ph.sourceEndpoint = true;
      ph.localReceiver = true;
      ph.numMsgs = b.epochTiles;
      if (b.bufferTypeText == "gradient_op" && (b.dramBufFlag || b.writeDramBufFlag)) {
        ph.numMsgs = b.sizeTiles; // the whole block is loaded and stored
        ph.dramBufNocAddr = dramAddr(b);
        ph.dramRam = true;
      }
      list.push_back(std::move(ph));
    }
    // Whole-list repeats: the shortest period of the list.
    size_t L = list.size();
    size_t best = L;
    for (size_t k = 1; k < L; ++k) {
      if (L % k) continue;
      bool periodic = true;
      for (size_t i = k; i < L && periodic; ++i) periodic = samePhase(list[i], list[i - k]);
      if (periodic) {
        best = k;
        break;
      }
    }
    iters[si] = satMul(L / std::max<size_t>(best, 1),
                       s.component >= 0 ? componentMultiplier_[static_cast<size_t>(s.component)] : 1);
    list.resize(best);
    phaseDram[si].resize(std::min(phaseDram[si].size(), best));
    if (iters[si] > 0xFFFFFFFFull) {
      diags_.error("phase-limit", s.loc, "stream " + std::to_string(s.name.streamId) + " on core " + coreText(s.r, s.c) +
                                             " repeats its phases " + std::to_string(iters[si]) +
                                             " times, more than num_iters_in_epoch can hold");
    }
  }
  if (diags_.errorCount() != errors) return false;
  // Extra streams: ring sizes from their phases.
  for (size_t si = 0; si < streams_.size(); ++si) {
    StreamInfo& s = streams_[si];
    if (s.role == StreamRole::Operand || s.role == StreamRole::Fork || s.role == StreamRole::Relay) continue;
    uint64_t most = 1;
    for (const auto& ph : phases[si]) most = std::max<uint64_t>(most, ph.numMsgs);
    s.ringTiles = std::min<uint64_t>(most, std::max<uint32_t>(1, opts_.extraStreamRingTiles));
  }
  if (!allocateL1(out)) return false;
  // Assemble, with the DRAM side of every stream.
  std::map<blob::StreamName, size_t> order;
  for (size_t si = 0; si < streams_.size(); ++si) order[streams_[si].name] = si;
  for (auto& [name, si] : order) {
    StreamInfo& s = streams_[si];
    blob::Stream stream;
    stream.name = name;
    std::vector<int> dramBufs; // first-use order
    for (size_t k = 0; k < phases[si].size(); ++k) {
      blob::StreamPhase& ph = phases[si][k];
      ph.phaseId = k;
      ph.msgSize = s.msgSize;
      ph.bufAddr = s.bufAddr;
      ph.bufSize = s.bufSize;
      ph.numItersInEpoch = static_cast<uint32_t>(iters[si]);
      ph.bufId = s.buf >= 0 ? bufferAt(static_cast<size_t>(s.buf)).uniqid : 0;
      ph.dataFormat = s.dataFormat;
      // Untilized data: the packer's operand (row stride) and the DRAM writes
      // (row placement) need the block and tensor shape; messages in between
      // are plain bytes.
      const Buffer* u = nullptr;
      if (ph.sourceEndpoint && s.buf >= 0 && bufferAt(static_cast<size_t>(s.buf)).untilizedOutput) u = &bufferAt(static_cast<size_t>(s.buf));
      if (ph.dramOutput && k < phaseDram[si].size() && phaseDram[si][k] >= 0 &&
          bufferAt(static_cast<size_t>(phaseDram[si][k])).untilizedOutput)
        u = &bufferAt(static_cast<size_t>(phaseDram[si][k]));
      if (u) {
        ph.untilizeRDim = u->untilizedOutputRDim;
        ph.untilizeCDim = u->untilizedOutputCDim;
        ph.untilizeFullRDim = u->untilizedOutputFullRDim;
        ph.untilizeFullCDim = u->untilizedOutputFullCDim;
        ph.untilizeZDim = std::max<uint32_t>(1, u->untilizedOutputZDim);
        // BUDA's untilized_output_tile_dim_r/c (tile_dim; absent: 32x32).
        for (const pipe::ExtraField& e : u->extra) {
          const auto v = parseUInt64(e.value);
          if (!v || *v == 0 || *v > 32) continue;
          if (e.key == "untilized_output_tile_dim_r") ph.untilizeTileR = static_cast<uint32_t>(*v);
          if (e.key == "untilized_output_tile_dim_c") ph.untilizeTileC = static_cast<uint32_t>(*v);
        }
      }
    }
    // DRAM buffers this stream touches, in first-use order.
    std::vector<size_t> phaseBuf(phases[si].size(), SIZE_MAX);
    for (size_t k = 0; k < phaseDram[si].size(); ++k) {
      int buf = phaseDram[si][k];
      if (buf < 0) continue;
      phaseBuf[k] = static_cast<size_t>(buf);
      if (std::find(dramBufs.begin(), dramBufs.end(), buf) == dramBufs.end()) dramBufs.push_back(buf);
    }
    for (size_t idx = 0; idx < dramBufs.size(); ++idx) {
      const Buffer& d = bufferAt(static_cast<size_t>(dramBufs[idx]));
      const BufInfo& in = info_[static_cast<size_t>(dramBufs[idx])];
      blob::DramIo io;
      io.name = name;
      io.index = static_cast<uint32_t>(idx);
      io.dramBufNocAddr = dramAddr(d, name.chip);
      io.dramBufSizeQSlots = in.padding ? 1 : std::max<uint32_t>(1, d.qSlots);
      io.dramBufSizeTiles = in.padding ? 1 : static_cast<uint32_t>(in.period);
      uint64_t bytes = satMul(satMul(io.dramBufSizeQSlots, in.period), d.tileSize);
      io.dramBufSizeBytes = static_cast<uint32_t>(std::min<uint64_t>(bytes, 0xFFFFFFFFull));
      io.ram = d.dramRamFlag || in.padding;
      io.msgSize = d.tileSize;
      if (in.padding) io.extra.push_back({"dram_padding", "true"});
      uint64_t g = 0, total = 0;
      for (size_t k = 0; k < phases[si].size(); ++k)
        if (phaseBuf[k] == static_cast<size_t>(dramBufs[idx])) {
          // A transfer is contiguous in DRAM only within one chunk of a chunk list.
          const blob::StreamPhase& ph = phases[si][k];
          g = gcd64(g, ph.srcChunkOffsets.empty() ? ph.numMsgs : ph.srcChunkTiles);
          total = satAdd(total, phases[si][k].numMsgs);
          io.input |= phases[si][k].dramInput;
          io.output |= phases[si][k].dramOutput;
        }
      total = satMul(total, iters[si]);
      io.numMsgs = static_cast<uint32_t>(std::min<uint64_t>(total, 0xFFFFFFFFull));
      uint64_t ring = std::max<uint64_t>(1, s.ringTiles);
      uint64_t chunk = g == 0 ? 1 : g;
      if (chunk > ring) {
        uint64_t best = 1;
        for (uint64_t f = 1; f * f <= chunk; ++f)
          if (chunk % f == 0) {
            if (f <= ring) best = std::max(best, f);
            if (chunk / f <= ring) best = std::max(best, chunk / f);
          }
        chunk = best;
      }
      io.chunkTiles = static_cast<uint32_t>(chunk);
      const auto& readers = dramReaders_[static_cast<size_t>(dramBufs[idx])];
      auto it = std::find(readers.begin(), readers.end(), static_cast<int>(si));
      if (io.input && it != readers.end()) {
        io.readerIndex = static_cast<uint32_t>(it - readers.begin());
        io.totalReaders = static_cast<uint32_t>(readers.size());
      }
      for (size_t k = 0; k < phases[si].size(); ++k)
        if (phaseBuf[k] == static_cast<size_t>(dramBufs[idx])) {
          blob::StreamPhase& ph = phases[si][k];
          ph.dramBufSizeQSlots = io.dramBufSizeQSlots;
          ph.dramBufSizeTiles = io.dramBufSizeTiles;
          ph.dramChunkTiles = io.chunkTiles;
          ph.dramReaderIndex = io.readerIndex;
          ph.dramTotalReaders = io.totalReaders;
        }
      out.blob.dramBlob.push_back(std::move(io));
    }
    // A gradient accumulator's ram cell: loaded before, stored after the epoch.
    if (s.role == StreamRole::Operand && phases[si].size() == 1 && phases[si][0].intermediate &&
        phases[si][0].dramBufNocAddr != 0) {
      const Buffer& b = bufferAt(static_cast<size_t>(s.buf));
      blob::DramIo io;
      io.name = name;
      io.dramBufNocAddr = phases[si][0].dramBufNocAddr;
      io.dramBufSizeQSlots = std::max<uint32_t>(1, b.qSlots);
      io.dramBufSizeTiles = b.sizeTiles;
      io.dramBufSizeBytes =
          static_cast<uint32_t>(std::min<uint64_t>(satMul(satMul(io.dramBufSizeQSlots, b.sizeTiles), b.tileSize),
                                                   0xFFFFFFFFull));
      io.chunkTiles = b.sizeTiles;
      io.input = io.output = io.ram = true;
      io.msgSize = b.tileSize;
      io.numMsgs = b.sizeTiles;
      phases[si][0].dramBufSizeQSlots = io.dramBufSizeQSlots;
      phases[si][0].dramBufSizeTiles = io.dramBufSizeTiles;
      phases[si][0].dramChunkTiles = io.chunkTiles;
      out.blob.dramBlob.push_back(std::move(io));
    }
    stream.phases = std::move(phases[si]);
    out.comments[name] = s.comment;
    out.blob.streams.push_back(std::move(stream));
  }
  return true;
}

// ---------------------------------------------------------------------------
// L1: every ring, from the top of L1 down to kDataBufferBase.
// ---------------------------------------------------------------------------
bool StreamBuilder::allocateL1(Generated& out) {
  size_t errors = diags_.errorCount();
  const uint64_t workerTop = soc_.workerL1Size ? soc_.workerL1Size : archParams(soc_.arch).defaultWorkerL1Size;
  std::map<CoreKey, std::vector<size_t>> byCore;
  for (size_t si = 0; si < streams_.size(); ++si)
    if (streams_[si].role != StreamRole::Fork)  // fork streams use their packer's buffer
      byCore[{streams_[si].name.chip, streams_[si].r, streams_[si].c, streams_[si].eth}].push_back(si);
  for (auto& [core, list] : byCore) {
    // Ethernet cores: their own L1 size and data region (device_contract.h).
    const uint64_t top = core.eth ? soc_.ethL1Size : workerTop;
    const uint64_t base = core.eth ? contract::kEthDataBufferBase : contract::kDataBufferBase;
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      const StreamInfo &x = streams_[a], &y = streams_[b];
      bool xo = x.role == StreamRole::Operand, yo = y.role == StreamRole::Operand;
      if (xo != yo) return xo;
      return x.name.streamId < y.name.streamId;
    });
    uint64_t addr = top;
    uint64_t need = 0;
    int failed = -1;
    for (size_t si : list) {
      StreamInfo& s = streams_[si];
      uint64_t bytes = satMul(s.ringTiles, s.msgSize);
      need = satAdd(need, bytes);
      if (failed >= 0) continue;
      if (bytes > addr || ((addr - bytes) & ~uint64_t{31}) < base) {
        failed = static_cast<int>(si);
        continue;
      }
      addr = (addr - bytes) & ~uint64_t{31};
      s.bufAddr = static_cast<uint32_t>(addr);
      s.bufSize = static_cast<uint32_t>(bytes);
    }
    if (failed >= 0) {
      const StreamInfo& f = streams_[static_cast<size_t>(failed)];
      char range[64];
      std::snprintf(range, sizeof range, "0x%llx-0x%llx", static_cast<unsigned long long>(base),
                    static_cast<unsigned long long>(top));
      const std::string where = core.eth ? "chip " + std::to_string(core.chip) + " ethernet core (channel " +
                                               std::to_string(f.ethChan) + ", NOC y " + std::to_string(core.r) +
                                               ", x " + std::to_string(core.c) + ")"
                                         : "core " + coreText(core.r, core.c);
      auto d = diags_.error("out-of-l1", f.loc,
                            where + " is out of L1: its buffers need " + std::to_string(need) + " bytes, " +
                                std::to_string(top > base ? top - base : 0) + " are available (" + range + "); " +
                                f.what + " does not fit");
      for (size_t si : list) {
        const StreamInfo& s = streams_[si];
        d.note(s.loc, s.what + ": " + std::to_string(satMul(s.ringTiles, s.msgSize)) + " bytes (" +
                          std::to_string(s.ringTiles) + " tiles of " + std::to_string(s.msgSize) + ")");
      }
      continue;
    }
    for (size_t si : list) {
      const StreamInfo& s = streams_[si];
      out.l1.push_back({s.name, s.bufAddr, s.bufSize, s.what});
    }
  }
  for (StreamInfo& s : streams_)
    if (s.role == StreamRole::Fork) {
      const StreamInfo& owner = streams_[static_cast<size_t>(info_[static_cast<size_t>(s.buf)].stream)];
      s.bufAddr = owner.bufAddr;
      s.bufSize = owner.bufSize;
      s.ringTiles = owner.ringTiles;
    }
  return diags_.errorCount() == errors;
}

} // namespace tessera::pipegen::detail
