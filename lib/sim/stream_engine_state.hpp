// The stream engine's private state (lib/sim/stream_engine.hpp): rings,
// streams, DRAM cursors. Shared by the engine's translation units
// (stream_engine.cpp: one chip; stream_engine_configure.cpp: configuration
// from blob bytes; stream_engine_reports.cpp: wait reports;
// stream_engine_eth.cpp: ethernet streams between chips) and
// fault_injection.cpp; nothing else includes it.
#pragma once
#include "sim/stream_engine.hpp"

#include "device/device_contract.h"
#include "sim/tensix_core.hpp"

#include <array>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tessera::sim {

using blob::StreamName;
using blob::StreamPhase;

namespace engine_detail {

inline bool isOperandStream(uint32_t id) { return id >= blob::kOperandStreamBase && id < blob::kOperandStreamEnd; }

inline std::string coordText(CoreCoord cc) { return std::to_string(cc.x) + "-" + std::to_string(cc.y); }

// The tile of the current period a windowed phase sends as its k-th msg:
// one range from srcTileOffset, or the chunks of its chunk list in order.
inline uint32_t periodTile(const StreamPhase& p, uint64_t k) {
  if (p.srcChunkOffsets.empty()) return p.srcTileOffset + static_cast<uint32_t>(k);
  return p.srcChunkOffsets[k / p.srcChunkTiles] + static_cast<uint32_t>(k % p.srcChunkTiles);
}

}  // namespace engine_detail

// A stream's buffer: a ring of `slots` tiles of msgSize bytes at `base` in
// its core's L1. Counters are free-running tile counts:
//   reserved  slots handed to writers (a transfer into the ring has started)
//   valid     tiles whose data has arrived (readable)
//   sent      tiles the stream has sent on (remote receiver, DRAM output)
//   freed     slots released for reuse
// For an input operand the kernel frees (its ACKED counter; the engine adds
// RECEIVED on every arrival); for an output operand the kernel writes (its
// RECEIVED counter; the engine adds ACKED when a tile has left).
struct StreamEngine::Ring {
  uint32_t base = 0, msgSize = 0, slots = 0, bytes = 0;
  TensixCore* core = nullptr;
  CoreSlot* slot = nullptr;
  int operand = -1;
  bool kernelConsumes = false;
  bool kernelProduces = false;
  uint64_t reserved = 0, valid = 0, sent = 0, freed = 0;
  uint64_t assigned = 0;     // tiles of phases entered so far
  uint64_t lastArrival = 0;  // arrivals are delivered in slot order
  uint64_t observed = 0;     // kernelProduces: packer pushes seen (slotTime set)
  uint64_t periodBase = 0;   // windowed source: ring tile where the current period starts
  // Windowed source: ring tiles up to which the phases so far asked for a
  // release (src_freed_tiles, the whole period after its last phase), and up
  // to which a release is scheduled. A release waits for the kernel to have
  // written the tile: a phase may free tiles past the last one it sent.
  uint64_t releaseAsked = 0, releaseScheduled = 0;
  bool releasePending = false;  // in releasePending_
  ProducerGroup* group = nullptr;  // kernelProduces: the streams sharing the packer's buffer
  Stream* ethReceiver = nullptr;   // the ring of a stream fed over ethernet: every freed slot is a credit back
  std::vector<uint64_t> slotTime;
};

// The streams sending one packer buffer (an output operand): the operand
// stream and its fork streams (non-operand streams with source_endpoint
// phases over the same buffer). Each keeps its own read and free pointers
// (its Ring); the kernel's ACKED moves to the least of their freed counts, so
// a slot is free for the packer only when every fork stream has sent it.
struct StreamEngine::ProducerGroup {
  size_t expected = 0;        // producing streams configured over the buffer
  std::vector<Ring*> rings;   // created so far
  uint64_t acked = 0;         // tiles acked to the kernel (ring counter)
};

struct StreamEngine::CoreSlot {
  CoreCoord noc;
  TensixCore* core = nullptr;
  std::map<int, ProducerGroup> producers;  // by output operand
  std::array<uint64_t, 2> portBusy{};  // per NOC: the sender port is free from this cycle
  bool ethernet = false;                // an ethernet core
  uint64_t lastActivity = 0;
};

struct StreamEngine::DramCursor {
  uint64_t nocAddr = 0;
  DramLocation loc;
  bool reader = true;
  bool ram = false;
  uint32_t slots = 0;
  uint32_t tilesPerEntry = 0;
  uint32_t msgSize = 0;
  uint64_t entryBytes = 0;
  uint64_t entry = 0;     // slots moved past (reader) or written (writer)
  uint32_t tile = 0;      // FIFO: tile within the current slot
  uint32_t startPtr = 0;  // reader: pointer of the first slot (the rd pointer when it started)
  bool stay = false;      // reader: every input reads the slot at startPtr, nothing is popped (header rd_stay)
  uint64_t ramSlot = 0;   // reader of a ram: slots its read pointer has stepped (rd_autoinc per period done)
  uint32_t ramStep = 0;   // reader of a ram: the header's rd_autoinc
  uint32_t readPtr() const { return wrapPointer(uint64_t{startPtr} + (stay ? 0 : ram ? ramSlot : entry), slots); }
  uint32_t totalReaders = 1;
  uint64_t checked = ~uint64_t{0};  // reader: the last entry found written
  uint32_t entryPtr = 0;  // writer: pointer of the entry being written
};

struct StreamEngine::Stream {
  StreamName name;
  CoreSlot* core = nullptr;
  std::vector<StreamPhase> phases;
  uint32_t iters = 1;
  size_t phase = 0;
  uint32_t iter = 0;
  bool done = false;
  bool entered = false;
  bool fork = false;  // a fork stream: sends its output operand's buffer beside the operand stream
  bool gradient = false;  // a gradient accumulator: the firmware loads and stores its ram cell
  int operand = -1;
  std::vector<std::unique_ptr<Ring>> rings;
  Ring* ring = nullptr;
  uint64_t first = 0;  // ring tiles [first, first + n) belong to the current phase
  uint32_t n = 0;
  uint32_t in = 0;      // tiles of this phase read from DRAM
  uint32_t out = 0;     // tiles of this phase sent on or written to DRAM
  uint64_t lastDepart = 0;  // windowed source: when the last tile of the phase left
  uint32_t srcIdx = 0;  // remote source: the src entry whose tiles come next
  std::vector<Stream*> dests;
  // Ethernet (a stream on an ethernet core whose peer is on another chip).
  std::vector<std::unique_ptr<EthTx>> ethTx;  // the receivers on other chips it sends to
  EthTx* ethDest = nullptr;                   // the current phase's, when its dest is on another chip
  std::unique_ptr<EthRx> ethRx;               // it receives from a sender on another chip
  std::vector<std::unique_ptr<DramCursor>> cursors;
  DramCursor* cursor = nullptr;
  uint64_t tilesIn = 0, tilesOut = 0;
  std::string coreName() const { return core && core->core ? core->core->name() : engine_detail::coordText(core->noc); }
};

// A stream's sends to one receiving stream on another chip: the link it
// uses (its core's channel) and the credits it holds, each with the cycle
// it became usable (its credit packet's arrival; the handshake's at 0).
struct StreamEngine::EthTx {
  StreamName to;
  uint32_t chan = 0;
  EthEndpoint peer;
  std::deque<uint64_t> credits;
  uint32_t slots = 0;  // the receiver's ring (the handshake's credits)
  uint32_t msgSize = 0;
};

// A stream fed by a sender on another chip: the tiles that arrived over the
// link and are not yet in its ring (the sender's credits bound them by the
// ring's free slots; they wait only for the stream's phase to reach them).
struct StreamEngine::EthRx {
  StreamName from;
  uint32_t chan = 0;
  EthEndpoint peer;
  struct Tile {
    uint64_t arrival = 0;
    std::vector<uint8_t> bytes;
  };
  std::deque<Tile> tiles;
  uint64_t received = 0;
};

// A gradient accumulator's ram cell, loaded into the operand buffer by the
// prologue and stored back by kernelFinished.
struct StreamEngine::GradientCell {
  Stream* stream = nullptr;
  DramLocation loc;
  uint64_t slotAddress = 0;  // the slot's first byte in the channel
  bool stored = false;
};

}  // namespace tessera::sim
