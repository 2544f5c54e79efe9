// DRAM reads beyond a core's DRAM input streams go through relay buffers on
// idle cores (docs/net2pipe.md "DRAM reads beyond the core's streams").
// Internal to lib/pipe: the epoch builder (epoch_builder.cpp) calls it after
// splitting multicasts, before sizing buffers and checking resources.
#pragma once
#include "pipe/builder_internal.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace tessera::pipe::build {

struct DramRelayContext {
  Shared& sh;
  std::vector<Buf>& bufs;
  std::vector<PendingPipe>& pending;
  int64_t inputCount = 1;
  uint32_t limit = 8;          // DRAM input streams per core
  uint64_t l1DataBytes = 0;    // a worker core's L1 for data
  // The buffer whose core sends a pending pipe (builder's sendingCore).
  std::function<uint32_t(const PendingPipe&)> sendingCore;
};

// For every worker core hosting more than `limit` pipes that read DRAM (the
// pipe's destination, or its first destination), moves the excess pipes
// whose every tile comes from DRAM (or padding) onto a relay: pipe A reads
// the DRAM tiles into a `relay` buffer on an idle worker core of the same
// chip (one holding no buffer of the epoch), the nearest one with a DRAM
// input stream and L1 to spare; pipe B sends the relay's tiles to the
// original destinations in the original order. The relay holds one period
// of the pipe's tile list (B repeats it); it counts the DRAM read on the
// idle core. The last pipes of the core (pending order) move first.
// Returns the number of pipes relayed; a core with no idle core left keeps
// its excess (the resource check reports it).
size_t relayExcessDramReads(DramRelayContext& ctx);

} // namespace tessera::pipe::build
