#include "sim/noc.hpp"

#include <algorithm>

namespace tessera::sim {

DataMovementModel DataMovementModel::forArch(Arch arch) {
  DataMovementModel m;
  switch (arch) {
  case Arch::Grayskull:
    m.dram.bytesPerCycle = 12;  // ~118 GB/s over 8 channels at 1.2 GHz
    break;
  default:
    m.dram.bytesPerCycle = 32;  // GDDR6: ~256-288 GB/s over 6 channels at 1 GHz, rounded down
    break;
  }
  return m;
}

namespace {
uint32_t forward(int from, int to, int size) {
  if (size <= 0) return 0;
  int d = (to - from) % size;
  if (d < 0) d += size;
  return static_cast<uint32_t>(d);
}
}  // namespace

uint32_t nocHops(uint32_t noc, CoreCoord from, CoreCoord to, int gridX, int gridY) {
  if (noc == 0) return forward(from.x, to.x, gridX) + forward(from.y, to.y, gridY);
  return forward(to.x, from.x, gridX) + forward(to.y, from.y, gridY);
}

uint64_t nocSerializationCycles(const NocParams& p, uint64_t bytes) {
  const uint64_t bw = std::max<uint32_t>(1, p.bytesPerCycle);
  return p.headerCycles + (bytes + bw - 1) / bw;
}

uint64_t nocLatencyCycles(const NocParams& p, uint32_t hops) { return p.baseLatency + uint64_t{p.hopCycles} * hops; }

uint64_t dramTransferCycles(const DramParams& p, uint64_t bytes) {
  const uint64_t bw = std::max<uint32_t>(1, p.bytesPerCycle);
  return (bytes + bw - 1) / bw;
}

uint64_t pcieTransferCycles(const PcieParams& p, uint64_t bytes) {
  const uint64_t bw = std::max<uint32_t>(1, p.bytesPerCycle);
  return (bytes + bw - 1) / bw;
}

}  // namespace tessera::sim
