// net2pipe's epoch builder, declared for its passes (internal to lib/pipe).
// For one temporal epoch, EpochBuilder::build() runs:
//   op_buffers.cpp      the buffers of every op core and queue cell, padding
//   input_pipes.cpp     the tile lists each consumer buffer needs (tile maps)
//                       and the pipes that carry them (gathers, multicasts),
//                       the pipes writing queues
//   time_multiplex.cpp  multicasts sharing one stream (time slots)
//   finish_epoch.cpp    buffer windows and sizes, L1 fit, the chunking of
//                       source buffers into pipes
//   resource_check.cpp  streams, L1 and DRAM readers per core
//   epoch_builder.cpp   build(), the output and compileNetlist
// and, between them, the passes of their own files: relays.cpp (several
// chips), mcast_split.cpp, period_slots.cpp, dram_relays.cpp.
// docs/net2pipe.md describes every rule.
#pragma once
#include "formats/blocking.hpp"
#include "hlk/config.hpp"
#include "netlist/model.hpp"
#include "netlist/shape.hpp"
#include "pipe/builder_internal.hpp"
#include "pipe/epochs.hpp"
#include "pipe/net2pipe.hpp"
#include "pipe/pipegen_model.hpp"
#include "pipe/relays.hpp"
#include "pipe/tile_map.hpp"

#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace tessera::pipe::build {

using netlist::DataFormat;
using netlist::Graph;
using netlist::Netlist;
using netlist::Op;
using netlist::Queue;
using netlist::TensorShape;

inline std::string cellText(int64_t r, int64_t c) { return "r = " + std::to_string(r) + ", c = " + std::to_string(c); }

inline int64_t gcd64(int64_t a, int64_t b) { return std::gcd(a, b); }

inline int64_t entryTiles(const formats::Blocking& b) { return b.tilesPerCore(); }

class EpochBuilder {
public:
  EpochBuilder(Shared& sh, const TemporalEpoch& epoch)
      : sh_(sh), nl_(sh.nl), diags_(sh.diags), epoch_(epoch), graph_(epoch.firstGraph()),
        inputCount_(graph_.inputCount.present() ? graph_.inputCount.value : 1),
        chains_(sh, bufs_, pending_, inputCount_,
                [this](const std::string& rule, SourceLoc loc, const std::string& message,
                       const std::vector<std::string>& notes) { fail(rule, loc, message, notes); }) {}

  bool build(PipegenYaml& yaml);
private:
  Shared& sh_;
  const Netlist& nl_;
  DiagnosticEngine& diags_;
  const TemporalEpoch& epoch_;
  const Graph& graph_; // the epoch's first graph (graph_name; the input count of all)
  int64_t inputCount_;
  bool ok_ = true;
  std::vector<const Op*> ops_; // every op of the epoch's graphs, netlist order
  std::map<std::string, const Op*> opsByName_;
  std::map<const Op*, uint32_t> opChip_;
  std::vector<Buf> bufs_;
  std::vector<PendingPipe> pending_;
  std::map<uint64_t, uint64_t> relayBytes_;  // by core: relayRingBytes(), set by fitL1
  std::vector<Pipe> pipes_;
  // Per op: input buffers [input][core], output buffers [core] (packer or gradient).
  std::map<const Op*, std::vector<std::vector<uint32_t>>> opInputs_;
  std::map<const Op*, std::vector<uint32_t>> opOutputs_;
  std::map<const Op*, const hlk::KernelConfig*> opConfig_;
  std::map<std::string, std::vector<uint32_t>> queueBufs_; // cells row-major
  std::map<std::tuple<uint32_t, DataFormat, double>, uint32_t> padding_; // by chip, format, value
  // ethernet_datacopy: per op, the relay chain pipes of each core, added
  // after the op's input pipes.
  std::map<const Op*, std::vector<PendingPipe>> ethernetPipes_;
  RelayChains chains_; // after bufs_ and pending_: it holds them

  std::string epochNote() const;
  uint32_t chipOfOp(const Op& op) const { return opChip_.at(&op); }
  static bool isEthernetDatacopy(const Op& op) { return op.type.value == "ethernet_datacopy"; }

  CoreCoord physical(const Op& op, int64_t r, int64_t c) const;
  uint32_t addBuf(Buf b) {
    bufs_.push_back(std::move(b));
    return static_cast<uint32_t>(bufs_.size() - 1);
  }

  void fail(const std::string& rule, SourceLoc loc, const std::string& message, const std::vector<std::string>& notes = {});

  // ------------------------------------------------------------ several chips
  // (relays.cpp: replicas of buffers on other chips, ethernet_datacopy)

  bool multiChip() const { return chains_.multiChip(); }
  std::string chipPrefix(const Op& op) const { return multiChip() ? "chip " + std::to_string(chipOfOp(op)) + " " : ""; }
  std::string where(uint32_t h) const { return chains_.where(h); }
  bool onChip(std::vector<std::vector<SourceTile>>& lists, uint32_t chip, const Op& op, int input, SourceLoc loc,
              const std::string& queue = "") {
    return chains_.onChip(lists, chip, op, input, loc, queue);
  }
  void createEthernetDatacopyBuffers(const Op& op) {
    if (!chains_.ethernetDatacopy(op, chipOfOp(op), opInputs_[&op], opOutputs_[&op], ethernetPipes_[&op])) ok_ = false;
  }

  bool isGradient(const Op& op) const { return op.gradientOp.value; }

  // ------------------------------------------------------------ op buffers (op_buffers.cpp)
  void createOpBuffers(const Op& op, const hlk::KernelConfig& cfg);
  const Queue* gradientTarget(const Op& op);

  // ------------------------------------------------------------ queue buffers (op_buffers.cpp)
  const std::vector<uint32_t>& queueBuffers(const Queue& q);
  uint32_t paddingBuffer(DataFormat df, double value, const Op& consumer, uint32_t chip);

  // ------------------------------------------------------------ tile maps (input_pipes.cpp)
  struct Producer {
    std::string name;
    formats::Blocking blocking;
    TensorShape shape;
    std::vector<uint32_t> cells;
    DataFormat df = DataFormat::Float16_b;
    const Queue* queue = nullptr;
  };

  // Ethernet hops between an input's producer (op or queue) and its op.
  size_t inputHops(const Op& op, size_t input) const {
    const std::string& name = op.inputs[input].name;
    std::optional<uint32_t> from;
    if (auto q = sh_.queues.find(name); q != sh_.queues.end()) from = chipOf(*q->second);
    else if (auto o = opsByName_.find(name); o != opsByName_.end()) from = chipOfOp(*o->second);
    if (!from || *from == chipOfOp(op)) return 0;
    const size_t n = sh_.cluster.route(*from, chipOfOp(op)).size();
    return n > 1 ? n - 1 : 0;
  }
  std::optional<Producer> producerOf(const Op& consumer, size_t input);
  void buildInputPipes(const Op& op, size_t input);
  static std::string coresText(const std::vector<CoreCoord>& cs);
  std::vector<std::vector<int64_t>> rectangles(const Op& op, const std::vector<int64_t>& members);
  void buildQueueWrite(const Queue& q, const Op& op);
  void checkUnconsumed();

  // ------------------------------------------------------------ time multiplexing (time_multiplex.cpp)
  uint32_t sendingCore(const PendingPipe& p, bool* single = nullptr) const;
  void timeMultiplex();

  // Two pipes may be time slots of one pipe when neither destination waits
  // for the other: different ops, neither downstream of the other in the
  // epoch, or the same op input on different cores.
  bool independentSlots(const PendingPipe& a, const PendingPipe& b) {
    if (a.op == b.op) return a.input == b.input;
    return !downstream(*a.op).count(b.op) && !downstream(*b.op).count(a.op);
  }

  const std::set<const Op*>& downstream(const Op& op);
  std::map<const Op*, std::set<const Op*>> downstream_;

  std::set<const Op*> opsReadOnChip() const;
  bool sparseActivationsFromDram(const PendingPipe& p) const;

  // ------------------------------------------------------------ finishing (finish_epoch.cpp)
  struct SourceStats {
    int64_t gcd = 0;
    bool inOrderOnce = true; // every reading pipe reads [0, T) once, in order
    std::vector<size_t> pipes; // reading pipes (pending index), ascending, unique
  };

  void finish();
  std::map<uint32_t, std::vector<size_t>> dramReaders_;

  int64_t dramReadChunk(uint32_t h, int64_t chunk, const SourceStats& s) const;
  void fitL1();
  std::map<uint64_t, uint64_t> relayRingBytes() const;

  // ------------------------------------------------------------ resources (resource_check.cpp)
  struct CoreUse {
    const Op* op = nullptr;
    uint64_t l1 = 0;
    std::vector<uint32_t> buffers;
    uint32_t forkStreams = 0, relayStreams = 0, mcast = 0, dramIn = 0, dramOut = 0;
    uint64_t relayBytes = 0;  // rings of pipegen's extra streams (relayRingBytes)
    int64_t buffer = -1;      // a buffer on the core (names it in messages)
  };

  // Bytes free for data in the L1 of a core (worker or ethernet).
  uint64_t l1Limit(uint64_t key) const {
    return ethKey(key) ? sh_.out.limits.ethL1DataBytes : sh_.out.limits.l1DataBytes;
  }

  // A core of the cluster: chip, worker or ethernet core, coordinates
  // (worker cores of chip 0 in row-major order first).
  uint64_t coreKey(uint32_t h) const {
    const Buffer& d = bufs_[h].doc;
    return (uint64_t{d.chipId} << 40) | (uint64_t{d.ethernetChan.has_value()} << 39) | (uint64_t{d.core.r} << 16) | d.core.c;
  }
  static bool ethKey(uint64_t key) { return (key >> 39) & 1; }

  void checkResources();
  static std::string hexText(uint64_t v);
  static std::string bufferRole(const Buffer& d);

  // ------------------------------------------------------------ output (epoch_builder.cpp)
  void emit(PipegenYaml& yaml);
  void recordAccess();
};

} // namespace tessera::pipe::build
