// DRAM of the simulated chip: one byte array per channel, stored sparsely
// (64 KiB pages materialised on first write; unwritten bytes read as 0), so a
// netlist's gigabytes of queues cost nothing until used. Plus the BUDA-style
// queue header the firmware and the stream engine read and write
// (docs/device-model.md, "Streams, NOC and DRAM").
#pragma once
#include "device/soc_descriptor.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessera::sim {

class Dram {
public:
  static constexpr uint64_t kPageBytes = 64 * 1024;

  // `channels` channels of `channelBytes` bytes each.
  Dram(uint32_t channels, uint64_t channelBytes);
  // The channels and bank size of a soc descriptor.
  explicit Dram(const SocDescriptor& soc);

  uint32_t channelCount() const { return static_cast<uint32_t>(channels_.size()); }
  uint64_t channelBytes() const { return channelBytes_; }
  bool inRange(uint32_t channel, uint64_t address, uint64_t bytes) const {
    return channel < channels_.size() && address <= channelBytes_ && bytes <= channelBytes_ - address;
  }

  // Out-of-range accesses return false and change nothing.
  bool read(uint32_t channel, uint64_t address, std::span<uint8_t> out) const;
  bool write(uint32_t channel, uint64_t address, std::span<const uint8_t> bytes);
  uint32_t read32(uint32_t channel, uint64_t address) const;
  bool write32(uint32_t channel, uint64_t address, uint32_t value);
  bool fill(uint32_t channel, uint64_t address, uint64_t bytes, uint8_t value);

  // Bytes materialised (pages x page size), for reports and tests.
  uint64_t residentBytes() const;

private:
  using Page = std::array<uint8_t, kPageBytes>;
  const Page* findPage(uint32_t channel, uint64_t page) const;
  Page& page(uint32_t channel, uint64_t page);
  struct Recent {  // the page a channel used last (pages never move or go away)
    uint64_t index = 0;
    Page* page = nullptr;
  };
  uint64_t channelBytes_ = 0;
  std::vector<std::unordered_map<uint64_t, std::unique_ptr<Page>>> channels_;
  mutable std::vector<Recent> recent_;
};

// ---------------------------------------------------------------------------
// Queue buffers in DRAM. A queue buffer (one per core of the queue's grid) is
// a 32-byte header followed by `slots` entries of `entryBytes` bytes each:
// entry slot s at address + kQueueHeaderBytes + s * entryBytes. Pointers
// wrap in [0, 2*slots) so full and empty differ (lib/runtime's rule).
// ---------------------------------------------------------------------------
constexpr uint32_t kQueueHeaderBytes = 32;

struct QueueHeader {
  uint32_t rdPtr = 0;      // 0x00 global read pointer (head); the device moves it past a slot every reader has left
  uint32_t rdAutoinc = 0;  // 0x04 BUDA's global_rdptr_autoinc: a ram reader steps its slot by it at each period done
                           //      (one entry read); queues ignore it
  uint32_t rdStay = 0;     // 0x08 1: readers re-read the slot at rd_ptr for every input and pop nothing
                           //      (the program's rd_ptr_autoinc 0, set by the loader)
  uint32_t reserved1 = 0;  // 0x0C
  uint32_t wrPtr = 0;      // 0x10 global write pointer (tail); the device moves it after writing a whole slot
  uint32_t wrAutoinc = 0;  // 0x14 BUDA's global_wrptr_autoinc: a ram writer steps wr_ptr by it after each entry
                           //      (0: the slot is rewritten in place); queues ignore it
  uint32_t slots = 0;      // 0x18 E; 0 = take dram_buf_size_q_slots from the blob
  uint32_t reserved2 = 0;  // 0x1C
};
static_assert(sizeof(QueueHeader) == kQueueHeaderBytes);

QueueHeader readQueueHeader(const Dram& dram, uint32_t channel, uint64_t address);
bool writeQueueHeader(Dram& dram, uint32_t channel, uint64_t address, const QueueHeader& header);

// (wr - rd) mod 2E: entries written and not popped.
uint32_t queueOccupancy(uint32_t rdPtr, uint32_t wrPtr, uint32_t slots);
uint32_t wrapPointer(uint64_t ptr, uint32_t slots);  // into [0, 2E)

// ---------------------------------------------------------------------------
// Host (system) memory: where `loc: host` queues live. It is not on the chip;
// the chip reaches it through its PCIe core, whose NOC window maps host
// memory channel c (one 1 GiB hugepage each, as BUDA's runtime allocates
// them) at c * 1 GiB. The simulator keeps it in a separate Dram object of
// kHostChannels channels (the same sparse store; the host reads it directly).
// ---------------------------------------------------------------------------
constexpr uint32_t kHostChannels = 4;
constexpr uint64_t kHostChannelBytes = uint64_t{1} << 30;

// Other chips' DRAM through the PCIe core (chips without ethernet, grayskull:
// docs/cluster.md, "Through the host"). A chip's streams write another chip's
// DRAM queue through their PCIe core; pipegen marks the address with the
// peer above the NOC coordinates:
//   ((1 + chip) << 52) | (channel << 48) | ((pcie.y << 6 | pcie.x) << 32) | addr
// The simulator keeps what a chip writes there in its host-memory Dram, at
// channel peerWindowChannel(chip, channel) (chips do not touch each other's
// state: the loader moves those entries to the runtime after the epoch, as
// for host queues). Timed as host memory: the PCIe link.
constexpr uint32_t kPeerWindowChips = 256;        // grayskull's largest default cluster
constexpr uint32_t kPeerWindowChannelsPerChip = 8;
constexpr uint32_t kHostMemoryChannels = kHostChannels + kPeerWindowChips * kPeerWindowChannelsPerChip;
// Nullopt when the chip or channel is outside the window.
std::optional<uint32_t> peerWindowChannel(uint32_t chip, uint32_t channel);

// Where a stream's dram_buf_noc_addr points: the DRAM channel whose NOC core
// (any subchannel) sits at NOC coordinate bits [43:32] (x in [37:32], y in
// [43:38], BUDA's NOC_XY_ADDR) and the byte address in that channel; or, when
// the coordinate is a PCIe core, host memory channel address[31:30] at
// address[29:0].
struct DramLocation {
  uint32_t channel = 0;
  uint64_t address = 0;
  CoreCoord core;     // the channel's NOC core (the PCIe core for host memory)
  bool host = false;  // host memory through PCIe, not device DRAM (peer windows too)
};
std::optional<DramLocation> decodeDramNocAddress(const SocDescriptor& soc, uint64_t nocAddr);
// The inverse, with subchannel 0's core.
uint64_t dramNocAddress(const SocDescriptor& soc, uint32_t channel, uint64_t address);
// A host memory address through the descriptor's first PCIe core (nullopt
// when it has none or channel/address do not fit the window).
std::optional<uint64_t> hostNocAddress(const SocDescriptor& soc, uint32_t channel, uint64_t address);

}  // namespace tessera::sim
