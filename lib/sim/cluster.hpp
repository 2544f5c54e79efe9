// The simulated cluster: one Chip per chip of a cluster descriptor
// (lib/device/cluster.hpp), joined by ethernet links. The only coupling
// between chips is timestamped packets (sim/ethernet.hpp: tiles one way,
// credits back), so the chips of an epoch run side by side:
//
//   handshake   every chip configures its streams; the streams that receive
//               over a link announce their ring's slots (EthSetup), the
//               cluster checks every sender against its receiver and gives
//               each sender its receiver's slots as initial credits;
//   round r     cycles [r*S, (r+1)*S): every chip runs its round on its own
//               (Chip::runRound; on up to `jobs` threads), then the packets
//               sent in the round go to their destination chips, in
//               ethDeliveryOrder, and every chip's round summary (fault,
//               progress, done, busy, next event) to every process. S <= the link latency, so a packet sent in
//               round r arrives in round r+1 or later: no chip can see
//               another's round before its own has ended (conservative
//               lookahead), and results and cycles do not depend on `jobs`;
//   end         every chip done; a fault on any chip; a hang (no chip made
//               progress and nothing is in flight for hangRounds rounds),
//               reported with the waiting streams of EVERY chip; the cycle limit.
//
// The chips may be spread over processes (cluster_transport.hpp: MPI ranks,
// chip c on rank c mod K): every process holds every chip, runs only its own
// and takes the others' packets, summaries and reports from the transport.
//
// docs/device-model.md, "Cluster".
#pragma once
#include "device/cluster.hpp"
#include "sim/chip.hpp"
#include "sim/cluster_transport.hpp"
#include "sim/ethernet.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessera::sim {

struct ClusterRunOptions {
  // Every chip's options (sliceCycles is the round, capped at the link
  // latency; maxCycles and hangRounds are the cluster's), then per chip what
  // differs (startCycles, afterFirmware, epoch).
  ChipRunOptions defaults;
  std::map<ChipId, ChipRunOptions> perChip;
  unsigned jobs = 1;  // threads running chips' rounds
};

// One direction of one link over the epoch.
struct EthLinkReport {
  EthEndpoint from, to;
  uint64_t tiles = 0, bytes = 0, busyCycles = 0;
};

struct ClusterRunResult {
  ChipStop stop = ChipStop::Done;
  uint64_t cycles = 0;                 // the latest chip's
  std::vector<ChipRunResult> chips;    // by chip id
  std::vector<EthLinkReport> links;    // directions that carried tiles, by (from, to)
  std::optional<ChipId> faultChip;     // Fault: the chip that faulted
  std::string faultCategory;
  std::string faultCore;               // the core's name on faultChip
  std::vector<std::string> waitingStreams;  // Hang/CycleLimit: "chip N: <stream line>", every chip
  std::string message;
  bool ok() const;                     // Done and every chip ok
};

class Cluster {
public:
  // Chips of `soc` (every chip of a cluster is of one SoC descriptor).
  Cluster(const SocDescriptor& soc, const ClusterDescriptor& cluster, const EthParams& eth = {});
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  const ClusterDescriptor& descriptor() const { return desc_; }
  const EthParams& ethParams() const { return eth_; }
  std::vector<ChipId> chipIds() const;
  Chip& chip(ChipId id);
  const Chip& chip(ChipId id) const;

  // The processes the chips are spread over (not owned; null: this process
  // runs every chip). Chips other ranks run are kept but never run here.
  void setTransport(ClusterTransport* transport) { transport_ = transport; }
  ClusterTransport* transport() const { return transport_; }
  bool isLocal(ChipId id) const { return !transport_ || transport_->isLocal(id); }
  bool distributed() const { return transport_ && transport_->ranks() > 1; }

  // Chip::beginEpoch on every chip.
  void beginEpoch();
  // Runs the epoch set up on every chip (see the file comment).
  ClusterRunResult runEpoch(const ClusterRunOptions& options = {});

  // Spread over processes: every region's bytes, as its chip's rank has
  // them, into every rank's copy (collective; a no-op in one process). For
  // what the host reads back after an epoch (the queues the device wrote).
  struct MemoryRegion {
    ChipId chip = 0;
    bool host = false;  // the chip's host memory, else its DRAM
    uint32_t channel = 0;
    uint64_t address = 0, bytes = 0;
  };
  void shareMemory(const std::vector<MemoryRegion>& regions);

private:
  ClusterDescriptor desc_;
  EthParams eth_;
  std::map<ChipId, std::unique_ptr<Chip>> chips_;
  ClusterTransport* transport_ = nullptr;
};

// The handshake's check (any process can run it on the gathered setups and
// get the same answer): every sender's receiver exists on the chip at the
// other end of its link, on that link's channel, receives from it and takes
// tiles of its size; every receiver's sender exists. Nullopt when all pair;
// else the first problem in (chip, stream) order as a fault.
struct EthSetupFault {
  ChipId chip = 0;
  blob::StreamName stream;  // whose core is named
  std::string message;
};
std::optional<EthSetupFault> checkEthSetup(const std::map<ChipId, EthSetup>& setups);

// Links from `chip` to the nearest MMIO chip (0 for an MMIO chip; nullopt
// when none is reachable).
std::optional<uint32_t> hopsToHost(const ClusterDescriptor& cluster, ChipId chip);
// The data-movement model of a chip `hops` links from its MMIO chip: its
// host-memory transfers (the PCIe resource) cross those links both ways, at
// no more than a link's rate (docs/device-model.md, "Cluster").
DataMovementModel hostPathModel(const DataMovementModel& base, const EthParams& eth, uint32_t hops);

}  // namespace tessera::sim
