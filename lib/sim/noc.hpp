// The data-movement cycle model of the simulated chip: two NOCs on the soc
// descriptor's grid (NOC 0 routes +x then +y, NOC 1 -x then -y, both
// wrapping around the grid as a torus, as BUDA's NOCs do), their bytes per
// cycle and per-hop latency, and the DRAM channels' bandwidth and latency.
// The stream engine (stream_engine.hpp) books every tile transfer on these
// resources; docs/device-model.md, "Streams, NOC and DRAM", gives the rules
// and where the numbers come from.
#pragma once
#include "device/arch.hpp"
#include "device/soc_descriptor.hpp"

#include <cstdint>

namespace tessera::sim {

struct NocParams {
  uint32_t bytesPerCycle = 32;  // one flit of 256 bits per cycle per NOC port
  uint32_t hopCycles = 2;       // router + link per hop
  uint32_t baseLatency = 16;    // injection, ejection and L1 write at the receiver
  uint32_t headerCycles = 2;    // per packet (one tile = one packet): header flit and arbitration
};

struct DramParams {
  uint32_t bytesPerCycle = 12;  // per channel
  uint32_t latency = 120;       // cycles from request to first byte (reads), or to commit (writes)
};

// Host memory behind the PCIe core (`loc: host` queues): one link shared by
// every transfer, slower and much further away than a DRAM channel.
struct PcieParams {
  uint32_t bytesPerCycle = 16;  // ~19 GB/s at 1.2 GHz: a Gen4 x16 link's usable rate for device-initiated DMA
  uint32_t latency = 1000;      // ~0.8 us: the round trip through the PCIe core, the root complex and host memory
};

struct DataMovementModel {
  NocParams noc;
  DramParams dram;
  PcieParams pcie;
  // The defaults of an arch (grayskull: 12 B/cycle per DRAM channel,
  // wormhole_b0: 32).
  static DataMovementModel forArch(Arch arch);
};

// Hops a packet takes from `from` to `to` on NOC `noc` (0 or 1) in a
// `gridX` x `gridY` torus: NOC 0 moves in +x then +y, NOC 1 in -x then -y.
uint32_t nocHops(uint32_t noc, CoreCoord from, CoreCoord to, int gridX, int gridY);

// Cycles the sender's NOC port is busy with `bytes` (one packet).
uint64_t nocSerializationCycles(const NocParams& p, uint64_t bytes);
// Cycles from the end of injection to delivery over `hops` hops.
uint64_t nocLatencyCycles(const NocParams& p, uint32_t hops);
// Cycles a DRAM channel is busy with `bytes`.
uint64_t dramTransferCycles(const DramParams& p, uint64_t bytes);
// Cycles the PCIe link is busy with `bytes`.
uint64_t pcieTransferCycles(const PcieParams& p, uint64_t bytes);

}  // namespace tessera::sim
