// The per-core binaries cache and epoch command queue in DRAM
// (docs/device-model.md, "Binaries cache and epoch commands"):
// - the binaries image format (one core's kernels and overlay blob for one
//   temporal epoch, in one cache slot): encoder and decoder;
// - where every core's command queue and cache live (BinariesLayout: one
//   region at the same offset of every DRAM channel, cores spread over the
//   channels);
// - the command queue's push (host) and pop (firmware) with BUDA's wrapping
//   rd/wr pointers;
// - the host's side (BinariesHost): which temporal epoch occupies each of a
//   core's slots (LRU), an image written to DRAM only when not resident, then
//   the epoch command.
// The firmware's side (pop, read the slot, load L1) is in firmware.hpp.
#pragma once
#include "support/expected.hpp"
#include "blob/blob_binary.hpp"
#include "device/device_contract.h"
#include "device/soc_descriptor.hpp"
#include "elf/elf.hpp"
#include "sim/dram.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tessera::sim {

// ---------------------------------------------------------------------------
// Binaries image: what one slot holds.
// ---------------------------------------------------------------------------
constexpr uint32_t kBinariesHeaderBytes = 32;

struct BinariesImage {
  // Per thread (unpack, math, pack): entry point, e_machine and the PT_LOAD
  // segments (file bytes only; the rest of memSize is zero). Absent: the core
  // runs only streams.
  std::array<std::optional<elf::Image>, contract::kThreadCount> kernels;
  std::vector<blob::HexSegment> blob;  // overlay blob words at absolute L1 word addresses
};

std::vector<uint8_t> encodeBinaries(const BinariesImage& image);
// Checks magic, version, sizes, record bounds and the checksum; never reads
// past `bytes`. On error a failure with a one-line reason.
Expected<BinariesImage> decodeBinaries(std::span<const uint8_t> bytes);

// The three kernels of a kernel directory (unpack.elf, math.elf, pack.elf)
// and a blob .hex file, parsed (what the host does once per file per run).
bool readKernelDir(const std::string& dir, BinariesImage& into, std::string& error);
bool readBlobHexFile(const std::string& path, BinariesImage& into, std::string& error);

// ---------------------------------------------------------------------------
// Where they live. Core i of the descriptor's worker list (file order) uses
// channel i mod C, and is the (i div C)-th core of that channel. In each
// channel the region [base, base + bytes) holds first the command queues of
// its cores (kCommandQueueStride each, in a 64 KiB block), then their caches
// (kBinariesCacheSlots x kBinariesSlotBytes each).
// ---------------------------------------------------------------------------
constexpr uint64_t kCommandQueueStride = 0x800;  // 32-byte header + 32 commands of 32 bytes, rounded up
constexpr uint64_t kCommandQueueBlock = 0x10000;
constexpr uint64_t kBinariesCacheBytes = uint64_t{contract::kBinariesCacheSlots} * contract::kBinariesSlotBytes;
// Channels of at most 1 GiB (grayskull): the region starts here, above
// pipegen's padding tiles (0x600000) and below where the corpus netlists
// place their queues (0x4FB0900 upward); larger channels (wormhole_b0,
// blackhole): the region is the top of the channel.
constexpr uint64_t kSmallChannelRegionBase = 0x1000000;
constexpr uint64_t kSmallChannelBytes = uint64_t{1} << 30;

struct CoreBinariesArea {
  uint32_t channel = 0;
  uint64_t commandQueue = 0;  // the queue's header; commands follow
  uint64_t cache = 0;         // slot 0; slot s at cache + s * kBinariesSlotBytes
  uint64_t slotAddress(uint32_t slot) const { return cache + uint64_t{slot} * contract::kBinariesSlotBytes; }
};

class BinariesLayout {
public:
  // A failure when the region does not fit the descriptor's channels.
  static Expected<BinariesLayout> forSoc(const SocDescriptor& soc);

  uint32_t channels() const { return channels_; }
  uint64_t regionBase() const { return base_; }
  uint64_t regionBytes() const { return bytes_; }
  uint32_t coresPerChannel() const { return coresPerChannel_; }
  // nullopt when `core` is not a functional worker.
  std::optional<CoreBinariesArea> area(CoreCoord core) const;
  // True when [address, address + bytes) of `channel` meets the region.
  bool overlaps(uint32_t channel, uint64_t address, uint64_t bytes) const;

private:
  uint32_t channels_ = 1;
  uint64_t base_ = 0, bytes_ = 0;
  uint32_t coresPerChannel_ = 0;
  std::map<CoreCoord, uint32_t> index_;  // worker -> its index in the descriptor
};

// ---------------------------------------------------------------------------
// The epoch command queue of a core: a QueueHeader (rd/wr pointers wrapping
// in [0, 2 x kEpochCommandSlots), slots = kEpochCommandSlots) and the commands.
// ---------------------------------------------------------------------------
// Host: appends `command`. False with `error` when the queue is full.
bool pushEpochCommand(Dram& dram, const CoreBinariesArea& area, const contract::EpochCommand& command,
                      std::string& error);
// Firmware: the oldest command, removed; nullopt when the queue is empty.
std::optional<contract::EpochCommand> popEpochCommand(Dram& dram, const CoreBinariesArea& area);
uint32_t pendingEpochCommands(const Dram& dram, const CoreBinariesArea& area);

// ---------------------------------------------------------------------------
// The host's side.
// ---------------------------------------------------------------------------
struct BinariesCounters {
  uint64_t commands = 0;     // epoch commands pushed
  uint64_t pushes = 0;       // images written to a cache slot (misses)
  uint64_t pushedBytes = 0;  // their bytes
  uint64_t hits = 0;         // epoch commands whose image was resident
  uint64_t evictions = 0;    // pushes that replaced another epoch's image
};

// Which temporal epoch's image occupies each slot of each core's cache; a
// full cache replaces its least recently used slot.
class BinariesCacheTable {
public:
  struct Use {
    uint32_t slot = 0;
    bool hit = false;
    std::optional<uint32_t> evicted;  // the epoch whose image the slot held
  };
  Use use(CoreCoord core, uint32_t epoch);
  std::optional<uint32_t> slotOf(CoreCoord core, uint32_t epoch) const;
  // After a push: the image's size (the epoch command carries it).
  void setBytes(CoreCoord core, uint32_t slot, uint32_t bytes) { cores_[core][slot].bytes = bytes; }
  uint32_t bytes(CoreCoord core, uint32_t slot) const;
  void forget(CoreCoord core, uint32_t slot) { cores_[core][slot] = Slot{}; }

private:
  struct Slot {
    bool used = false;
    uint32_t epoch = 0;
    uint32_t bytes = 0;
    uint64_t lastUse = 0;
  };
  std::map<CoreCoord, std::array<Slot, contract::kBinariesCacheSlots>> cores_;
  uint64_t tick_ = 0;
};

class BinariesHost {
public:
  explicit BinariesHost(BinariesLayout layout) : layout_(std::move(layout)) {}
  const BinariesLayout& layout() const { return layout_; }
  const BinariesCounters& counters() const { return counters_; }

  // Called only when the image is not resident: fills `image` (encoded).
  using Encode = std::function<bool(std::vector<uint8_t>& image, std::string& error)>;
  // One core of an epoch: makes the epoch's image resident in the core's
  // cache (encode() and a DRAM write only on a miss) and pushes the epoch
  // command. False with `error`: an image larger than a slot (naming the
  // core `coreName`, the epoch and both sizes), a full command queue, ...
  bool deploy(Dram& dram, CoreCoord core, const std::string& coreName, uint32_t epoch, uint32_t inputCount,
              const Encode& encode, std::string& error);

private:
  BinariesLayout layout_;
  BinariesCacheTable table_;
  BinariesCounters counters_;
};

}  // namespace tessera::sim
