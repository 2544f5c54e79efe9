// The overlay (stream) engine of the simulated chip: every worker core's 64
// streams, configured only from the core's decoded overlay blob
// (lib/blob/blob_model.hpp holds the stream semantics this implements), moving
// tiles between L1 buffers of cores and DRAM queue buffers phase by phase,
// with credit flow control (a sender sends a tile only when the receiving
// stream's ring has a free slot), unicast, gather and multicast, and the
// kernel operand tile counters of lib/sim/tensix_core.hpp for operand
// streams 8-39. Data-movement timing comes from lib/sim/noc.hpp.
//
// Time: the chip calls advance(until) after each scheduler slice. The engine
// delivers the transfers due by then (a delivery bumps the receiving ring's
// counter, the kernel's RECEIVED for an input operand) and starts every
// transfer whose resources (the sender's NOC port, a DRAM channel) become
// free before `until`. DRAM pointers are updated as the streams go: a
// writer moves the wr pointer after each whole slot, the readers of a queue
// move its rd pointer past a slot once all of them have left it. Tile bytes are copied when a transfer starts (the
// slot at the receiver was reserved by its credit); the receiver sees them
// when the transfer arrives. docs/device-model.md, "Streams, NOC and DRAM".
#pragma once
#include "blob/blob_model.hpp"
#include "device/soc_descriptor.hpp"
#include "sim/dram.hpp"
#include "sim/ethernet.hpp"
#include "sim/noc.hpp"
#include "sim/trace.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <tuple>
#include <string>
#include <vector>

namespace tessera::sim {

class TensixCore;
class FaultInjector;

// "chip_0__y_1__x_2__stream_id_8", blob.yaml's spelling.
std::string streamNameText(const blob::StreamName& name);

// A fault found by the engine: stops the run.
struct StreamFault {
  std::string category;  // "bad-stream-config", "l1-overflow", "dram-address"
  std::string core;      // the core's name (TensixCore::name)
  std::string message;   // one line naming the core, stream and phase
};

struct StreamCounters {
  uint64_t nocTiles = 0;          // tiles delivered over the NOC (a multicast counts once per destination)
  uint64_t nocBytes = 0;
  uint64_t dramReadTiles = 0;
  uint64_t dramReadBytes = 0;
  uint64_t dramWriteTiles = 0;
  uint64_t dramWriteBytes = 0;
  uint64_t prologueTiles = 0;     // tiles the firmware preloaded (part of dramReadTiles)
  uint64_t epilogueTiles = 0;     // gradient accumulator tiles stored back after the kernel (part of dramWriteTiles)
  uint64_t ethTiles = 0;          // tiles sent over ethernet links to other chips
  uint64_t ethBytes = 0;
  uint64_t tilesMoved() const { return nocTiles + dramReadTiles + dramWriteTiles + ethTiles; }
};

// One stream's position, for tests and reports.
struct StreamStatus {
  blob::StreamName name;
  size_t phase = 0;          // index into the stream's phases
  uint32_t iteration = 0;    // of numItersInEpoch
  bool done = false;
  uint64_t tilesIn = 0;      // tiles that entered its buffer (received, read, pushed by the packer)
  uint64_t tilesOut = 0;     // tiles that left it (sent, written to DRAM, delivered to the kernel)
};

// One ethernet channel's sending direction over an epoch.
struct EthLinkCounters {
  uint64_t tiles = 0;
  uint64_t bytes = 0;
  uint64_t busyCycles = 0;  // cycles the link carried this chip's tiles (utilisation = busy / epoch cycles)
};

// The handshake of one chip before an epoch (sim::Cluster checks the pairs
// and hands every chip the receivers of all: docs/device-model.md "Cluster").
struct EthSenderInfo {
  blob::StreamName sender;
  blob::StreamName receiver;
  uint32_t chan = 0;   // the sender's channel
  EthEndpoint peer;    // the other end of its link
  uint32_t msgSize = 0;
};
struct EthSetup {
  std::vector<EthReceiverInfo> receivers;
  std::vector<EthSenderInfo> senders;
};

class StreamEngine {
public:
  // `host`: host memory behind the PCIe core (dram.hpp); nullptr = none, a
  // dram_buf_noc_addr on the PCIe core is then a dram-address fault.
  StreamEngine(const SocDescriptor& soc, Dram& dram, const DataMovementModel& model, Dram* host = nullptr);
  ~StreamEngine();
  StreamEngine(const StreamEngine&) = delete;
  StreamEngine& operator=(const StreamEngine&) = delete;

  // The worker at NOC coordinate `noc`: its L1 holds the buffers, its tile
  // counters are the operand streams' counters. Not owned.
  // `ethernet`: an ethernet core (no kernel: no operand streams; 32 streams;
  // buffers from contract::kEthDataBufferBase).
  void attachCore(CoreCoord noc, TensixCore& core, bool ethernet = false);
  // Forgets every stream, transfer and resource booking (a new epoch); the
  // attached cores stay.
  void clear();

  // Adds the streams of the core at NOC (blob.x, blob.y) from its decoded
  // blob. Checks what the engine relies on (one source and one destination
  // role per phase, buffers inside the data buffer area of L1, operand
  // streams keeping one buffer, DRAM addresses naming a channel); on a
  // problem returns false with a fault naming the core, stream and phase.
  bool configure(const blob::CoreBlob& blob, StreamFault& fault);

  // Epoch start at cycle `now`, after every core is configured.
  void start(uint64_t now);
  // The firmware's prologue: DRAM-to-kernel streams whose whole epoch fits
  // their buffer (one dram_input + local_receiver phase, one iteration,
  // numMsgs tiles <= buffer slots) are read into L1 now, before the harts
  // start; their tiles count as received at cycle `now`. Returns the cycles
  // the reads took (DRAM channel time), which the epoch's start is charged.
  // Gradient accumulators (an operand stream whose one intermediate phase has
  // a dram_buf_noc_addr: a gradient op's ram cell) are loaded here too, from
  // the slot the cell's wr_ptr names into the buffer's first numMsgs slots.
  uint64_t runPrologue(uint64_t now);
  // The firmware's epilogue for the core at `noc`, whose kernel finished at
  // `cycle`: every gradient accumulator the prologue loaded on it is written
  // back to its ram cell (DRAM channel and NOC time booked from `cycle`;
  // the core's last activity is the last write's arrival). Nothing else
  // may touch the cell during the epoch, so the bytes are copied now.
  void kernelFinished(CoreCoord noc, uint64_t cycle);
  // Moves tiles up to cycle `until` (see the file comment). Returns true when
  // anything changed (a transfer started or arrived, a phase advanced).
  bool advance(uint64_t until);
  bool done() const;       // every stream finished every phase and iteration, nothing in flight
  bool busy() const;       // transfers in flight or waiting only for a NOC port / DRAM channel
  // The earliest cycle anything can happen without the kernels: the next
  // arrival or the next port/channel becoming free for a waiting transfer.
  std::optional<uint64_t> nextWakeTime() const;
  const std::optional<StreamFault>& fault() const { return fault_; }
  // After done(): a buffer slot still taken is a lost credit ("stream-credit"; fault_injection.cpp).
  std::optional<StreamFault> auditCredits() const;
  // Injected faults (fault_injection.hpp); nullptr: none. Not owned.
  void setInjector(FaultInjector* injector) { inject_ = injector; }

  // One line per stream that has not finished: core, stream id, phase
  // (index, phase_id, iteration), progress and what it waits for
  // (credits at a named receiver, data from a named sender or the packer,
  // DRAM data or space, the kernel popping its input).
  std::vector<std::string> waitingReport() const;

  const StreamCounters& counters() const { return counters_; }
  // Records every tile transfer from now on (on) or none (off; the
  // default); either forgets what was recorded (loader --trace).
  void recordTransfers(bool on) { recorder_ = on ? std::make_unique<TransferRecorder>() : nullptr; }
  std::vector<TransferSpan> takeTransfers() { return recorder_ ? recorder_->take() : std::vector<TransferSpan>{}; }
  // Last cycle a transfer of a stream of this core started or arrived.
  uint64_t lastActivity(CoreCoord noc) const;
  uint64_t lastActivity() const { return lastActivity_; }
  std::vector<StreamStatus> status() const;
  std::optional<StreamStatus> status(const blob::StreamName& name) const;
  size_t streamCount() const;

  // --- Ethernet: this chip in a cluster (stream_engine_eth.cpp) ---
  // The chip's id and ethernet ports. Without them (a single chip) a stream
  // named on another chip is one this chip does not have. With them, a phase
  // whose dest (remote_receiver) or src (remote_source) is a stream on
  // another chip sends or receives over the link of its core, which must be
  // an ethernet core joined to that chip (configure checks it).
  void setEthernet(const EthPorts& ports);
  const std::optional<EthPorts>& ethernet() const { return eth_; }
  // After every core is configured: the streams that send or receive over a link.
  EthSetup ethSetup() const;
  // Every receiver of the cluster (all chips' ethSetup().receivers, checked):
  // each sender of this chip starts with its receiver's slots as credits.
  void connectEthernet(const std::vector<EthReceiverInfo>& receivers);
  // The packets sent since the last call, in send order.
  std::vector<EthPacket> takePackets();
  // Packets for this chip, in delivery order (ethDeliveryOrder), between
  // rounds: none may arrive before the next round starts. A packet for a
  // stream this chip does not have is a bad-stream-config fault.
  void receivePackets(std::vector<EthPacket>& packets);
  // The cluster skipped idle rounds: transfers start no earlier than `now`.
  void skipTo(uint64_t now) { now_ = std::max(now_, now); }
  // Per channel (this chip's sending side), this epoch.
  const std::vector<EthLinkCounters>& ethLinks() const { return ethLinks_; }

private:
  friend class FaultInjector;
  struct Ring;
  struct ProducerGroup;
  struct Stream;
  struct CoreSlot;
  struct DramCursor;
  struct GradientCell;
  struct EthTx;
  struct EthRx;
  struct Event {
    uint64_t time = 0;
    uint64_t seq = 0;
    enum class Kind : uint8_t { Deliver, Free } kind = Kind::Deliver;
    Ring* ring = nullptr;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };

  CoreSlot* coreAt(uint32_t x, uint32_t y);
  const CoreSlot* coreAt(uint32_t x, uint32_t y) const;
  Stream* find(const blob::StreamName& name);
  const Stream* find(const blob::StreamName& name) const;
  Ring* ringFor(Stream& s, const blob::StreamPhase& p);
  bool enterPhase(Stream& s);
  bool phaseComplete(const Stream& s) const;
  void completePhase(Stream& s);
  bool releaseWritten(Ring& r, uint64_t when);  // schedules the asked releases of written tiles
  bool step(Stream& s, uint64_t until);
  bool stepDramRead(Stream& s, uint64_t until);
  bool stepSend(Stream& s, uint64_t until);
  bool stepDramWrite(Stream& s, uint64_t until);
  bool writeUntilized(const blob::StreamPhase& p, const DramLocation& loc, uint64_t slotBase, uint32_t msgInSlot,
                      const uint8_t* src);
  bool destAccepts(const Stream& s, const Stream* d) const;
  bool deliverDue(uint64_t until);
  void schedule(uint64_t time, Event::Kind kind, Ring* ring);
  // The sender's side of one tile that left ring `r` at `departed`: a
  // windowed source notes the departure (its release waits for the kernel),
  // a FIFO source frees the slot then.
  void tileSent(Stream& s, Ring& r, uint64_t departed, bool windowed);
  void touch(Stream& s, uint64_t time);
  // A tile of stream `s` left at `start` and arrived at `end` (recordTransfers only).
  void noteTransfer(const Stream& s, TransferKind kind, uint64_t start, uint64_t end, uint64_t bytes) {
    if (recorder_) recordTransfer(s, kind, start, end, bytes);
  }
  void recordTransfer(const Stream& s, TransferKind kind, uint64_t start, uint64_t end, uint64_t bytes);
  void setFault(const Stream& s, const std::string& category, const std::string& what);
  DramCursor* cursorFor(Stream& s, const blob::StreamPhase& p);
  // The memory a location is in, the resource its transfers book (DRAM
  // channel, or the PCIe link: index channelCount()), and their timing.
  Dram& memOf(const DramLocation& loc) const { return loc.host ? *host_ : dram_; }
  size_t busyIndex(const DramLocation& loc) const { return loc.host ? dram_.channelCount() : loc.channel; }
  uint64_t transferCycles(const DramLocation& loc, uint64_t bytes) const;
  uint64_t latencyOf(const DramLocation& loc) const;
  void moveReaderPast(Stream& s, DramCursor& cur);  // the reader leaves its current slot
  bool readerSlotWritten(DramCursor& cur);
  bool isRemote(const blob::StreamName& n) const { return eth_ && n.chip != eth_->chip; }
  bool configureEthernet(Stream& s, const std::string& coreName, StreamFault& fault);
  bool stepEthSend(Stream& s, uint64_t until);
  bool stepEthReceive(Stream& s, uint64_t until);
  void returnCredit(Ring& r, uint64_t time);
  // A packet over this chip's channel `chan` to `peer`, numbered in send order.
  bool viaPcie(uint32_t chan) const;        // the PCIe channel of a chip without ethernet (EthPorts::pcie)
  uint64_t hopLatency(uint32_t chan) const;  // a tile's or credit's latency over channel `chan`
  EthPacket ethPacket(EthPacket::Kind kind, uint32_t chan, const EthEndpoint& peer, const blob::StreamName& from,
                      const blob::StreamName& to, uint64_t sent, uint64_t arrival);
  std::string ethWaitReason(const Stream& s) const;
  std::string describe(const Stream& s) const;
  std::string waitReason(const Stream& s) const;
  uint64_t ringValid(const Ring& r) const;
  uint64_t ringFreed(const Ring& r) const;
  uint32_t ringFree(const Ring& r) const;

  const SocDescriptor& soc_;
  Dram& dram_;
  Dram* host_ = nullptr;
  DataMovementModel model_;
  std::vector<std::unique_ptr<CoreSlot>> cores_;  // by (y * gridX + x), created by attachCore
  std::vector<std::unique_ptr<Stream>> streams_;  // configuration order
  std::map<blob::StreamName, Stream*> byName_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  std::vector<Ring*> releasePending_;  // windowed sources with releases waiting for the kernel's writes
  std::vector<uint64_t> dramBusy_;                // per channel, then the PCIe link: free from this cycle
  struct ReaderGroup {  // the readers of one DRAM queue buffer
    std::vector<DramCursor*> cursors;
    uint64_t popped = 0;  // slots the rd pointer moved this epoch
  };
  std::map<std::tuple<bool, uint32_t, uint64_t>, ReaderGroup> readers_;  // by (host, channel, header address)
  std::vector<std::unique_ptr<GradientCell>> gradients_;  // loaded by the prologue, stored by kernelFinished
  uint64_t seq_ = 0;
  uint64_t now_ = 0;           // start of the current window
  uint64_t wake_ = ~uint64_t{0};
  uint64_t lastActivity_ = 0;
  StreamCounters counters_;
  std::optional<StreamFault> fault_;
  std::optional<EthPorts> eth_;
  std::vector<uint64_t> ethTxBusy_;      // per channel: the link's sending side is free from this cycle
  std::vector<EthLinkCounters> ethLinks_;
  std::vector<EthPacket> outbox_;
  uint64_t ethSeq_ = 0;
  std::unique_ptr<TransferRecorder> recorder_;  // recordTransfers(true) only
  FaultInjector* inject_ = nullptr;
};

}  // namespace tessera::sim
