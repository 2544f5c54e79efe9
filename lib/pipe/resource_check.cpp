// net2pipe's epoch builder: the resource checks per core (streams, multicast
// streams, DRAM readers and writers, L1) (epoch_builder.hpp).
#include "pipe/epoch_builder.hpp"

#include "device/device_contract.h"
#include "netlist/text.hpp"

#include <algorithm>
#include <cstdio>

namespace tessera::pipe::build {

using namespace netlist;

void EpochBuilder::checkResources() {
  const Limits& lim = sh_.out.limits;
  std::map<uint64_t, CoreUse> cores;
  for (size_t h = 0; h < bufs_.size(); ++h) {
    const Buf& b = bufs_[h];
    if (b.place != Buf::Place::Core) continue;
    CoreUse& u = cores[coreKey(static_cast<uint32_t>(h))];
    u.op = b.op;
    u.buffer = static_cast<int64_t>(h);
    u.l1 += uint64_t{b.doc.sizeTiles} * b.doc.tileSize;
    u.buffers.push_back(static_cast<uint32_t>(h));
  }
  // Forks: a packer read by k pipes sends on k streams.
  std::map<uint32_t, uint32_t> packerReaders;
  for (const PendingPipe& p : pending_) {
    std::set<uint32_t> srcs;
    for (const SourceTile& t : p.tiles) srcs.insert(t.source);
    for (uint32_t h : srcs) // (a relay has one stream, whatever its readers: pipegen's relay chains)
      if (bufs_[h].packer && !chains_.onEthernet(h)) ++packerReaders[h];
    bool single = false;
    const uint32_t host = sendingCore(p, &single);
    const bool dramIn = std::any_of(srcs.begin(), srcs.end(), [&](uint32_t h) { return bufs_[h].place == Buf::Place::Dram; });
    CoreUse& hu = cores[coreKey(host)];
    if (hu.buffer < 0) hu.buffer = host;
    if (p.multicast()) { // a time-multiplexed pipe is one stream
      ++hu.mcast;
      if (!single) ++hu.relayStreams;
    }
    if (dramIn) ++hu.dramIn;
    if (p.toDram) ++hu.dramOut;
  }
  for (const auto& [h, n] : packerReaders)
    if (n > 1) cores[coreKey(h)].forkStreams += n - 1;
  for (const auto& [key, bytes] : relayBytes_) {
    cores[key].l1 += bytes;
    cores[key].relayBytes += bytes;
  }

  for (const auto& [key, u] : cores) {
    if (u.buffer < 0) continue; // (every core has one)
    const uint32_t rep = static_cast<uint32_t>(u.buffer);
    const Op* op = u.op;
    const SourceLoc loc = op ? op->loc : graph_.loc;
    const bool eth = ethKey(key);
    const uint64_t l1 = l1Limit(key);
    const std::string who = (eth || multiChip() ? where(rep) : "core " + coreText(bufs_[rep].doc.core)) +
                            (op ? (eth ? " (relays for op " : " (op ") + quote(op->name) + ")" : "");
    if (u.l1 > l1) {
      std::vector<std::string> notes;
      for (uint32_t h : u.buffers) {
        const Buffer& d = bufs_[h].doc;
        notes.push_back("buffer_" + std::to_string(d.uniqid) + " (" + bufferRole(d) + "): " + std::to_string(d.sizeTiles) +
                        " tiles x " + std::to_string(d.tileSize) + " bytes = " +
                        std::to_string(uint64_t{d.sizeTiles} * d.tileSize) + " bytes");
      }
      if (u.relayBytes)
        notes.push_back("pipegen's relay and DRAM-writer streams hosted here: " + std::to_string(u.relayBytes) +
                        " bytes (" + std::to_string(kExtraStreamRingTiles) + " tiles each)");
      notes.push_back("every buffer is at the smallest size its kernel and readers need");
      fail("pipe-l1-overflow", loc,
           who + ": buffers need " + std::to_string(u.l1) + " bytes of L1 but " + std::to_string(l1) +
               " bytes are free for data (L1 from 0x" + hexText(eth ? kEthDataBufferBase : contract::kDataBufferBase) +
               " to its end" + (eth ? ", eth_l1_size " + std::to_string(sh_.target.device->ethL1Size) : "") + ")",
           notes);
    }
    const uint32_t streams = static_cast<uint32_t>(u.buffers.size()) + u.forkStreams + u.relayStreams;
    const uint32_t streamLimit = eth ? contract::kEthStreamsPerCore : lim.streamsPerCore; // pipegen's
    if (streams > streamLimit)
      fail("pipe-streams", loc,
           who + ": needs " + std::to_string(streams) + " streams, a" + (eth ? "n ethernet" : "") + " core has " +
               std::to_string(streamLimit),
           {std::to_string(u.buffers.size()) + " operand buffers, " + std::to_string(u.forkStreams) + " fork streams, " +
            std::to_string(u.relayStreams) + " multicast relay streams"});
    if (u.mcast > lim.mcastStreamsPerCore)
      fail("pipe-mcast-streams", loc,
           who + ": sends " + std::to_string(u.mcast) + " multicasts, a core has " +
               std::to_string(lim.mcastStreamsPerCore) + " multicast streams",
           {"only multicasts of the same tiles from the core's packer to ops that do not wait for each other can "
            "share a stream (a time-multiplexed pipe); these carry different tiles, come from DRAM or a gather, or "
            "feed dependent ops"});
    if (u.dramIn > lim.dramInputStreamsPerCore)
      fail("pipe-dram-streams", loc,
           who + ": reads DRAM for " + std::to_string(u.dramIn) + " pipes, a core has " +
               std::to_string(lim.dramInputStreamsPerCore) + " DRAM input streams");
    if (u.dramOut > lim.dramOutputStreamsPerCore)
      fail("pipe-dram-streams", loc,
           who + ": writes DRAM for " + std::to_string(u.dramOut) + " pipes, a core has " +
               std::to_string(lim.dramOutputStreamsPerCore) + " DRAM output streams");
  }
  for (const auto& [h, readers] : dramReaders_) {
    if (readers.size() <= lim.dramReadersPerBuffer) continue;
    const Buf& b = bufs_[h];
    std::set<std::string> ops;
    for (size_t pi : readers) ops.insert(pending_[pi].op->name);
    std::string list;
    for (const auto& o : ops) list += (list.empty() ? "" : ", ") + quote(o);
    const QueueBufferInfo& info = sh_.out.queueBuffers[b.queueBuffer];
    fail("pipe-dram-readers", b.queue->loc,
         "queue " + quote(b.queue->name) + " buffer " + cellText(info.cellR, info.cellC) + " is read by " +
             std::to_string(readers.size()) + " pipes, at most " + std::to_string(lim.dramReadersPerBuffer) +
             " may read one DRAM buffer",
         {"read by op" + std::string(ops.size() > 1 ? "s " : " ") + list});
  }
}

std::string EpochBuilder::hexText(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llX", static_cast<unsigned long long>(v));
  return buf;
}

std::string EpochBuilder::bufferRole(const Buffer& d) {
  if (d.bufferType == BufferType::Unpacker) return "input " + std::to_string(d.id);
  if (d.bufferType == BufferType::Packer) return "output";
  if (d.bufferTypeText == "gradient_op") return "gradient accumulation";
  if (d.bufferType == BufferType::Relay) return "relay of " + d.mdOpName;
  if (d.bufferType == BufferType::Ethernet) return "ethernet_datacopy output";
  return "intermediate " + std::to_string(d.id);
}

} // namespace tessera::pipe::build
