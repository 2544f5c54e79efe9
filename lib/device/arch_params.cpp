#include "device/arch_params.hpp"

namespace tessera {

namespace {

// 1 MiB L1 on grayskull; 1464 KiB (1499136 bytes) on wormhole, wormhole_b0 and
// blackhole, as their descriptors' worker_l1_size say.
constexpr uint64_t kGrayskullL1 = 1024 * 1024;
constexpr uint64_t kWormholeL1 = 1464 * 1024;

// Every arch has 64 overlay streams per core; we use that count uniformly so
// pipegen's resource checks do not depend on per-arch stream reservations.
constexpr ArchParams kGrayskull{Arch::Grayskull, 16, 2, 64, kGrayskullL1, false, false};
// Wormhole (A0) has a dest register four times the size of the others'.
constexpr ArchParams kWormhole{Arch::Wormhole, 64, 2, 64, kWormholeL1, true, true};
constexpr ArchParams kWormholeB0{Arch::WormholeB0, 16, 2, 64, kWormholeL1, true, true};
constexpr ArchParams kBlackhole{Arch::Blackhole, 16, 2, 64, kWormholeL1, true, true};

} // namespace

const ArchParams& archParams(Arch arch) {
  switch (arch) {
  case Arch::Grayskull: return kGrayskull;
  case Arch::Wormhole: return kWormhole;
  case Arch::WormholeB0: return kWormholeB0;
  case Arch::Blackhole: return kBlackhole;
  }
  return kGrayskull; // unreachable for valid enumerators
}

int destTiles(Arch arch, bool fp32Accumulate) {
  int tiles = archParams(arch).destTiles16bit;
  return fp32Accumulate ? tiles / 2 : tiles;
}

int maxUblockTiles(Arch arch, bool fp32Accumulate) { return destTiles(arch, fp32Accumulate) / 2; }

} // namespace tessera
