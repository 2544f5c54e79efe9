// The stream engine's configuration (stream_engine.hpp): one core's streams,
// rings and phases read from the bytes of its overlay blob, every field
// checked against the core's L1 and the device contract.
#include "sim/stream_engine.hpp"

#include "device/device_contract.h"
#include "sim/tensix_core.hpp"
#include "support/text_format.hpp"

#include <algorithm>

#include "sim/stream_engine_state.hpp"

namespace tessera::sim {

using namespace engine_detail;

bool StreamEngine::configure(const blob::CoreBlob& b, StreamFault& fault) {
  CoreSlot* cs = coreAt(b.x, b.y);
  const std::string coreText = std::to_string(b.x) + "-" + std::to_string(b.y);
  if (!cs) {
    fault = {"bad-stream-config", coreText,
             "blob for core " + coreText + " (chip " + std::to_string(b.chip) + ", y " + std::to_string(b.y) + ", x " +
                 std::to_string(b.x) + "): no simulated worker core at that NOC coordinate"};
    return false;
  }
  const std::string cname = cs->core->name();
  const uint64_t l1End = cs->core->l1().size();
  // An ethernet core's buffers start higher (its firmware's area below; device_contract.h).
  const uint32_t dataBase = cs->ethernet ? contract::kEthDataBufferBase : contract::kDataBufferBase;
  auto fail = [&](const std::string& category, const blob::Stream& s, const std::string& what) {
    fault = {category, cname, "core '" + cname + "': stream " + std::to_string(s.name.streamId) + ": " + what};
    return false;
  };
  // Fork streams: a non-operand stream whose source_endpoint phases use the
  // buffer of an operand stream's source_endpoint phases (the packer's
  // buffer) sends from that buffer too, with its own read pointer.
  std::map<uint32_t, int> packerBuffers;  // buf_addr -> output operand
  for (const blob::Stream& bs : b.streams)
    if (isOperandStream(bs.name.streamId) && !cs->ethernet)
      for (const StreamPhase& p : bs.phases)
        if (p.sourceEndpoint && !p.localReceiver && !p.intermediate)
          packerBuffers.emplace(p.bufAddr, static_cast<int>(bs.name.streamId - blob::kOperandStreamBase));
  std::vector<std::unique_ptr<Stream>> added;
  for (const blob::Stream& bs : b.streams) {
    const uint32_t id = bs.name.streamId;
    if (id >= blob::kStreamsPerCore) return fail("bad-stream-config", bs, "stream id out of range (0-63)");
    if (cs->ethernet && id >= contract::kEthStreamsPerCore)
      return fail("bad-stream-config", bs, "an ethernet core has " + std::to_string(contract::kEthStreamsPerCore) + " streams (0-" +
                                               std::to_string(contract::kEthStreamsPerCore - 1) + ")");
    if (bs.name.x != b.x || bs.name.y != b.y)
      return fail("bad-stream-config", bs,
                  "named " + streamNameText(bs.name) + " but found in the blob of core " + coreText);
    if (find(bs.name)) return fail("bad-stream-config", bs, "configured twice");
    for (const auto& a : added)
      if (a->name == bs.name) return fail("bad-stream-config", bs, "appears twice in the blob");
    auto s = std::make_unique<Stream>();
    s->name = bs.name;
    s->core = cs;
    s->phases = bs.phases;
    // An ethernet core runs no kernel: its streams are never operands.
    s->operand = isOperandStream(id) && !cs->ethernet ? static_cast<int>(id - blob::kOperandStreamBase) : -1;
    if (s->operand < 0 && !s->phases.empty()) {
      const auto it = packerBuffers.find(s->phases.front().bufAddr);
      if (it != packerBuffers.end()) {
        bool allSource = true;
        for (const StreamPhase& p : s->phases)
          allSource &= p.sourceEndpoint && p.bufAddr == s->phases.front().bufAddr;
        if (!allSource)
          return fail("bad-stream-config", bs,
                      "a fork stream (sending the buffer of output operand " + std::to_string(it->second) +
                          ") must have only source_endpoint phases on that buffer");
        s->operand = it->second;
        s->fork = true;
      }
    }
    if (s->phases.empty()) s->done = true;
    else s->iters = std::max<uint32_t>(1, s->phases.front().numItersInEpoch);
    bool produces = false, consumes = false, local = false;
    // A packer that releases tiles before the period ends (src_freed_tiles)
    // may use a ring smaller than its period (pipegen --release-windows).
    bool releasesEarly = false;
    for (const StreamPhase& p : s->phases)
      releasesEarly |= p.sourceEndpoint && p.srcPeriodTiles > 0 && !p.srcPeriodDone && p.srcFreedTiles > 0;
    for (size_t i = 0; i < s->phases.size(); ++i) {
      const StreamPhase& p = s->phases[i];
      const std::string ph = "phase " + std::to_string(i) + " (phase_id " + std::to_string(p.phaseId) + "): ";
      const int srcRoles = int{p.sourceEndpoint} + int{p.remoteSource} + int{p.dramInput};
      const int dstRoles = int{p.localReceiver} + int{p.remoteReceiver} + int{p.dramOutput};
      if (srcRoles != 1 || dstRoles != 1)
        return fail("bad-stream-config", bs,
                    ph + "needs exactly one source role (source_endpoint, remote_source, dram_input) and one "
                         "destination role (local_receiver, remote_receiver, dram_output)");
      if ((p.sourceEndpoint || p.localReceiver) && s->operand < 0)
        return fail("bad-stream-config", bs,
                    ph + "source_endpoint and local_receiver need an operand stream (8-39) or, for "
                         "source_endpoint, a fork stream over an output operand's buffer");
      if (p.msgSize == 0) return fail("bad-stream-config", bs, ph + "msg_size is 0");
      if (p.bufSize < p.msgSize || p.bufSize % p.msgSize != 0)
        return fail("bad-stream-config", bs,
                    ph + "buf_size " + std::to_string(p.bufSize) + " is not a positive multiple of msg_size " +
                        std::to_string(p.msgSize));
      if (p.bufAddr < dataBase || uint64_t{p.bufAddr} + p.bufSize > l1End)
        return fail("l1-overflow", bs,
                    ph + "buffer [" + support::hexLiteral(p.bufAddr) + ", " + support::hexLiteral(uint64_t{p.bufAddr} + p.bufSize) +
                        ") is outside the data buffer area of L1 [" + support::hexLiteral(dataBase) + ", " + support::hexLiteral(l1End) +
                        ")");
      if (s->operand >= 0 && i > 0) {
        const StreamPhase& f = s->phases.front();
        if (p.bufAddr != f.bufAddr || p.bufSize != f.bufSize || p.msgSize != f.msgSize)
          return fail("bad-stream-config", bs,
                      ph + "an operand stream keeps one buffer (the kernel's operand table), but this phase moves "
                           "it from " + support::hexLiteral(f.bufAddr) + " to " + support::hexLiteral(p.bufAddr));
      }
      if (p.srcPeriodTiles > 0 && (p.sourceEndpoint || p.dramInput)) {
        if (p.srcChunkOffsets.empty() && uint64_t{p.srcTileOffset} + p.numMsgs > p.srcPeriodTiles)
          return fail("bad-stream-config", bs,
                      ph + "tiles [" + std::to_string(p.srcTileOffset) + ", " +
                          std::to_string(uint64_t{p.srcTileOffset} + p.numMsgs) + ") are not inside a period of " +
                          std::to_string(p.srcPeriodTiles) + " tiles");
        if (!p.srcChunkOffsets.empty() &&
            (p.srcChunkTiles == 0 || uint64_t{p.srcChunkTiles} * p.srcChunkOffsets.size() != p.numMsgs))
          return fail("bad-stream-config", bs,
                      ph + std::to_string(p.srcChunkOffsets.size()) + " chunks of " +
                          std::to_string(p.srcChunkTiles) + " tiles are not its num_msgs " +
                          std::to_string(p.numMsgs));
        for (uint32_t o : p.srcChunkOffsets)
          if (uint64_t{o} + p.srcChunkTiles > p.srcPeriodTiles)
            return fail("bad-stream-config", bs,
                        ph + "chunk [" + std::to_string(o) + ", " + std::to_string(uint64_t{o} + p.srcChunkTiles) +
                            ") of src_chunk_offsets is not inside a period of " + std::to_string(p.srcPeriodTiles) +
                            " tiles");
        if (p.sourceEndpoint && !releasesEarly && p.srcPeriodTiles > p.bufSize / p.msgSize)
          return fail("bad-stream-config", bs,
                      ph + "a period of " + std::to_string(p.srcPeriodTiles) + " tiles does not fit the buffer of " +
                          std::to_string(p.bufSize / p.msgSize) + " tiles");
        if (p.dramInput && p.dramBufSizeTiles && p.srcPeriodTiles > p.dramBufSizeTiles)
          return fail("bad-stream-config", bs,
                      ph + "a period of " + std::to_string(p.srcPeriodTiles) + " tiles is larger than a DRAM slot of " +
                          std::to_string(p.dramBufSizeTiles) + " tiles");
      }
      // An intermediate with a DRAM address is a gradient accumulator
      // (blob_model.hpp): one phase, its ram cell read and written in place.
      const bool gradientCell = p.intermediate && p.dramBufNocAddr != 0;
      if (gradientCell) {
        if (s->operand < 0 || s->fork || s->phases.size() != 1 || !p.dramRam)
          return fail("bad-stream-config", bs,
                      ph + "a gradient accumulator (intermediate with dram_buf_noc_addr) must be the only phase of an "
                           "operand stream, with dram_ram");
        if (p.numMsgs == 0 || p.numMsgs > p.bufSize / p.msgSize || p.numMsgs > p.dramBufSizeTiles)
          return fail("bad-stream-config", bs,
                      ph + "a gradient accumulator of " + std::to_string(p.numMsgs) + " tiles must fit its buffer of " +
                          std::to_string(p.bufSize / p.msgSize) + " tiles and a DRAM slot of " +
                          std::to_string(p.dramBufSizeTiles) + " tiles");
        s->gradient = true;
      }
      if (p.dramInput || p.dramOutput || gradientCell) {
        const std::optional<DramLocation> loc = decodeDramNocAddress(soc_, p.dramBufNocAddr);
        if (!loc)
          return fail("dram-address", bs,
                      ph + "dram_buf_noc_addr " + support::hexLiteral(p.dramBufNocAddr) + " names no DRAM channel or PCIe core of " + soc_.name);
        if (loc->host && !host_)
          return fail("dram-address", bs,
                      ph + "dram_buf_noc_addr " + support::hexLiteral(p.dramBufNocAddr) + " is host memory on the PCIe core " +
                          coordText(loc->core) + ", and this chip has no host memory attached");
        if (loc->host && p.dramPadding)
          return fail("bad-stream-config", bs, ph + "a padding tile (dram_padding) must be in device DRAM, not host memory");
        if (p.dramBufSizeTiles == 0) return fail("bad-stream-config", bs, ph + "dram_buf_size_tiles is 0");
      }
      if (p.dramPadding && !(p.dramInput && p.dramRam))
        return fail("bad-stream-config", bs, ph + "dram_padding needs dram_input and dram_ram (a padding tile is read in place)");
      if (p.untilizeCDim && p.dramOutput) {
        // The slot is the whole tensor row-major: every msg is a tile's worth of datums.
        const uint32_t r = p.untilizeRDim, c = p.untilizeCDim, fr = p.untilizeFullRDim, fc = p.untilizeFullCDim;
        const uint64_t slotMsgs = uint64_t{fr} * fc * p.untilizeZDim;
        const uint32_t tileValues = p.untilizeTileR * p.untilizeTileC;  // tile_dim: 1024 for 32x32
        if (!r || !fr || !fc || !p.untilizeZDim || !tileValues || fr % r || fc % c || p.msgSize % tileValues ||
            slotMsgs != p.dramBufSizeTiles)
          return fail("bad-stream-config", bs,
                      ph + "untilized DRAM write: block " + std::to_string(r) + "x" + std::to_string(c) + " of " +
                          std::to_string(fr) + "x" + std::to_string(fc) + " tiles, " + std::to_string(p.untilizeZDim) +
                          " slices, msg_size " + std::to_string(p.msgSize) + " and a slot of " +
                          std::to_string(p.dramBufSizeTiles) + " msgs do not agree");
      }
      produces |= p.sourceEndpoint;
      consumes |= p.localReceiver;
      local |= p.intermediate;
    }
    if ((produces && consumes) || local) {
      // A kernel-local buffer (e.g. an intermediate): pack pushes and unpack
      // pops through the counters; the stream moves nothing.
      s->done = true;
    } else if (produces && s->operand >= 0) {
      ++cs->producers[s->operand].expected;
    }
    if (eth_ && !configureEthernet(*s, cname, fault)) return false;
    added.push_back(std::move(s));
  }
  for (auto& s : added) {
    byName_[s->name] = s.get();
    streams_.push_back(std::move(s));
  }
  return true;
}

}  // namespace tessera::sim
