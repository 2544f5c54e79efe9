// net2pipe's core: for one temporal epoch, the buffers of every op core and
// queue cell, the tile lists each consumer buffer needs (tile maps), the
// pipes that carry them (gathers, multicasts), the chunking of the source
// buffers, and the resource checks. docs/net2pipe.md describes every rule.
#include "pipe/net2pipe.hpp"

#include "device/arch_params.hpp"
#include "device/device_contract.h"
#include "formats/blocking.hpp"
#include "netlist/blocking.hpp"
#include "hlk/config.hpp"
#include "netlist/shape.hpp"
#include "netlist/text.hpp"
#include "pipe/pcie.hpp"
#include "pipe/dram_relays.hpp"
#include "pipe/mcast_split.hpp"
#include "pipe/period_slots.hpp"
#include "pipe/relays.hpp"
#include "pipe/tile_map.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>

namespace tessera::pipe {

using namespace netlist;
using namespace build;

Limits limitsFor(const ValidationTarget& target) {
  Limits l;
  const uint64_t l1 = target.device->workerL1Size ? target.device->workerL1Size : archParams(target.arch).defaultWorkerL1Size;
  l.l1DataBytes = l1 > contract::kDataBufferBase ? l1 - contract::kDataBufferBase : 0;
  l.ethL1DataBytes = target.device->ethL1Size > kEthDataBufferBase ? target.device->ethL1Size - kEthDataBufferBase : 0;
  l.streamsPerCore = static_cast<uint32_t>(archParams(target.arch).maxStreamsPerCore);
  l.mcastStreamsPerCore = 4; // BUDA's per-core resource tracker (net2pipe CoreResources) on every arch
  return l;
}

namespace {

constexpr uint32_t kDramCore = 255; // core_coordinates of DRAM and host buffers

std::string cellText(int64_t r, int64_t c) { return "r = " + std::to_string(r) + ", c = " + std::to_string(c); }

int64_t gcd64(int64_t a, int64_t b) { return std::gcd(a, b); }

int64_t entryTiles(const formats::Blocking& b) { return b.tilesPerCore(); }

class EpochBuilder {
public:
  EpochBuilder(Shared& sh, const TemporalEpoch& epoch)
      : sh_(sh), nl_(sh.nl), diags_(sh.diags), epoch_(epoch), graph_(epoch.firstGraph()),
        inputCount_(graph_.inputCount.present() ? graph_.inputCount.value : 1),
        chains_(sh, bufs_, pending_, inputCount_,
                [this](const std::string& rule, SourceLoc loc, const std::string& message,
                       const std::vector<std::string>& notes) { fail(rule, loc, message, notes); }) {}

  bool build(PipegenYaml& yaml) {
    for (const Graph* g : epoch_.graphs) {
      const int64_t count = g->inputCount.present() ? g->inputCount.value : 1;
      // One epoch moves the same number of inputs through every buffer.
      if (count != inputCount_)
        fail("pipe-unsupported", g->inputCount.present() ? g->inputCount.loc : g->loc,
             "graph " + quote(g->name) + " has input_count " + std::to_string(count) + " but graph " +
                 quote(graph_.name) + ", of the same temporal epoch, has " + std::to_string(inputCount_));
      for (const Op& op : g->ops) {
        ops_.push_back(&op);
        opsByName_.emplace(op.name, &op);
        opChip_.emplace(&op, chipOf(*g));
      }
    }
    if (!ok_) return false;
    for (const Op* op : ops_) {
      if (isEthernetDatacopy(*op)) {
        createEthernetDatacopyBuffers(*op);
        continue;
      }
      auto& cfg = sh_.configs[op];
      if (!cfg) {
        ok_ = false;
        continue;
      }
      createOpBuffers(*op, *cfg);
    }
    if (!ok_) return false;
    // Inputs by increasing chip-to-chip hop count, as BUDA's router takes
    // chip-to-chip pipes: short crossings get the direct links, long chains
    // then route around what they left (LinkPlanner::route). Otherwise in
    // op order.
    std::vector<std::tuple<size_t, size_t, size_t>> inputs;  // (hops, op, input)
    for (size_t k = 0; k < ops_.size(); ++k)
      for (size_t i = 0; i < ops_[k]->inputs.size(); ++i) inputs.push_back({inputHops(*ops_[k], i), k, i});
    std::stable_sort(inputs.begin(), inputs.end(),
                     [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
    for (auto [hops, k, i] : inputs) buildInputPipes(*ops_[k], i);
    for (const Queue& q : nl_.queues) {
      auto it = opsByName_.find(q.input.value);
      if (it != opsByName_.end()) buildQueueWrite(q, *it->second);
    }
    if (!chains_.unrouted()) checkUnconsumed(); // an output whose chain has no route was not read: no second error
    if (!ok_) return false;
    // A sparse matmul pops its activations strip by strip as its own rows'
    // encoding says, so the cores of one op do not keep pace with each
    // other: a multicast would hold every core to the slowest and, with a
    // join of their outputs on chip, close a cycle of full buffers
    // (docs/net2pipe.md "Sparse matmul activations"). From DRAM each core
    // then reads its own.
    const std::set<const Op*> readOnChip = opsReadOnChip();
    splitMulticastsWhere(
        pending_,
        [&](const PendingPipe& p) { return readOnChip.count(p.op) && sparseActivationsFromDram(p); },
        "sparse matmul activations: each core reads its own at its own pace");
    timeMultiplex();
    splitExcessMulticasts(pending_, sh_.out.limits.mcastStreamsPerCore, [this](const PendingPipe& p, bool& single) {
      return coreKey(sendingCore(p, &single));
    });
    // A packer with more readers than its core has streams serves them in
    // turn when each takes its own part of the input (period_slots.hpp).
    slotSuccessivePeriods(
        pending_, bufs_, sh_.out.limits.streamsPerCore,
        [this](uint32_t h) {
          uint32_t n = 0; // one stream per buffer of the core
          for (size_t o = 0; o < bufs_.size(); ++o)
            n += bufs_[o].place == Buf::Place::Core && coreKey(static_cast<uint32_t>(o)) == coreKey(h);
          return n;
        },
        [this](const PendingPipe& a, const PendingPipe& b) { return independentSlots(a, b); });
    DramRelayContext relays{sh_, bufs_, pending_, inputCount_, sh_.out.limits.dramInputStreamsPerCore,
                            sh_.out.limits.l1DataBytes, [this](const PendingPipe& p) { return sendingCore(p); }};
    relayExcessDramReads(relays);
    finish();
    checkResources();
    if (!ok_) return false;
    emit(yaml);
    return true;
  }

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

  std::string epochNote() const {
    if (epoch_.graphs.size() == 1)
      return "temporal epoch " + std::to_string(epoch_.id) + " (graph " + quote(graph_.name) + ")";
    std::string names;
    for (const Graph* g : epoch_.graphs) names += (names.empty() ? "" : ", ") + quote(g->name);
    return "temporal epoch " + std::to_string(epoch_.id) + " (graphs " + names + ")";
  }

  uint32_t chipOfOp(const Op& op) const { return opChip_.at(&op); }
  static bool isEthernetDatacopy(const Op& op) { return op.type.value == "ethernet_datacopy"; }

  CoreCoord physical(const Op& op, int64_t r, int64_t c) const {
    const Dim2 loc = op.gridLoc.value;
    if (op.gridTranspose.value) return CoreCoord{static_cast<uint32_t>(loc.r + c), static_cast<uint32_t>(loc.c + r)};
    return CoreCoord{static_cast<uint32_t>(loc.r + r), static_cast<uint32_t>(loc.c + c)};
  }

  uint32_t addBuf(Buf b) {
    bufs_.push_back(std::move(b));
    return static_cast<uint32_t>(bufs_.size() - 1);
  }

  void fail(const std::string& rule, SourceLoc loc, const std::string& message, const std::vector<std::string>& notes = {}) {
    auto d = diags_.error(rule, loc, message);
    for (const auto& n : notes) d.note(n);
    d.note(epochNote());
    ok_ = false;
  }

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

  // ------------------------------------------------------------ op buffers
  void createOpBuffers(const Op& op, const hlk::KernelConfig& cfg) {
    opConfig_[&op] = &cfg;
    const Dim2 grid = op.gridSize.value;
    const int64_t cores = grid.r * grid.c;
    auto& ins = opInputs_[&op];
    ins.assign(op.inputs.size(), std::vector<uint32_t>(static_cast<size_t>(cores), 0));
    auto& outs = opOutputs_[&op];
    outs.assign(static_cast<size_t>(cores), 0);
    const Queue* gradientQueue = nullptr;
    if (isGradient(op)) {
      gradientQueue = gradientTarget(op);
      if (!gradientQueue) return;
    }
    const int64_t outTiles = op.t.value * op.mblock.value.r * op.mblock.value.c * op.ublock.value.r * op.ublock.value.c;
    const int64_t mblockTiles = op.mblock.value.r * op.mblock.value.c * op.ublock.value.r * op.ublock.value.c;
    const int64_t ublockTiles = op.ublock.value.r * op.ublock.value.c;
    const bool untilize = op.untilizeOutput.value;
    for (int64_t r = 0; r < grid.r; ++r)
      for (int64_t c = 0; c < grid.c; ++c) {
        const size_t core = static_cast<size_t>(r * grid.c + c);
        const CoreCoord pc = physical(op, r, c);
        for (const hlk::OperandInfo& o : cfg.operands) {
          Buf b;
          b.op = &op;
          b.category = 0;
          b.orderKey = bufs_.size();
          Buffer& d = b.doc;
          d.uniqid = sh_.newId();
          d.mdOpName = op.name;
          d.id = static_cast<uint32_t>(o.operand);
          d.chipId = chipOfOp(op);
          d.core = pc;
          d.dataFormat = std::string(dataFormatName(o.df));
          switch (o.role) {
          case hlk::OperandRole::Input: {
            const size_t i = static_cast<size_t>(o.index);
            d.bufferType = BufferType::Unpacker;
            d.comment = "Op " + op.name + ": " + coreText(pc) + ", kernel input buf " + std::to_string(i) + ", from " +
                        op.inputs[i].name;
            const int64_t tiles = o.layout ? o.layout->t * o.layout->blockTiles() : 0;
            d.tilesPerInput = static_cast<uint32_t>(tiles);
            d.epochTiles = static_cast<uint32_t>(tiles * inputCount_);
            int64_t size = 2 * o.minTiles;
            if (i < op.inputBufMinSizeTiles.size()) size = std::max(size, op.inputBufMinSizeTiles[i]);
            d.sizeTiles = static_cast<uint32_t>(size);
            b.minSize = o.minTiles;
            if (i < op.inputBufMinSizeTiles.size()) b.minSize = std::max(b.minSize, op.inputBufMinSizeTiles[i]);
            b.granule = std::max<int64_t>(1, o.minTiles);
            d.tileSize = tileBytes(o.df, false, o.tile);
            if (o.tile != Dim2{32, 32}) d.dataFormat = std::string(dataFormatName(o.df));  // size alone is ambiguous
            d.tileClearGranularity = static_cast<uint32_t>(o.minTiles);
            d.overlayBlobSize = op.overlaySize.present() ? static_cast<uint32_t>(op.overlaySize.value) : 0;
            ins[i][core] = addBuf(std::move(b));
            break;
          }
          case hlk::OperandRole::Output: {
            d.tilesPerInput = static_cast<uint32_t>(outTiles);
            d.epochTiles = static_cast<uint32_t>(outTiles * inputCount_);
            d.ublockRt = static_cast<uint32_t>(op.ublock.value.r);
            d.ublockCt = static_cast<uint32_t>(op.ublock.value.c);
            d.mblockM = static_cast<uint32_t>(op.mblock.value.r);
            d.mblockN = static_cast<uint32_t>(op.mblock.value.c);
            d.mblockK = op.type.value == "matmul" && op.attributes.mK.present() ? static_cast<uint32_t>(op.attributes.mK.value) : 1;
            if (gradientQueue) {
              // Accumulates in L1 for the whole epoch: the ram cell this core
              // owns is loaded at epoch start and written back at its end.
              const size_t qb = sh_.queueFirstBuffer.at(gradientQueue->name) + core;
              const QueueBufferInfo& info = sh_.out.queueBuffers[qb];
              d.bufferType = BufferType::Other;
              d.bufferTypeText = "gradient_op";
              d.comment = "Op " + op.name + ": " + coreText(pc) + ", kernel output buf, gradient accumulation in " +
                          gradientQueue->name + ": " + cellText(r, c);
              d.sizeTiles = static_cast<uint32_t>(outTiles);
              b.minSize = outTiles;
              d.tileSize = tileBytes(o.df, false, o.tile);
            if (o.tile != Dim2{32, 32}) d.dataFormat = std::string(dataFormatName(o.df));  // size alone is ambiguous
              d.scatterGatherNumTiles = static_cast<uint32_t>(outTiles);
              d.dramBufFlag = true;
              d.writeDramBufFlag = true;
              d.dramIoAllowOverwrite = true;
              d.dramIoSkipFlowCtrl = true;
              d.dramRamFlag = gradientQueue->type.value == IoType::Ram;
              d.dramChan = static_cast<uint32_t>(info.channel);
              d.dramAddr = info.address;
              d.qSlots = static_cast<uint32_t>(gradientQueue->entries.value);
              outs[core] = addBuf(std::move(b));
              break;
            }
            d.bufferType = BufferType::Packer;
            d.comment = "Op " + op.name + ": " + coreText(pc) + ", kernel output buf";
            const int64_t bufMb = op.bufSizeMb.present() ? op.bufSizeMb.value : 1;
            d.sizeTiles = static_cast<uint32_t>(std::max(bufMb * mblockTiles, o.minTiles));
            d.tileSize = tileBytes(o.df, untilize, o.tile);
            if (o.tile != Dim2{32, 32}) d.dataFormat = std::string(dataFormatName(o.df));
            if (untilize) {
              d.untilizedOutput = true;
              d.untilizedOutputFullRDim = static_cast<uint32_t>(grid.r * op.mblock.value.r * op.ublock.value.r);
              d.untilizedOutputFullCDim = static_cast<uint32_t>(grid.c * op.mblock.value.c * op.ublock.value.c);
              d.untilizedOutputRDim = static_cast<uint32_t>(op.mblock.value.r * op.ublock.value.r);
              d.untilizedOutputCDim = static_cast<uint32_t>(op.mblock.value.c * op.ublock.value.c);
              d.untilizedOutputZDim = static_cast<uint32_t>(op.t.value);
              if (o.tile != Dim2{32, 32}) {  // BUDA's fields; the stream engine places rows by them
                d.extra.push_back({"untilized_output_tile_dim_r", std::to_string(o.tile.r), {}});
                d.extra.push_back({"untilized_output_tile_dim_c", std::to_string(o.tile.c), {}});
              }
            }
            b.packer = true;
            // An untilizing packer publishes stripes (hlk::Layout::untilizeStripeTiles).
            b.ublockTiles = untilize ? o.minTiles : ublockTiles;
            b.minSize = o.minTiles;
            b.granule = b.ublockTiles;
            outs[core] = addBuf(std::move(b));
            break;
          }
          case hlk::OperandRole::Intermediate:
          case hlk::OperandRole::Spill: {
            d.bufferType = BufferType::Intermediate;
            d.comment = "Op " + op.name + ": " + coreText(pc) + ", kernel intermediate buf " + std::to_string(o.operand - 24) +
                        (o.role == hlk::OperandRole::Spill ? " (partial sums)" : "");
            d.sizeTiles = static_cast<uint32_t>(o.minTiles);
            b.minSize = o.minTiles;
            d.scatterGatherNumTiles = static_cast<uint32_t>(o.minTiles);
            // BUDA's pipegen2 sends an intermediate's epoch_tiles to itself:
            // 0 leaves its phases uncalculated (docs/pipegen-yaml.md).
            d.epochTiles = d.scatterGatherNumTiles;
            d.tileSize = tileBytes(o.df, false, o.tile);
            if (o.tile != Dim2{32, 32}) d.dataFormat = std::string(dataFormatName(o.df));  // size alone is ambiguous
            d.ublockRt = static_cast<uint32_t>(op.ublock.value.r);
            d.ublockCt = static_cast<uint32_t>(op.ublock.value.c);
            d.mblockM = static_cast<uint32_t>(op.mblock.value.r);
            d.mblockN = static_cast<uint32_t>(op.mblock.value.c);
            d.mblockK = op.type.value == "matmul" && op.attributes.mK.present() ? static_cast<uint32_t>(op.attributes.mK.value) : 1;
            addBuf(std::move(b));
            break;
          }
          }
        }
      }
  }

  // The ram a gradient op accumulates into: exactly one queue, written by
  // it, with the op's grid and blocking (each core owns one cell).
  const Queue* gradientTarget(const Op& op) {
    std::vector<const Queue*> targets;
    for (const Queue& q : nl_.queues)
      if (q.input.value == op.name) targets.push_back(&q);
    bool readByOp = false;
    for (const Op* other : ops_)
      for (const Operand& in : other->inputs) readByOp |= in.name == op.name;
    if (targets.size() != 1 || readByOp) {
      fail("pipe-unsupported", op.loc,
           "op " + quote(op.name) + ": a gradient op must write exactly one queue and feed no op (it has " +
               std::to_string(targets.size()) + " output queue" + (targets.size() == 1 ? "" : "s") +
               (readByOp ? " and feeds ops" : "") + ")");
      return nullptr;
    }
    const Queue& q = *targets.front();
    if (chipOf(q) != chipOfOp(op)) {
      fail("pipe-unsupported", op.loc,
           "gradient op " + quote(op.name) + " on chip " + std::to_string(chipOfOp(op)) + " accumulates in place into queue " +
               quote(q.name) + " on chip " + std::to_string(chipOf(q)) + ": a gradient op's ram must be on its own chip");
      return nullptr;
    }
    const formats::Blocking ob = netlist::blockingOf(op), qb = netlist::blockingOf(q);
    if (ob.gridR != qb.gridR || ob.gridC != qb.gridC || ob.t != qb.t || ob.mblockR != qb.mblockR || ob.mblockC != qb.mblockC ||
        ob.ublockR != qb.ublockR || ob.ublockC != qb.ublockC || ob.order != qb.order || q.location.value != IoLocation::Dram) {
      fail("pipe-gradient-layout", op.loc,
           "gradient op " + quote(op.name) + " accumulates in place, so queue " + quote(q.name) +
               " must be in DRAM with the op's grid, t, mblock, ublock and ublock_order",
           {"queue " + quote(q.name) + ": grid [" + std::to_string(qb.gridR) + ", " + std::to_string(qb.gridC) + "], t " +
            std::to_string(qb.t) + ", mblock [" + std::to_string(qb.mblockR) + ", " + std::to_string(qb.mblockC) +
            "], ublock [" + std::to_string(qb.ublockR) + ", " + std::to_string(qb.ublockC) + "]"});
      return nullptr;
    }
    return &q;
  }

  // ------------------------------------------------------------ queue buffers
  const std::vector<uint32_t>& queueBuffers(const Queue& q) {
    auto it = queueBufs_.find(q.name);
    if (it != queueBufs_.end()) return it->second;
    std::vector<uint32_t> cells;
    const size_t first = sh_.queueFirstBuffer.at(q.name);
    const formats::Blocking qb = netlist::blockingOf(q);
    const int64_t tiles = entryTiles(qb);
    for (int64_t r = 0; r < qb.gridR; ++r)
      for (int64_t c = 0; c < qb.gridC; ++c) {
        const size_t idx = first + static_cast<size_t>(r * qb.gridC + c);
        const QueueBufferInfo& info = sh_.out.queueBuffers[idx];
        Buf b;
        b.place = Buf::Place::Dram;
        b.category = 1;
        b.orderKey = idx;
        b.queue = &q;
        b.queueBuffer = idx;
        Buffer& d = b.doc;
        d.uniqid = info.uniqid;
        d.mdOpName = q.name;
        d.comment = "Queue " + q.name + ": " + cellText(r, c);
        d.chipId = info.chip;
        d.core = CoreCoord{kDramCore, kDramCore};
        d.tilesPerInput = static_cast<uint32_t>(tiles);
        d.sizeTiles = static_cast<uint32_t>(tiles);
        d.tileSize = tileBytes(q.df.value, false, tileOf(q.tileDim));
        if (tileOf(q.tileDim) != Dim2{32, 32}) d.dataFormat = std::string(dataFormatName(q.df.value));
        d.dramIoFlagIsRemote = info.host;
        d.dramChan = static_cast<uint32_t>(info.channel);
        d.dramAddr = info.address;
        d.qSlots = static_cast<uint32_t>(q.entries.value);
        d.dramRamFlag = q.type.value == IoType::Ram;
        d.ublockRt = static_cast<uint32_t>(qb.ublockR);
        d.ublockCt = static_cast<uint32_t>(qb.ublockC);
        d.mblockM = static_cast<uint32_t>(qb.mblockR);
        d.mblockN = static_cast<uint32_t>(qb.mblockC);
        d.dataFormat = std::string(dataFormatName(q.df.value));
        cells.push_back(addBuf(std::move(b)));
      }
    return queueBufs_.emplace(q.name, std::move(cells)).first->second;
  }

  // Constant tiles for the pipes of `chip` (padding buffers are in no
  // memory, but a pipe reads only its own chip's buffers).
  uint32_t paddingBuffer(DataFormat df, double value, const Op& consumer, uint32_t chip) {
    auto key = std::make_tuple(chip, df, value);
    auto it = padding_.find(key);
    if (it != padding_.end()) return it->second;
    Buf b;
    b.place = Buf::Place::Padding;
    b.category = 2;
    b.orderKey = padding_.size();
    Buffer& d = b.doc;
    d.uniqid = sh_.newId();
    d.mdOpName = consumer.name;
    d.bufferType = BufferType::Other;
    d.bufferTypeText = "unknown";
    d.isPadding = true;
    d.paddingValue = value;
    char text[64];
    std::snprintf(text, sizeof text, "%g", value);
    d.comment = "Padding Buffer: constant " + std::string(text) + " tiles in " + std::string(dataFormatName(df));
    d.chipId = chip;
    d.core = CoreCoord{kDramCore, kDramCore};
    d.tilesPerInput = 1;
    d.sizeTiles = 1;
    d.epochTiles = 1;
    d.scatterGatherNumTiles = 1;
    d.isScatter = true;
    d.replicate = 1;
    d.tileSize = tileBytes(df, false);
    d.dataFormat = std::string(dataFormatName(df));
    const uint32_t h = addBuf(std::move(b));
    padding_.emplace(key, h);
    return h;
  }

  // ------------------------------------------------------------ tile maps
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

  std::optional<Producer> producerOf(const Op& consumer, size_t input) {
    const Operand& in = consumer.inputs[input];
    Producer p;
    p.name = in.name;
    if (auto q = sh_.queues.find(in.name); q != sh_.queues.end()) {
      p.queue = q->second;
      p.blocking = netlist::blockingOf(*p.queue);
      p.df = p.queue->df.value;
      p.cells = queueBuffers(*p.queue);
    } else if (auto o = opsByName_.find(in.name); o != opsByName_.end()) {
      const Op& prod = *o->second;
      if (prod.untilizeOutput.value || isGradient(prod)) {
        fail("pipe-unsupported", in.loc,
             "op " + quote(consumer.name) + " input " + std::to_string(input) + " reads op " + quote(prod.name) + ", whose " +
                 (isGradient(prod) ? "gradient accumulation" : "untilized output") + " no op can read");
        return std::nullopt;
      }
      p.blocking = netlist::blockingOf(prod);
      p.df = prod.outDf.value;
      p.cells = opOutputs_.at(&prod); // an ethernet_datacopy's: its buffers on the destination chip
    } else {
      return std::nullopt; // the validator reported it
    }
    p.shape = TensorShape{p.blocking.t, p.blocking.rowTiles(), p.blocking.colTiles()};
    return p;
  }

  void buildInputPipes(const Op& op, size_t input) {
    const bool ethernet = isEthernetDatacopy(op);
    KernelLayout layout;
    if (ethernet) {
      // No kernel: each core's input relay holds that core's share of the
      // output, in the output's order (a copy).
      layout = KernelLayout{op.t.value, op.mblock.value, op.ublock.value, op.order()};
    } else {
      const hlk::KernelConfig& cfg = *opConfig_.at(&op);
      const hlk::OperandInfo* info = nullptr;
      for (const auto& o : cfg.operands)
        if (o.role == hlk::OperandRole::Input && o.index == static_cast<int>(input)) info = &o;
      if (!info || !info->layout) return; // an input the kernel does not read: no buffer, no pipe
      const hlk::Layout& hl = *info->layout;
      layout = KernelLayout{hl.t, hl.mblock, hl.ublock, hl.order};
    }
    auto prod = producerOf(op, input);
    if (!prod) {
      ok_ = false;
      return;
    }
    const Operand& in = op.inputs[input];
    std::string why;
    auto map = OperandMap::build(prod->shape, in.unpad, in.tms, in.pad, &why);
    if (!map) {
      fail("pipe-tm", in.tmsLoc.valid() ? in.tmsLoc : in.loc,
           "op " + quote(op.name) + " input " + std::to_string(input) + ": " + why);
      return;
    }
    const Dim2 grid = op.gridSize.value;
    const int64_t cores = grid.r * grid.c;
    std::vector<std::vector<SourceTile>> lists(static_cast<size_t>(cores));
    for (int64_t r = 0; r < grid.r; ++r)
      for (int64_t c = 0; c < grid.c; ++c) {
        auto origin = coreOrigin(layout, map->operandShape(), grid.r, grid.c, r, c, &why);
        if (!origin) {
          fail("pipe-kernel-layout", in.loc,
               "op " + quote(op.name) + " input " + std::to_string(input) + " (" + map->operandShape().str() + " from " +
                   quote(in.name) + "): " + why);
          return;
        }
        std::vector<SourceTile>& list = lists[static_cast<size_t>(r * grid.c + c)];
        const std::vector<TileRef> tiles = consumerTiles(layout, origin->row, origin->col);
        list.reserve(tiles.size());
        for (const TileRef& t : tiles) {
          const TileSource src = map->source(t);
          if (src.padding) {
            list.push_back(SourceTile{paddingBuffer(prod->df, src.padValue, op, chipOfOp(op)), 0});
            continue;
          }
          const TileLocation loc = locateTile(prod->blocking, src.tile);
          list.push_back(SourceTile{prod->cells[static_cast<size_t>(loc.coreR * prod->blocking.gridC + loc.coreC)], loc.index});
        }
      }
    // Producer buffers on another chip: read their replica on this one
    // (without ethernet: queues directly through the PCIe core, op buffers
    // through PCIe relays, pcie.hpp).
    if (!pcieReads(sh_, bufs_, lists, chipOfOp(op)) && !onChip(lists, chipOfOp(op), op, static_cast<int>(input), in.loc))
      return;
    const std::vector<uint32_t>& dests = opInputs_.at(&op)[input];
    if (ethernet) {
      // One pipe into each core's input relay, then its chain.
      for (int64_t k = 0; k < cores; ++k) {
        PendingPipe p;
        p.tiles = std::move(lists[static_cast<size_t>(k)]);
        p.op = &op;
        p.input = static_cast<int>(input);
        p.outputs.push_back(dests[static_cast<size_t>(k)]);
        p.comment = "Op: " + op.name + ", input " + std::to_string(input) + ", from " + in.name + " to core " +
                    std::to_string(k) + " at " + where(dests[static_cast<size_t>(k)]);
        pending_.push_back(std::move(p));
      }
      for (PendingPipe& p : ethernetPipes_[&op]) pending_.push_back(std::move(p));
      ethernetPipes_.erase(&op);
      return;
    }
    // Cores with the same list share one pipe (a multicast when they form a
    // rectangle of worker cores; else one pipe per row segment).
    // Groups in order of their first core; lists compared by hash first.
    struct Group {
      size_t list;                  // index into lists
      std::vector<int64_t> members; // op-grid core indices
    };
    std::vector<Group> groups;
    std::unordered_map<uint64_t, std::vector<size_t>> byHash;
    for (int64_t k = 0; k < cores; ++k) {
      const std::vector<SourceTile>& list = lists[static_cast<size_t>(k)];
      uint64_t h = 0xcbf29ce484222325ull;
      for (const SourceTile& t : list) {
        h = (h ^ t.source) * 0x100000001b3ull;
        h = (h ^ static_cast<uint64_t>(t.index)) * 0x100000001b3ull;
      }
      std::vector<size_t>& candidates = byHash[h];
      bool found = false;
      for (size_t g : candidates)
        if (lists[groups[g].list] == list) {
          groups[g].members.push_back(k);
          found = true;
          break;
        }
      if (!found) {
        candidates.push_back(groups.size());
        groups.push_back(Group{static_cast<size_t>(k), {k}});
      }
    }
    for (const Group& group : groups) {
      const std::vector<std::vector<int64_t>> parts = rectangles(op, group.members);
      for (size_t pi = 0; pi < parts.size(); ++pi) {
        const std::vector<int64_t>& part = parts[pi];
        PendingPipe p;
        if (pi + 1 == parts.size()) p.tiles = std::move(lists[group.list]);
        else p.tiles = lists[group.list];
        p.op = &op;
        p.input = static_cast<int>(input);
        std::vector<CoreCoord> cs;
        for (int64_t k : part) {
          p.outputs.push_back(dests[static_cast<size_t>(k)]);
          cs.push_back(bufs_[dests[static_cast<size_t>(k)]].doc.core);
        }
        p.comment = "Op: " + op.name + ", input " + std::to_string(input) + ", from " + in.name + " to " + chipPrefix(op) +
                    coresText(cs);
        pending_.push_back(std::move(p));
      }
    }
  }

  static std::string coresText(const std::vector<CoreCoord>& cs) {
    if (cs.size() <= 4) {
      std::string s;
      for (size_t i = 0; i < cs.size(); ++i) s += (i ? " " : "") + coreText(cs[i]);
      return s + (cs.size() > 1 ? " (multicast)" : "");
    }
    return coreText(cs.front()) + ".." + coreText(cs.back()) + " (multicast to " + std::to_string(cs.size()) + " cores)";
  }

  // Splits cores (indices into the op grid) into sets a NOC multicast can
  // reach: the whole set when its worker cores fill their bounding
  // rectangle, else each run of adjacent cores along a worker row.
  std::vector<std::vector<int64_t>> rectangles(const Op& op, const std::vector<int64_t>& members) {
    const int64_t gc = op.gridSize.value.c;
    std::vector<std::pair<CoreCoord, int64_t>> pcs;
    uint32_t r0 = UINT32_MAX, r1 = 0, c0 = UINT32_MAX, c1 = 0;
    for (int64_t k : members) {
      CoreCoord p = physical(op, k / gc, k % gc);
      pcs.emplace_back(p, k);
      r0 = std::min(r0, p.r);
      r1 = std::max(r1, p.r);
      c0 = std::min(c0, p.c);
      c1 = std::max(c1, p.c);
    }
    std::sort(pcs.begin(), pcs.end(), [](const auto& a, const auto& b) {
      return a.first.r != b.first.r ? a.first.r < b.first.r : a.first.c < b.first.c;
    });
    if (uint64_t{r1 - r0 + 1} * uint64_t{c1 - c0 + 1} == pcs.size()) {
      std::vector<int64_t> all;
      for (const auto& pc : pcs) all.push_back(pc.second);
      return {all};
    }
    std::vector<std::vector<int64_t>> parts;
    for (size_t i = 0; i < pcs.size(); ++i) {
      if (i == 0 || pcs[i].first.r != pcs[i - 1].first.r || pcs[i].first.c != pcs[i - 1].first.c + 1) parts.emplace_back();
      parts.back().push_back(pcs[i].second);
    }
    return parts;
  }

  // An op writing a queue: each queue cell gathers its tiles, in the
  // queue's order, from the op's cores; an untilized output gathers, per t
  // slice, every core's block (row-major cores) into its one-cell queue.
  void buildQueueWrite(const Queue& q, const Op& op) {
    if (isGradient(op)) return; // accumulates in L1 (gradient_op buffers)
    const std::vector<uint32_t>& cells = queueBuffers(q);
    for (uint32_t h : cells) bufs_[h].written = true;
    const formats::Blocking qb = netlist::blockingOf(q), ob = netlist::blockingOf(op);
    const std::vector<uint32_t>& outs = opOutputs_.at(&op);
    // BUDA's convention: a written queue buffer carries its writer's
    // blocking (pipegen2 gives every stream of a core the same one).
    for (uint32_t h : cells) {
      Buffer& d = bufs_[h].doc;
      const Buffer& pk = bufs_[outs.front()].doc;
      d.ublockRt = pk.ublockRt, d.ublockCt = pk.ublockCt, d.mblockM = pk.mblockM, d.mblockN = pk.mblockN;
      d.mblockK = pk.mblockK;
    }
    const bool untilize = op.untilizeOutput.value;
    if (untilize) {
      for (uint32_t h : cells) {
        Buffer& d = bufs_[h].doc;
        const Buffer& pd = bufs_[outs.front()].doc;
        d.tileSize = pd.tileSize;
        d.untilizedOutput = true;
        d.untilizedOutputFullRDim = pd.untilizedOutputFullRDim;
        d.untilizedOutputFullCDim = pd.untilizedOutputFullCDim;
        d.untilizedOutputRDim = pd.untilizedOutputRDim;
        d.untilizedOutputCDim = pd.untilizedOutputCDim;
        d.untilizedOutputZDim = pd.untilizedOutputZDim;
        for (const ExtraField& e : pd.extra)
          if (e.key.rfind("untilized_output_tile_dim_", 0) == 0) d.extra.push_back(e);
      }
    }
    // A queue's input_tms apply on the way in: the cell's tiles are traced
    // back through them to the op's output. Nothing on that way works inside
    // a tile (no unpacker): no transpose, no tile_broadcast.
    for (const Tm& tm : q.inputTms)
      if (tm.kind == TmKind::Transpose || tm.kind == TmKind::TileBroadcast) {
        fail("pipe-unsupported", tm.loc.valid() ? tm.loc : q.inputTmsLoc,
             "queue " + quote(q.name) + ": a " + std::string(tmKindName(tm.kind)) +
                 " in input_tms (the tiles reach DRAM without an unpacker to change them)");
        return;
      }
    std::string why;
    auto map = OperandMap::build(TensorShape{ob.t, ob.rowTiles(), ob.colTiles()}, std::nullopt, q.inputTms, std::nullopt, &why);
    const TensorShape qs{qb.t, qb.rowTiles(), qb.colTiles()};
    if (!map || map->operandShape() != qs) {
      fail("pipe-tm", q.inputTmsLoc.valid() ? q.inputTmsLoc : q.loc,
           "queue " + quote(q.name) + " holds " + qs.str() + " but op " + quote(op.name) + " writes " +
               (map ? map->operandShape().str() : why));
      return;
    }
    if (untilize && !map->identity()) {
      fail("pipe-unsupported", q.inputTmsLoc, "queue " + quote(q.name) + ": input_tms on an untilized output");
      return;
    }
    // Without ethernet the op's own cores write through their PCIe core (pcie.hpp).
    const PcieWrite pcie = chipOf(q) != chipOfOp(op) ? pcieQueueWrite(sh_, q) : PcieWrite::None;
    const uint32_t writerChip = pcie == PcieWrite::None ? chipOf(q) : chipOfOp(op);
    for (int64_t r = 0; r < qb.gridR; ++r)
      for (int64_t c = 0; c < qb.gridC; ++c) {
        PendingPipe p;
        p.op = &op;
        p.toDram = true;
        p.outputs.push_back(cells[static_cast<size_t>(r * qb.gridC + c)]);
        std::set<uint32_t> from;
        if (untilize) {
          // Slice by slice, each core's block in turn: a gather of every
          // core's whole entry would hold the others' packers full until the
          // first finished (a hang when they share an input, as in BUDA's
          // packer_serial_fork tests).
          const int64_t block = ob.tilesPerCore() / std::max<int64_t>(1, ob.t);
          for (int64_t z = 0; z < ob.t; ++z)
            for (uint32_t h : outs)
              for (int64_t k = 0; k < block; ++k) p.tiles.push_back(SourceTile{h, z * block + k});
          from.insert(outs.begin(), outs.end());
        } else {
          for (const formats::TileCoord& tc : formats::coreTileOrder(qb, r, c)) {
            const TileSource src = map->source(TileRef{tc.t, tc.rt, tc.ct});
            if (src.padding) {
              p.tiles.push_back(SourceTile{paddingBuffer(op.outDf.value, src.padValue, op, writerChip), 0});
              continue;
            }
            const TileLocation loc = locateTile(ob, src.tile);
            const uint32_t h = outs[static_cast<size_t>(loc.coreR * ob.gridC + loc.coreC)];
            p.tiles.push_back(SourceTile{h, loc.index});
            from.insert(h);
          }
        }
        std::string src;
        if (chipOf(q) != chipOfOp(op) && pcie == PcieWrite::None) {
          // Written from the op's replicas on the queue's chip.
          std::vector<std::vector<SourceTile>> lists{std::move(p.tiles)};
          if (!onChip(lists, chipOf(q), op, -1, q.loc, q.name)) return;
          p.tiles = std::move(lists.front());
          std::set<uint32_t> relays;
          for (const SourceTile& t : p.tiles)
            if (bufs_[t.source].place == Buf::Place::Core) relays.insert(t.source);
          for (uint32_t h : relays) {
            if (src.size() > 200) {
              src += " ..";
              break;
            }
            src += (src.empty() ? "" : ", ") + where(h);
          }
        } else {
          std::vector<CoreCoord> cs;
          for (uint32_t h : from) cs.push_back(bufs_[h].doc.core);
          std::sort(cs.begin(), cs.end(), [](const CoreCoord& a, const CoreCoord& b) { return a.r != b.r ? a.r < b.r : a.c < b.c; });
          src = chipPrefix(op);
          for (size_t i = 0; i < cs.size() && i < 4; ++i) src += (i ? " " : "") + coreText(cs[i]);
          if (cs.size() > 4) src += " .. " + coreText(cs.back()) + " (" + std::to_string(cs.size()) + " cores)";
          if (pcie != PcieWrite::None) src += " through its PCIe core";
        }
        p.comment = "Queue: " + q.name + ", input 0, " + cellText(r, c) + ", from op " + op.name + " " + src;
        pending_.push_back(std::move(p));
      }
  }

  // An op output nothing reads would fill its packer buffer and stall.
  // BUDA's net2pipe stops here too ("Only drainer ops can have no outputs.";
  // its drainer op is a perf-only sink); its netlist parser accepts the file.
  void checkUnconsumed() {
    std::set<uint32_t> read;
    for (const PendingPipe& p : pending_)
      for (const SourceTile& t : p.tiles) read.insert(t.source);
    for (const Op* opp : ops_) {
      const Op& op = *opp;
      if (isGradient(op) || !opOutputs_.count(&op)) continue;
      bool any = false;
      for (uint32_t h : opOutputs_.at(&op)) any |= read.count(h) > 0;
      if (!any)
        fail("pipe-unconsumed-output", op.loc,
             "the output of op " + quote(op.name) + " is read by no op and written to no queue: its packer would fill and stall "
                 "(BUDA's net2pipe: \"Only drainer ops can have no outputs.\")");
    }
  }

  // ------------------------------------------------------------ time multiplexing
  // Where a pipe's sending stream runs: the source core when all its tiles
  // come from one core (`single`), else (DRAM, padding, a gather) the first
  // destination core, or for a DRAM write the first source core.
  // (A buffer on that core.)
  uint32_t sendingCore(const PendingPipe& p, bool* single = nullptr) const {
    std::set<uint64_t> srcCores;
    bool offCore = false;
    for (const SourceTile& t : p.tiles) {
      if (bufs_[t.source].place == Buf::Place::Core) srcCores.insert(coreKey(t.source));
      else offCore = true;
    }
    const bool one = !offCore && srcCores.size() == 1;
    if (single) *single = one;
    uint32_t firstSrc = p.tiles.front().source;
    for (const SourceTile& t : p.tiles)
      if (bufs_[t.source].place == Buf::Place::Core) {
        firstSrc = t.source;
        break;
      }
    return p.toDram || one ? firstSrc : p.outputs.front();
  }

  // A core sending more multicasts than it has multicast streams shares
  // one stream between multicasts that carry the same tiles from its
  // packer: one pipe whose nested output_list names each multicast as a time
  // slot (BUDA's time-multiplexed pipe). pipegen sends each pass of the list
  // whole to the next slot, so every slot receives the same tiles, one slot
  // after the other: slots must be different consumers none of which waits
  // for another (one op core reading two slots, or an op downstream of
  // another's output, would deadlock). Merges the largest sets first, only
  // until the core fits; checkResources reports what still does not.
  void timeMultiplex() {
    const uint32_t limit = sh_.out.limits.mcastStreamsPerCore;
    std::map<uint64_t, std::vector<size_t>> byCore; // multicast pipes per sending core
    std::map<uint64_t, uint32_t> count;
    for (size_t pi = 0; pi < pending_.size(); ++pi) {
      const PendingPipe& p = pending_[pi];
      if (p.toDram || !p.multicast()) continue;
      bool single = false;
      const uint64_t key = coreKey(sendingCore(p, &single));
      ++count[key];
      if (single && p.op) byCore[key].push_back(pi);
    }
    std::vector<bool> dropped(pending_.size(), false);
    for (auto& [key, pis] : byCore) {
      int64_t excess = static_cast<int64_t>(count[key]) - limit;
      if (excess <= 0) continue;
      // Classes of identical tile lists, in order of their first pipe.
      std::vector<std::vector<size_t>> classes;
      for (size_t pi : pis) {
        bool placed = false;
        for (auto& cl : classes)
          if (pending_[cl.front()].tiles == pending_[pi].tiles) {
            cl.push_back(pi);
            placed = true;
            break;
          }
        if (!placed) classes.push_back({pi});
      }
      // Within a class, the slots one stream can serve in turn.
      std::vector<std::vector<size_t>> sets;
      for (const auto& cl : classes) {
        std::vector<size_t> set;
        for (size_t pi : cl) {
          bool ok = true;
          for (size_t other : set) ok &= independentSlots(pending_[other], pending_[pi]);
          if (ok) set.push_back(pi);
        }
        if (set.size() > 1) sets.push_back(std::move(set));
      }
      std::stable_sort(sets.begin(), sets.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
      for (const auto& set : sets) {
        if (excess <= 0) break;
        // Only as many slots as needed (each slot merged saves one stream).
        const size_t take = std::min<size_t>(set.size(), static_cast<size_t>(excess) + 1);
        PendingPipe& first = pending_[set.front()];
        first.slots.push_back(first.outputs);
        std::string with;
        for (size_t k = 1; k < take; ++k) {
          PendingPipe& other = pending_[set[k]];
          first.slots.push_back(other.outputs);
          with += (k > 1 ? ", " : "") + other.op->name + " input " + std::to_string(other.input);
          dropped[set[k]] = true;
        }
        first.comment += "; time-multiplexed, " + std::to_string(take) + " slots, then " + with;
        excess -= static_cast<int64_t>(take) - 1;
      }
    }
    std::vector<PendingPipe> kept;
    kept.reserve(pending_.size());
    for (size_t pi = 0; pi < pending_.size(); ++pi)
      if (!dropped[pi]) kept.push_back(std::move(pending_[pi]));
    pending_ = std::move(kept);
  }

  // Two pipes may be time slots of one pipe when neither destination waits
  // for the other: different ops, neither downstream of the other in the
  // epoch, or the same op input on different cores.
  bool independentSlots(const PendingPipe& a, const PendingPipe& b) {
    if (a.op == b.op) return a.input == b.input;
    return !downstream(*a.op).count(b.op) && !downstream(*b.op).count(a.op);
  }

  // The ops of the epoch that read `op`'s output, directly or through other ops.
  const std::set<const Op*>& downstream(const Op& op) {
    auto it = downstream_.find(&op);
    if (it != downstream_.end()) return it->second;
    std::set<const Op*> seen;
    std::vector<const Op*> todo{&op};
    while (!todo.empty()) {
      const Op* cur = todo.back();
      todo.pop_back();
      for (const Op* other : ops_)
        for (const Operand& in : other->inputs)
          if (in.name == cur->name && seen.insert(other).second) todo.push_back(other);
    }
    return downstream_.emplace(&op, std::move(seen)).first->second;
  }

  std::map<const Op*, std::set<const Op*>> downstream_;

  // Ops whose output another op of the epoch reads (through on-chip pipes).
  std::set<const Op*> opsReadOnChip() const {
    std::set<const Op*> ops;
    for (const PendingPipe& p : pending_) {
      if (p.toDram) continue;
      for (const SourceTile& t : p.tiles)
        if (bufs_[t.source].packer && bufs_[t.source].op) ops.insert(bufs_[t.source].op);
    }
    return ops;
  }

  // Whether `p` feeds input 1 (the activations) of a sparse matmul with
  // tiles read from DRAM or host memory only (padding aside).
  bool sparseActivationsFromDram(const PendingPipe& p) const {
    if (!p.op || p.input != 1 || p.op->type.value != "matmul" || !p.op->attributes.identity.value) return false;
    bool dram = false;
    for (const SourceTile& t : p.tiles) {
      const Buf::Place place = bufs_[t.source].place;
      if (place == Buf::Place::Core) return false;
      dram |= place == Buf::Place::Dram;
    }
    return dram;
  }

  // ------------------------------------------------------------ finishing
  struct SourceStats {
    int64_t gcd = 0;
    bool inOrderOnce = true; // every reading pipe reads [0, T) once, in order
    std::vector<size_t> pipes; // reading pipes (pending index), ascending, unique
  };

  void finish() {
    // Queue buffers: how they are used this epoch.
    for (const PendingPipe& p : pending_) {
      if (p.toDram) continue;
      std::set<uint32_t> seen;
      for (const SourceTile& t : p.tiles) {
        Buf& b = bufs_[t.source];
        if (b.place != Buf::Place::Dram || !seen.insert(t.source).second) continue;
        if (epoch_.settingsOf(b.queue->name).prologue) {
          b.readProlog = true;
          if (b.prologFor.empty()) b.prologFor = p.op->name;
        } else {
          b.readStreamed = true;
        }
      }
    }
    for (Buf& b : bufs_)
      if (b.place == Buf::Place::Dram && b.written) b.writtenEpilogue = epoch_.settingsOf(b.queue->name).epilogue;

    std::vector<SourceStats> stats(bufs_.size());
    std::vector<std::vector<Run>> runs(pending_.size());
    for (size_t pi = 0; pi < pending_.size(); ++pi) {
      runs[pi] = toRuns(pending_[pi].tiles);
      std::map<uint32_t, int> runCount;
      for (size_t slot = 0; slot < pending_[pi].slotCount(); ++slot)
      for (const Run& r : runs[pi]) {
        SourceStats& s = stats[r.source];
        s.gcd = gcd64(gcd64(s.gcd, r.start), r.length);
        if (s.pipes.empty() || s.pipes.back() != pi) s.pipes.push_back(pi);
        const int n = ++runCount[r.source];
        if (n > 1 || r.start != 0 || r.length != static_cast<int64_t>(bufs_[r.source].doc.tilesPerInput)) s.inOrderOnce = false;
      }
    }
    // Packer windows: each reading pipe's order of this buffer's tiles.
    for (size_t pi = 0; pi < pending_.size(); ++pi) {
      std::map<uint32_t, std::vector<int64_t>> orders;
      const size_t passes = pending_[pi].successivePeriods ? 1 : pending_[pi].slotCount(); // each slot re-reads the list
      for (size_t slot = 0; slot < passes; ++slot)
        for (const SourceTile& t : pending_[pi].tiles)
          if (bufs_[t.source].packer && !stats[t.source].inOrderOnce && !chains_.onEthernet(t.source))
            orders[t.source].push_back(t.index);
      for (auto& [h, order] : orders) bufs_[h].window = std::max(bufs_[h].window, reorderWindow(order));
    }
    // Relays are FIFOs: a chain's origin keeps its readers' windows.
    if (multiChip()) chains_.originWindows(pending_);
    // Packers read out of order grow to their window; then every core's
    // buffers must fit its L1 (fitL1 shrinks them towards their minimum).
    for (Buf& b : bufs_) {
      if (!b.packer) continue;
      Buffer& d = b.doc;
      const int64_t window = (b.window + b.ublockTiles - 1) / b.ublockTiles * b.ublockTiles;
      b.minSize = std::max(b.minSize, window);
      if (window > static_cast<int64_t>(d.sizeTiles)) {
        d.comment += " (size grown from " + std::to_string(d.sizeTiles) + " to " + std::to_string(window) +
                     " tiles: read out of order)";
        d.sizeTiles = static_cast<uint32_t>(window);
      }
    }
    fitL1();
    for (size_t h = 0; h < bufs_.size(); ++h) {
      Buf& b = bufs_[h];
      Buffer& d = b.doc;
      const SourceStats& s = stats[h];
      b.hasReaders = !s.pipes.empty();
      const int64_t T = d.tilesPerInput;
      if (b.packer) {
        if (s.inOrderOnce) {
          d.scatterGatherNumTiles = static_cast<uint32_t>(gcd64(T, d.sizeTiles));
        } else {
          d.isScatter = true;
          d.scatterGatherNumTiles = static_cast<uint32_t>(gcd64(gcd64(s.gcd, T), d.sizeTiles));
          d.replicate = static_cast<uint32_t>((b.period ? b.period : T) / d.scatterGatherNumTiles);
        }
      } else if (b.place == Buf::Place::Dram) {
        const bool read = b.readProlog || b.readStreamed;
        d.bufferType = b.readProlog && !b.readStreamed && !b.written ? BufferType::DramProlog : BufferType::DramIo;
        if (b.readProlog) d.comment += ", prolog for op: " + b.prologFor;
        if (!b.written) d.ublockRt = d.ublockCt = d.mblockM = d.mblockN = 0; // only read: BUDA writes 0
        d.dramBufFlag = (b.readProlog && !b.readStreamed) || b.writtenEpilogue;
        d.writeDramBufFlag = b.writtenEpilogue;
        d.dramIoFlag = b.readStreamed || (b.written && !b.writtenEpilogue);
        const int64_t entries = d.dramIoFlag ? inputCount_ : 1;
        d.epochTiles = static_cast<uint32_t>(T * entries);
        if (read) {
          d.isScatter = true;
          d.scatterGatherNumTiles = static_cast<uint32_t>(gcd64(s.gcd, T));
          d.replicate = static_cast<uint32_t>(T / d.scatterGatherNumTiles);
        } else {
          d.scatterGatherNumTiles = static_cast<uint32_t>(T);
        }
      }
    }
    // Pipes: entries, periodic compression, DRAM reader bookkeeping.
    std::map<uint32_t, std::vector<size_t>> dramReaders; // buffer -> reading pipes
    for (size_t pi = 0; pi < pending_.size(); ++pi)
      for (const Run& r : runs[pi])
        if (bufs_[r.source].place == Buf::Place::Dram) {
          auto& v = dramReaders[r.source];
          if (v.empty() || v.back() != pi) v.push_back(pi);
        }
    dramReaders_ = dramReaders;
    for (size_t pi = 0; pi < pending_.size(); ++pi) {
      const PendingPipe& pp = pending_[pi];
      Pipe p;
      p.id = sh_.newId();
      p.comment = pp.comment;
      std::vector<BufferId> entries;
      std::vector<uint32_t> entrySource;
      int64_t chunkGcd = 0;
      for (const Run& r : runs[pi]) {
        const Buffer& d = bufs_[r.source].doc;
        if (!d.isScatter) {
          entries.push_back(d.uniqid);
          entrySource.push_back(r.source);
          chunkGcd = gcd64(chunkGcd, d.tilesPerInput);
          continue;
        }
        const int64_t g = d.scatterGatherNumTiles;
        for (int64_t o = r.start; o < r.start + r.length; o += g) {
          entries.push_back(d.uniqid + static_cast<uint64_t>(o));
          entrySource.push_back(r.source);
        }
        chunkGcd = gcd64(chunkGcd, g);
      }
      const size_t period = smallestPeriod(entries);
      if (period < entries.size()) {
        p.pipePeriodicRepeat = static_cast<uint32_t>(entries.size() / period);
        entries.resize(period);
        entrySource.resize(period);
      }
      p.inputList = entries;
      if (pp.slots.empty()) {
        std::vector<BufferId> outs;
        for (uint32_t h : pp.outputs) outs.push_back(bufs_[h].doc.uniqid);
        p.outputList.push_back(outs);
      } else {
        // Pass k goes to slot k % G: R = G x (the list's repeats) passes per
        // input give every slot the whole list (docs/pipegen-yaml.md).
        for (const auto& slot : pp.slots) {
          std::vector<BufferId> outs;
          for (uint32_t h : slot) outs.push_back(bufs_[h].doc.uniqid);
          p.outputList.push_back(outs);
        }
        p.outputListNested = true;
        // Successive periods: a round of the list's own repeats per slot.
        if (!pp.successivePeriods)
          p.pipePeriodicRepeat = std::max<uint32_t>(1, p.pipePeriodicRepeat) * static_cast<uint32_t>(pp.slots.size());
        p.outputPaddingList.assign(pp.slots.size(), 0);
      }
      const bool mcast = pp.multicast();
      p.mmioPipe = isMmioPipe(bufs_, pp);
      if (pp.toDram) {
        p.incomingNocId = 0;
        p.outgoingNocId = 0;
        const Buffer& src = bufs_[pp.tiles.front().source].doc;
        p.mcastCoreRc.push_back({src.chipId, src.core.r, src.core.c});
      } else {
        const CoreCoord first = bufs_[pp.outputs.front()].doc.core, last = bufs_[pp.outputs.back()].doc.core;
        p.outgoingNocId = mcast && first.c == last.c && first.r != last.r ? 1 : 0; // column multicasts on NOC 1
        p.incomingVc = 2;
        p.outgoingVc = mcast ? 4 : 2;
        const uint32_t chip = bufs_[pp.outputs.front()].doc.chipId;
        if (pp.slots.empty()) p.mcastCoreRc.push_back({chip, first.r, first.c});
        for (const auto& slot : pp.slots) // one per slot, as BUDA writes them
          p.mcastCoreRc.push_back({chip, bufs_[slot.front()].doc.core.r, bufs_[slot.front()].doc.core.c});
      }
      bool dram = false;
      for (uint32_t h : entrySource) dram |= bufs_[h].place != Buf::Place::Core;
      if (dram) {
        for (uint32_t h : entrySource) {
          if (bufs_[h].place == Buf::Place::Dram) {
            const auto& readers = dramReaders.at(h);
            p.dramPipeTotalReaders.push_back(static_cast<uint32_t>(readers.size()));
            p.dramPipeReaderIndex.push_back(
                static_cast<uint32_t>(std::find(readers.begin(), readers.end(), pi) - readers.begin()));
          } else {
            p.dramPipeTotalReaders.push_back(1);
            p.dramPipeReaderIndex.push_back(0);
          }
        }
      }
      // Destination granularity: the chunks it receives.
      for (uint32_t h : pp.allOutputs()) {
        Buffer& d = bufs_[h].doc;
        // (A relay is read as well: its chunks are those of its readers.)
        if (bufs_[h].place == Buf::Place::Core && !d.chainRelay()) d.scatterGatherNumTiles = static_cast<uint32_t>(chunkGcd);
      }
      pipes_.push_back(std::move(p));
    }
    // BUDA's convention: a prolog buffer names the core its first reader
    // writes (pipegen2 routes the read there; [255, 255] has no router).
    for (const auto& [h, readers] : dramReaders) {
      Buffer& d = bufs_[h].doc;
      if (d.bufferType != BufferType::DramProlog || pending_[readers.front()].toDram) continue;
      const Buffer& dest = bufs_[pending_[readers.front()].outputs.front()].doc;
      if (dest.chipId == d.chipId && !dest.ethernetChan) d.core = dest.core;
    }
  }

  std::map<uint32_t, std::vector<size_t>> dramReaders_;

  // A core whose buffers overflow L1 at their preferred sizes (double
  // buffering, buf_size_mb) gives up the extra space, the largest saving
  // first, down to each buffer's minimum (what its kernel pops or pushes at
  // once, its readers' window). checkResources reports a core that still
  // does not fit.
  void fitL1() {
    std::map<uint64_t, std::vector<uint32_t>> byCore;
    for (size_t h = 0; h < bufs_.size(); ++h)
      if (bufs_[h].place == Buf::Place::Core) byCore[coreKey(static_cast<uint32_t>(h))].push_back(static_cast<uint32_t>(h));
    relayBytes_ = relayRingBytes();
    for (auto& [key, hs] : byCore) {
      const uint64_t limit = l1Limit(key);
      const auto relay = relayBytes_.find(key);
      uint64_t used = relay == relayBytes_.end() ? 0 : relay->second;
      for (uint32_t h : hs) used += uint64_t{bufs_[h].doc.sizeTiles} * bufs_[h].doc.tileSize;
      if (used <= limit) continue;
      auto saving = [&](uint32_t h) {
        const Buf& b = bufs_[h];
        const int64_t spare = static_cast<int64_t>(b.doc.sizeTiles) - b.minSize;
        return spare > 0 ? uint64_t(spare) * b.doc.tileSize : 0;
      };
      std::vector<uint32_t> order(hs);
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return saving(a) > saving(b); });
      for (uint32_t h : order) {
        if (used <= limit) break;
        Buffer& d = bufs_[h].doc;
        const uint64_t save = saving(h);
        if (save == 0) continue;
        // Only as much as needed, in whole granules of the buffer.
        const int64_t granule = std::max<int64_t>(1, bufs_[h].granule);
        const uint64_t excess = used - limit;
        int64_t drop = static_cast<int64_t>((excess + d.tileSize - 1) / d.tileSize);
        drop = (drop + granule - 1) / granule * granule;
        const int64_t newSize = std::max<int64_t>(bufs_[h].minSize, static_cast<int64_t>(d.sizeTiles) - drop);
        used -= uint64_t(d.sizeTiles - newSize) * d.tileSize;
        d.comment += " (size reduced from " + std::to_string(d.sizeTiles) + " to " + std::to_string(newSize) +
                     " tiles to fit L1)";
        d.sizeTiles = static_cast<uint32_t>(newSize);
      }
    }
  }

  // L1 that pipegen's extra streams take on each hosting core: a ring of
  // kExtraStreamRingTiles for every pipe not sent from a single source core
  // (a DRAM read or a gather) that multicasts or writes DRAM.
  std::map<uint64_t, uint64_t> relayRingBytes() const {
    std::map<uint64_t, uint64_t> bytes;
    for (const PendingPipe& p : pending_) {
      if (!p.multicast() && !p.toDram) continue;
      bool single = false;
      const uint32_t host = sendingCore(p, &single);
      if (single) continue;
      bytes[coreKey(host)] += uint64_t{kExtraStreamRingTiles} * bufs_[p.tiles.front().source].doc.tileSize;
    }
    return bytes;
  }

  // ------------------------------------------------------------ resources
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

  void checkResources() {
    const Limits& lim = sh_.out.limits;
    std::map<uint64_t, CoreUse> cores;
    for (size_t h = 0; h < bufs_.size(); ++h) {
      const Buf& b = bufs_[h];
      if (b.place != Buf::Place::Core) continue;
      CoreUse& u = cores[coreKey(static_cast<uint32_t>(h))];
      u.op = b.op;
      u.buffer = static_cast<int64_t>(h);
      u.l1 += uint64_t{b.doc.sizeTiles} * b.doc.tileSize;
      u.buffers.push_back(static_cast<uint32_t>(h));
    }
    // Forks: a packer read by k pipes sends on k streams.
    std::map<uint32_t, uint32_t> packerReaders;
    for (const PendingPipe& p : pending_) {
      std::set<uint32_t> srcs;
      for (const SourceTile& t : p.tiles) srcs.insert(t.source);
      for (uint32_t h : srcs) // (a relay has one stream, whatever its readers: pipegen's relay chains)
        if (bufs_[h].packer && !chains_.onEthernet(h)) ++packerReaders[h];
      bool single = false;
      const uint32_t host = sendingCore(p, &single);
      const bool dramIn = std::any_of(srcs.begin(), srcs.end(), [&](uint32_t h) { return bufs_[h].place == Buf::Place::Dram; });
      CoreUse& hu = cores[coreKey(host)];
      if (hu.buffer < 0) hu.buffer = host;
      if (p.multicast()) { // a time-multiplexed pipe is one stream
        ++hu.mcast;
        if (!single) ++hu.relayStreams;
      }
      if (dramIn) ++hu.dramIn;
      if (p.toDram) ++hu.dramOut;
    }
    for (const auto& [h, n] : packerReaders)
      if (n > 1) cores[coreKey(h)].forkStreams += n - 1;
    for (const auto& [key, bytes] : relayBytes_) {
      cores[key].l1 += bytes;
      cores[key].relayBytes += bytes;
    }

    for (const auto& [key, u] : cores) {
      if (u.buffer < 0) continue; // (every core has one)
      const uint32_t rep = static_cast<uint32_t>(u.buffer);
      const Op* op = u.op;
      const SourceLoc loc = op ? op->loc : graph_.loc;
      const bool eth = ethKey(key);
      const uint64_t l1 = l1Limit(key);
      const std::string who = (eth || multiChip() ? where(rep) : "core " + coreText(bufs_[rep].doc.core)) +
                              (op ? (eth ? " (relays for op " : " (op ") + quote(op->name) + ")" : "");
      if (u.l1 > l1) {
        std::vector<std::string> notes;
        for (uint32_t h : u.buffers) {
          const Buffer& d = bufs_[h].doc;
          notes.push_back("buffer_" + std::to_string(d.uniqid) + " (" + bufferRole(d) + "): " + std::to_string(d.sizeTiles) +
                          " tiles x " + std::to_string(d.tileSize) + " bytes = " +
                          std::to_string(uint64_t{d.sizeTiles} * d.tileSize) + " bytes");
        }
        if (u.relayBytes)
          notes.push_back("pipegen's relay and DRAM-writer streams hosted here: " + std::to_string(u.relayBytes) +
                          " bytes (" + std::to_string(kExtraStreamRingTiles) + " tiles each)");
        notes.push_back("every buffer is at the smallest size its kernel and readers need");
        fail("pipe-l1-overflow", loc,
             who + ": buffers need " + std::to_string(u.l1) + " bytes of L1 but " + std::to_string(l1) +
                 " bytes are free for data (L1 from 0x" + hexText(eth ? kEthDataBufferBase : contract::kDataBufferBase) +
                 " to its end" + (eth ? ", eth_l1_size " + std::to_string(sh_.target.device->ethL1Size) : "") + ")",
             notes);
      }
      const uint32_t streams = static_cast<uint32_t>(u.buffers.size()) + u.forkStreams + u.relayStreams;
      const uint32_t streamLimit = eth ? contract::kEthStreamsPerCore : lim.streamsPerCore; // pipegen's
      if (streams > streamLimit)
        fail("pipe-streams", loc,
             who + ": needs " + std::to_string(streams) + " streams, a" + (eth ? "n ethernet" : "") + " core has " +
                 std::to_string(streamLimit),
             {std::to_string(u.buffers.size()) + " operand buffers, " + std::to_string(u.forkStreams) + " fork streams, " +
              std::to_string(u.relayStreams) + " multicast relay streams"});
      if (u.mcast > lim.mcastStreamsPerCore)
        fail("pipe-mcast-streams", loc,
             who + ": sends " + std::to_string(u.mcast) + " multicasts, a core has " +
                 std::to_string(lim.mcastStreamsPerCore) + " multicast streams",
             {"only multicasts of the same tiles from the core's packer to ops that do not wait for each other can "
              "share a stream (a time-multiplexed pipe); these carry different tiles, come from DRAM or a gather, or "
              "feed dependent ops"});
      if (u.dramIn > lim.dramInputStreamsPerCore)
        fail("pipe-dram-streams", loc,
             who + ": reads DRAM for " + std::to_string(u.dramIn) + " pipes, a core has " +
                 std::to_string(lim.dramInputStreamsPerCore) + " DRAM input streams");
      if (u.dramOut > lim.dramOutputStreamsPerCore)
        fail("pipe-dram-streams", loc,
             who + ": writes DRAM for " + std::to_string(u.dramOut) + " pipes, a core has " +
                 std::to_string(lim.dramOutputStreamsPerCore) + " DRAM output streams");
    }
    for (const auto& [h, readers] : dramReaders_) {
      if (readers.size() <= lim.dramReadersPerBuffer) continue;
      const Buf& b = bufs_[h];
      std::set<std::string> ops;
      for (size_t pi : readers) ops.insert(pending_[pi].op->name);
      std::string list;
      for (const auto& o : ops) list += (list.empty() ? "" : ", ") + quote(o);
      const QueueBufferInfo& info = sh_.out.queueBuffers[b.queueBuffer];
      fail("pipe-dram-readers", b.queue->loc,
           "queue " + quote(b.queue->name) + " buffer " + cellText(info.cellR, info.cellC) + " is read by " +
               std::to_string(readers.size()) + " pipes, at most " + std::to_string(lim.dramReadersPerBuffer) +
               " may read one DRAM buffer",
           {"read by op" + std::string(ops.size() > 1 ? "s " : " ") + list});
    }
  }

  static std::string hexText(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%llX", static_cast<unsigned long long>(v));
    return buf;
  }

  static std::string bufferRole(const Buffer& d) {
    if (d.bufferType == BufferType::Unpacker) return "input " + std::to_string(d.id);
    if (d.bufferType == BufferType::Packer) return "output";
    if (d.bufferTypeText == "gradient_op") return "gradient accumulation";
    if (d.bufferType == BufferType::Relay) return "relay of " + d.mdOpName;
    if (d.bufferType == BufferType::Ethernet) return "ethernet_datacopy output";
    return "intermediate " + std::to_string(d.id);
  }

  // ------------------------------------------------------------ output
  void emit(PipegenYaml& yaml) {
    yaml.graphName = graph_.name;
    yaml.epoch = epoch_.id;
    // pipegen checks links against the same cluster (the default topology
    // for this many chips unless it is given the --cluster file too).
    if (sh_.cluster.chipCount() > 1) yaml.clusterChips = static_cast<uint32_t>(sh_.cluster.chipCount());
    std::vector<uint32_t> order(bufs_.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      if (bufs_[a].category != bufs_[b].category) return bufs_[a].category < bufs_[b].category;
      return bufs_[a].orderKey < bufs_[b].orderKey;
    });
    for (uint32_t h : order) yaml.buffers.push_back(bufs_[h].doc);
    yaml.pipes = std::move(pipes_);
    recordAccess();
  }

  // Who reads and writes each queue buffer (the epoch index).
  void recordAccess() {
    // Key: queue buffer, op, input, over ethernet (cores are ethernet cores).
    std::map<std::tuple<size_t, std::string, int, bool>, std::set<std::pair<uint32_t, uint32_t>>> reads, writes;
    for (const PendingPipe& p : pending_) {
      std::set<uint32_t> srcs;
      for (const SourceTile& t : p.tiles) srcs.insert(t.source);
      if (p.toDram) {
        const Buf& dst = bufs_[p.outputs.front()];
        bool relay = false;
        for (uint32_t h : srcs) relay |= bufs_[h].doc.ethernetChan.has_value();
        auto& cs = writes[{dst.queueBuffer, p.op->name, -1, relay}];
        for (uint32_t h : srcs) cs.insert({bufs_[h].doc.core.r, bufs_[h].doc.core.c});
        continue;
      }
      bool relay = false;
      for (uint32_t o : p.allOutputs()) relay |= bufs_[o].doc.ethernetChan.has_value();
      for (uint32_t h : srcs) {
        if (bufs_[h].place != Buf::Place::Dram) continue;
        auto& cs = reads[{bufs_[h].queueBuffer, p.op->name, p.input, relay}];
        for (uint32_t o : p.allOutputs()) cs.insert({bufs_[o].doc.core.r, bufs_[o].doc.core.c});
      }
    }
    auto store = [&](auto& from, bool isRead) {
      for (const auto& [key, cs] : from) {
        QueueAccess a;
        a.epoch = epoch_.id;
        a.op = std::get<1>(key);
        a.input = std::get<2>(key);
        a.relay = std::get<3>(key);
        for (const auto& [r, c] : cs) a.cores.push_back(CoreCoord{r, c});
        auto& info = sh_.out.queueBuffers[std::get<0>(key)];
        (isRead ? info.readers : info.writers).push_back(std::move(a));
      }
    };
    store(reads, true);
    store(writes, false);
    for (const Buf& b : bufs_) {
      if (b.doc.bufferTypeText != "gradient_op") continue;
      const Op& op = *b.op;
      const Queue* q = nullptr;
      for (const Queue& qq : nl_.queues)
        if (qq.input.value == op.name) q = &qq;
      if (!q) continue;
      // The op's cores in row-major order own the cells in row-major order.
      const auto& outs = opOutputs_.at(&op);
      for (size_t k = 0; k < outs.size(); ++k) {
        if (&bufs_[outs[k]] != &b) continue;
        QueueAccess a;
        a.epoch = epoch_.id;
        a.op = op.name;
        a.gradient = true;
        a.cores.push_back(b.doc.core);
        sh_.out.queueBuffers[sh_.queueFirstBuffer.at(q->name) + k].writers.push_back(std::move(a));
      }
    }
  }
};

} // namespace

bool compileNetlist(const Netlist& nl, const ValidationTarget& target, DiagnosticEngine& diags, Compilation& out) {
  const ClusterDescriptor& cluster = *target.cluster;
  Shared sh{nl, target, cluster, diags, out, {}, {}, {}};
  out.limits = limitsFor(target);
  out.cluster = cluster.name;
  out.multiChip = cluster.chipCount() > 1;
  // Queue buffers first: their ids are the same in every epoch.
  for (const Queue& q : nl.queues) {
    sh.queues.emplace(q.name, &q);
    sh.queueFirstBuffer.emplace(q.name, out.queueBuffers.size());
    const Dim2 grid = q.gridSize.value;
    const bool host = q.location.value == IoLocation::Host;
    const auto& allocs = host ? q.host : q.dram;
    for (int64_t r = 0; r < grid.r; ++r)
      for (int64_t c = 0; c < grid.c; ++c) {
        QueueBufferInfo info;
        info.queue = q.name;
        info.cellR = r;
        info.cellC = c;
        info.uniqid = sh.newId();
        info.host = host;
        info.chip = chipOf(q);
        const size_t k = static_cast<size_t>(r * grid.c + c);
        if (k < allocs.size()) {
          info.channel = allocs[k].channel;
          info.address = allocs[k].address;
        }
        out.queueBuffers.push_back(std::move(info));
      }
  }
  // One kernel configuration per op (net2hlks' contract: operands, tile orders, sizes).
  // ethernet_datacopy has none (net2hlks skips it): relay chains move its tiles.
  for (const Graph& g : nl.graphs)
    for (const Op& op : g.ops)
      if (op.type.value != "ethernet_datacopy") sh.configs[&op] = hlk::configureOp(nl, op, target, diags);
  for (const TemporalEpoch& e : deriveEpochs(nl, target.arch)) {
    EpochOutput eo;
    eo.epoch = e;
    EpochBuilder builder(sh, e);
    if (!builder.build(eo.yaml)) {
      sh.ok = false;
      continue;
    }
    out.epochs.push_back(std::move(eo));
  }
  return sh.ok && diags.errorCount() == 0;
}

} // namespace tessera::pipe
