// SoC descriptors: the BUDA backend's YAML description of a chip (NOC grid,
// which core sits where, memory sizes). Every later stage asks this model
// where workers, DRAM channels and ethernet cores are.
#pragma once
#include "device/arch.hpp"
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// A NOC coordinate as written in descriptors (`x-y`).
struct CoreCoord {
  int x = 0;
  int y = 0;
  friend bool operator==(const CoreCoord&, const CoreCoord&) = default;
  friend auto operator<=>(const CoreCoord&, const CoreCoord&) = default; // orders by x, then y
};

// `x-y`, the descriptor spelling.
std::string toString(CoreCoord c);

// Optional `features:` section. Unknown feature keys are ignored: upstream adds
// them over time and none changes the meaning of the fields below.
struct SocFeatures {
  int unpackerVersion = 0;                 // features.unpacker.version (0 = absent)
  bool inlineSrcaTransWithoutInstr = false; // features.unpacker.inline_srca_trans_without_srca_trans_instr
  uint64_t dstSizeAlignment = 0;           // features.math.dst_size_alignment (bytes)
  int packerVersion = 0;                   // features.packer.version
  int overlayVersion = 0;                  // features.overlay.version
  bool nocTranslationIdEnabled = false;    // features.noc.translation_id_enabled
};

struct SocDescriptor {
  std::string name; // file stem, e.g. `grayskull_10x12`
  Arch arch = Arch::Grayskull;

  // NOC grid (`grid:`): the coordinate space every core coordinate of the file
  // lives in. For plain descriptors this is the physical grid. Harvested
  // descriptors with translated worker coordinates (e.g. wormhole_b0_8x10_harvested)
  // use a 32x32 translated space here and give the real grid in `physical:`.
  int gridX = 0;
  int gridY = 0;
  int physicalGridX = 0; // `physical:` when present, else equal to gridX/gridY
  int physicalGridY = 0;

  std::vector<CoreCoord> workers;          // functional_workers, in file order
  std::vector<CoreCoord> harvestedWorkers; // harvested_workers, in file order
  std::vector<CoreCoord> dramCores;        // every dram subchannel core, channel by channel
  std::vector<CoreCoord> ethCores;
  std::vector<CoreCoord> routerOnly;
  std::vector<CoreCoord> arc;
  std::vector<CoreCoord> pcie;
  // One entry per DRAM channel, each with its subchannel cores in file order
  // (a channel written as a single `x-y` has one subchannel).
  std::vector<std::vector<CoreCoord>> dramChannels;

  // Logical worker grid: row r is the r-th smallest distinct worker y, column c
  // the c-th smallest distinct worker x. The parser guarantees the workers fill
  // this grid completely, so every (row, col) names a functional worker.
  int workerRows = 0;
  int workerCols = 0;
  std::vector<int> workerRowY; // size workerRows, ascending
  std::vector<int> workerColX; // size workerCols, ascending

  uint64_t workerL1Size = 0; // bytes
  uint64_t dramBankSize = 0; // bytes per DRAM channel
  uint64_t ethL1Size = 0;    // bytes (0 on grayskull: no ethernet)

  SocFeatures features;

  // Logical worker (row, col) -> NOC coordinate. Out of range gives {-1, -1}.
  CoreCoord workerCore(int row, int col) const;
  // NOC coordinate -> logical worker; nullopt when `c` is not a functional worker.
  struct Logical {
    int row = 0;
    int col = 0;
    friend bool operator==(const Logical&, const Logical&) = default;
  };
  std::optional<Logical> workerLogical(CoreCoord c) const;
  bool isWorker(CoreCoord c) const { return workerLogical(c).has_value(); }

  int workerCount() const { return static_cast<int>(workers.size()); }
  int dramChannelCount() const { return static_cast<int>(dramChannels.size()); }
  // Subchannel `sub` of DRAM `channel`; {-1, -1} when out of range.
  CoreCoord dramCore(int channel, int sub = 0) const;
};

// Parses a SoC descriptor. Malformed input is reported to `diag` with rule id
// `soc-descriptor` and a source position, and gives nullopt; never throws.
// `name` is set to the stem of `source.name()`.
std::optional<SocDescriptor> parseSocDescriptor(const SourceBuffer& source, DiagnosticEngine& diag);

// ---- Descriptors bundled into the library (lib/device/descriptors/) ----

// File stems of every bundled descriptor, sorted.
std::vector<std::string> bundledDescriptorNames();
// The YAML text of a bundled descriptor (`name` = file stem); nullopt if unknown.
std::optional<std::string_view> bundledDescriptorText(std::string_view name);
// The bundled descriptor used when only an arch is given (`--arch`).
std::string_view defaultDescriptorName(Arch arch);
// Parses a bundled descriptor; nullopt when `name` is not bundled.
std::optional<SocDescriptor> findBundledDescriptor(std::string_view name);
// Parses a bundled descriptor known to exist (e.g. from defaultDescriptorName);
// bundled files are known good. For an unknown name this returns an empty
// descriptor (no workers): use findBundledDescriptor for user-supplied names.
SocDescriptor loadBundledDescriptor(std::string_view name);

} // namespace tessera
