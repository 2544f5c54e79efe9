// Ethernet between simulated chips (docs/device-model.md, "Cluster"): the
// link's cycle model, the ports of one chip (which ethernet core is which
// channel, and what is at the other end of its link), and the packets that
// are the ONLY coupling between chips: tile data one way, credits back.
//
// A packet carries everything its receiver needs (names, times, bytes) and
// nothing that points into a chip, so the same packets can cross a thread
// boundary (sim::Cluster) or a process boundary (serialised, MPI ranks).
#pragma once
#include "blob/blob_model.hpp"
#include "device/cluster.hpp"
#include "device/soc_descriptor.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tessera::sim {

// One ethernet link, each direction on its own (docs/device-model.md,
// "Cluster", gives the public sources).
struct EthParams {
  uint32_t bitsPerCycle = 100;     // 100 Gb/s per direction at the 1 GHz AI clock
  uint32_t packetBytes = 1500;     // largest ethernet packet payload: a tile is cut into packets of this much
  uint32_t packetOverhead = 50;    // header, MAC header, FEC and CRC bytes of every packet
  uint32_t latency = 600;          // cycles from the last byte leaving the sender to it landing in the receiver's L1
};

// Cycles a link direction is busy with one message of `bytes` (its packets
// and their overhead at the link's rate).
uint64_t ethSerializationCycles(const EthParams& p, uint64_t bytes);

// A chip's ethernet cores: channel k is the k-th `eth:` core of the SoC
// descriptor; `peers[k]` the other end of its link (none: unconnected).
struct EthPorts {
  ChipId chip = 0;
  std::vector<CoreCoord> cores;                   // by channel
  std::vector<std::optional<EthEndpoint>> peers;  // by channel
  EthParams params;
  // Chips without ethernet (grayskull) in a cluster of several: a stream on
  // any worker core sends to or receives from a stream on another chip
  // through the PCIe cores (docs/cluster.md "Through the host"), booked on
  // one more channel, pcieChan(), timed as a link.
  bool pcie = false;
  uint32_t pcieChan() const { return static_cast<uint32_t>(cores.size()); }
  size_t channelCount() const { return cores.size() + (pcie ? 1 : 0); }
  std::optional<uint32_t> channelAt(CoreCoord noc) const;
};

// The ports of `chip` in `cluster` (links listed once or both ways alike).
EthPorts ethPortsOf(const ClusterDescriptor& cluster, ChipId chip, const SocDescriptor& soc,
                    const EthParams& params = {});

// What crosses a link.
struct EthPacket {
  enum class Kind : uint8_t {
    Tile,    // one tile for `to` (a stream on the destination chip), from `from`
    Credit,  // `count` slots of `from`'s ring (a receiver) are free again: for sender `to`
  };
  Kind kind = Kind::Tile;
  ChipId srcChip = 0, dstChip = 0;
  uint32_t srcChan = 0, dstChan = 0;  // the link's two ends
  uint64_t seq = 0;                   // the source chip's send order (ties of arrival)
  uint64_t sent = 0;                  // cycle the first byte left
  uint64_t arrival = 0;               // cycle it is usable at the destination
  blob::StreamName from, to;
  uint32_t count = 0;                 // Credit: slots
  std::vector<uint8_t> bytes;         // Tile: the tile
};

// The order packets are delivered in: by arrival, then source chip, then
// the source's send order. Independent of how the chips were scheduled.
bool ethDeliveryOrder(const EthPacket& a, const EthPacket& b);

// What a chip tells the others before an epoch starts (the ethernet
// firmware's handshake): each stream that receives over a link, its sender
// and its ring's slots (the sender's initial credits).
struct EthReceiverInfo {
  blob::StreamName receiver;
  blob::StreamName sender;
  uint32_t slots = 0;
  uint32_t msgSize = 0;
  uint32_t chan = 0;  // the receiver's channel
};

// Little-endian byte forms, for a process boundary. Decoding checks sizes
// and returns false on malformed input.
void appendPacket(std::vector<uint8_t>& out, const EthPacket& p);
bool readPacket(std::span<const uint8_t> in, size_t& at, EthPacket& p);
void appendReceiverInfo(std::vector<uint8_t>& out, const EthReceiverInfo& r);
bool readReceiverInfo(std::span<const uint8_t> in, size_t& at, EthReceiverInfo& r);

}  // namespace tessera::sim
