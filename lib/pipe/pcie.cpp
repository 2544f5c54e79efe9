// Queue writes across chips without ethernet (pcie.hpp). BUDA's grayskull
// path is an "MMIO pipe" (pipegen.yaml `mmio_pipe: 1`): the writer's streams
// go through their chip's PCIe core to the other chip (tt-budabackend
// pipegen2: PCIe streaming nodes, UnicastToPCIe pipes), which Tessera keeps
// for DRAM queues and for the hop of a chain of PCIe relays (an op read on
// another chip); host memory needs no second chip at all.
#include "pipe/pcie.hpp"

#include <set>

namespace tessera::pipe::build {

PcieWrite pcieQueueWrite(const Shared& sh, const netlist::Queue& q) {
  if (!sh.target.device->ethCores.empty()) return PcieWrite::None;
  // Every grayskull chip is an MMIO chip (docs/cluster.md, default topologies).
  return q.location.value == netlist::IoLocation::Host ? PcieWrite::HostMemory : PcieWrite::PeerDram;
}

bool pcieReads(const Shared& sh, const std::vector<Buf>& bufs, const std::vector<std::vector<SourceTile>>& lists,
               uint32_t chip) {
  if (!sh.target.device->ethCores.empty()) return false;
  for (const auto& list : lists)
    for (const SourceTile& t : list) {
      const Buf& b = bufs[t.source];
      if (b.place == Buf::Place::Core && b.doc.chipId != chip) return false;
    }
  return true;
}

bool isMmioPipe(const std::vector<Buf>& bufs, const PendingPipe& p) {
  std::set<uint32_t> cores, dram;
  auto add = [&](uint32_t h) {
    const Buf& b = bufs[h];
    if (b.place == Buf::Place::Core) cores.insert(b.doc.chipId);
    else if (b.place == Buf::Place::Dram && !b.doc.dramIoFlagIsRemote) dram.insert(b.doc.chipId);
  };
  for (const SourceTile& t : p.tiles) add(t.source);
  for (uint32_t h : p.allOutputs()) add(h);
  // The hop of a chain through the host: relay to relay.
  if (cores.size() == 2 && !p.tiles.empty() && bufs[p.tiles.front().source].doc.pcieRelay) return true;
  if (cores.size() != 1) return false;
  for (uint32_t c : dram)
    if (c != *cores.begin()) return true;
  return false;
}

} // namespace tessera::pipe::build
