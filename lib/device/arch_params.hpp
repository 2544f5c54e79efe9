// Per-architecture constants that are not in the SoC descriptor but that the
// validator, the code generators and the simulator all need to agree on.
#pragma once
#include "device/arch.hpp"

#include <cstdint>

namespace tessera {

struct ArchParams {
  Arch arch;
  // Dest register capacity in 32x32 tiles with 16-bit accumulation. Float32
  // accumulation stores each datum in two halves, so capacity halves.
  int destTiles16bit;
  // Independent NOCs per chip; bounds e.g. the multicasts a fused op may use.
  int nocCount;
  // Overlay streams per core available to pipegen.
  int maxStreamsPerCore;
  // Worker L1 size in bytes when no descriptor overrides it (descriptors carry
  // worker_l1_size; this matches every bundled descriptor of the arch).
  uint64_t defaultWorkerL1Size;
  // Int8/Int32 data formats (and the integer FPU path). Grayskull has none.
  bool supportsIntFormats;
  // Whether a fused sub-op may read dest as its input 1 (source B). Grayskull
  // cannot move dest into source B (fused-op constraint 3 in net2hlks).
  bool destAsFusedInput1;
};

const ArchParams& archParams(Arch arch);

// Dest capacity in tiles for the given accumulation width: 16 for 16-bit,
// 8 for Float32 accumulation.
int destTiles(Arch arch, bool fp32Accumulate);

// Largest ublock (in tiles) an op may use: dest is double-buffered between
// math and pack, so a ublock gets half of it — 8 tiles with 16-bit
// accumulation, 4 with Float32 accumulation.
int maxUblockTiles(Arch arch, bool fp32Accumulate);

} // namespace tessera
