// Chips without ethernet (grayskull) talk through the host: each reaches
// host memory and the other chips over its own PCIe (docs/cluster.md,
// "Through the host"). What net2pipe plans for a queue written from another
// chip there. Internal to lib/pipe.
#pragma once
#include "pipe/builder_internal.hpp"


namespace tessera::pipe::build {

enum class PcieWrite {
  None,        // the device has ethernet: relay chains (relays.hpp) carry the tiles
  HostMemory,  // a `loc: host` queue: the writer's own PCIe core reaches host memory
  PeerDram,    // a DRAM queue of another chip: written through the writer's PCIe core (mmio_pipe)
};

// How op tiles on one chip reach queue `q` on another chip.
PcieWrite pcieQueueWrite(const Shared& sh, const netlist::Queue& q);

// Whether a consumer on `chip` reads every tile of `lists` from other chips
// through its own PCIe core: true when the device has no ethernet and every
// such source is a queue buffer (host memory, or another chip's DRAM). False:
// relay chains apply (ethernet), or an op's buffer on another chip, which
// reaches it through a chain of two PCIe relays (relays.hpp).
bool pcieReads(const Shared& sh, const std::vector<Buf>& bufs, const std::vector<std::vector<SourceTile>>& lists,
               uint32_t chip);

// Whether a pipe reads or writes another chip's DRAM through the PCIe core
// of its cores' chip, or joins two PCIe relays of different chips
// (pipegen.yaml `mmio_pipe: 1`).
bool isMmioPipe(const std::vector<Buf>& bufs, const PendingPipe& p);

} // namespace tessera::pipe::build
