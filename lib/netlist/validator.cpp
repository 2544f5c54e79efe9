#include "netlist/validator.hpp"

#include "device/arch_params.hpp"
#include "device/soc_descriptor.hpp"
#include "netlist/format_rules.hpp"
#include "netlist/multichip.hpp"
#include "netlist/shape.hpp"
#include "netlist/text.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

namespace tessera::netlist {
namespace {


// Op types whose inputs (after TMs) all have the output's shape.
bool isEltwise(const std::string& type) {
  static const std::set<std::string> kTypes = {
      "nop", "datacopy", "ethernet_datacopy", "add", "subtract", "multiply", "maximum", "exp", "log", "sqrt",
      "reciprocal", "gelu", "gelu_derivative", "sigmoid", "tanh", "abs", "sine", "cosine", "square", "power",
      "lrelu", "relu"};
  return kTypes.count(type) != 0;
}

// Every op type the BUDA backend documents or the corpus uses; others draw a warning.
bool isKnownOpType(const std::string& type) {
  static const std::set<std::string> kOthers = {
      "matmul", "reduce", "splice", "fused_op", "embedding", "tilizer", "topk", "depthwise", "quantization",
      "dequantization", "requantization", "buffer", "dropout", "transpose", "sparse_matmul"};
  return isEltwise(type) || kOthers.count(type) != 0;
}

class Validator {
public:
  Validator(const Netlist& nl, const ValidationTarget& target, DiagnosticEngine& d) : nl_(nl), target_(target), d_(d) {}

  void run() {
    indexNames();
    checkDevices();
    for (const Queue& queue : nl_.queues) checkQueue(queue);
    checkDramOverlap();
    for (const Graph& g : nl_.graphs) checkGraph(g);
    checkPrograms();
    validateMultichip(nl_, target_, d_);
    validateFusedOps(nl_, target_, d_);
    validateBudaParity(nl_, target_, d_);
  }

private:
  const Netlist& nl_;
  const ValidationTarget& target_;
  DiagnosticEngine& d_;
  std::unordered_map<std::string, const Queue*> queues_;
  std::unordered_map<std::string, const Op*> ops_;
  std::unordered_map<std::string, const Graph*> graphs_;
  std::unordered_map<std::string, const FusedOp*> fused_;
  std::set<std::string> dynamicQueues_; // named by allocate_queue: their DRAM is reused over time
  std::set<std::string> aliasedQueues_; // the second view of some dual-view (alias) queue
  // Graphs joined by op-to-op edges run at once: keyed by a group's first graph.
  std::unordered_map<const Graph*, std::vector<const Graph*>> groups_;

  const SocDescriptor& device() const { return *target_.device; }
  const ClusterDescriptor& cluster() const { return *target_.cluster; }
  std::string archStr() const { return std::string(archName(target_.arch)); }

  // ---------------------------------------------------------------- names
  void indexNames() {
    // Queues and ops share one namespace (an op input may name either).
    std::unordered_map<std::string, SourceLoc> nodes;
    auto addNode = [&](const std::string& name, SourceLoc loc, const std::string& kind) {
      auto [it, fresh] = nodes.emplace(name, loc);
      if (!fresh)
        d_.error("duplicate-name", loc, kind + " " + quote(name) + " is defined more than once; queue and op names must be unique")
            .note(it->second, "first definition of " + quote(name));
    };
    for (const Queue& queue : nl_.queues) {
      addNode(queue.name, queue.loc, "queue");
      queues_.emplace(queue.name, &queue);
      if (queue.alias.present()) aliasedQueues_.insert(queue.alias.value);
    }
    for (const Graph& g : nl_.graphs) {
      if (auto [it, fresh] = graphs_.emplace(g.name, &g); !fresh)
        d_.error("duplicate-name", g.loc, "graph " + quote(g.name) + " is defined more than once").note(it->second->loc, "first definition");
      for (const Op& op : g.ops) {
        addNode(op.name, op.loc, "op");
        ops_.emplace(op.name, &op);
      }
    }
    for (const FusedOp& f : nl_.fusedOps)
      if (auto [it, fresh] = fused_.emplace(f.id, &f); !fresh)
        d_.error("duplicate-name", f.loc, "fused op " + quote(f.id) + " is defined more than once").note(it->second->loc, "first definition");
    for (auto& group : opJoinedGraphs(nl_)) groups_.emplace(group.front(), std::move(group));
    std::map<std::string, SourceLoc> programs;
    for (const Program& p : nl_.programs) {
      if (auto [it, fresh] = programs.emplace(p.name, p.loc); !fresh)
        d_.error("duplicate-name", p.loc, "program " + quote(p.name) + " is defined more than once").note(it->second, "first definition");
      for (const Instruction& ins : p.instructions)
        if (ins.kind == InstrKind::AllocateQueue)
          for (const auto& qn : ins.queues) dynamicQueues_.insert(qn.value);
    }
  }

  // ---------------------------------------------------------------- devices
  void checkDevices() {
    std::set<Arch> seen;
    for (const auto& a : nl_.devices.arch)
      if (!seen.insert(a.value).second)
        d_.warning("duplicate-arch", a.loc, "devices: arch '" + std::string(archName(a.value)) + "' is listed twice");
  }

  // target_device names a chip of the cluster (--cluster, else the arch's
  // default topology for the highest target_device, docs/cluster.md).
  void checkTargetDevice(const Field<int64_t>& td, const std::string& element) {
    if (!td.present()) return;
    if (td.value >= 0 && td.value <= int64_t{UINT32_MAX} && cluster().hasChip(static_cast<ChipId>(td.value))) return;
    auto diag = d_.error("target-device", td.loc,
                         element + ": target_device " + std::to_string(td.value) + " is not a chip of " + clusterText(cluster()));
    if (td.value >= 0 && cluster().name.rfind("default-", 0) == 0)
      diag.note("without --cluster the target is the default " + archStr() +
                " topology for the highest target_device (docs/cluster.md; at most " +
                std::to_string(maxDefaultChips(target_.arch)) + " chips); give --cluster FILE for another");
  }

  // mblock/ublock/grid/t/entries must be positive before any arithmetic on them.
  bool checkPositive(const std::string& element, std::initializer_list<std::pair<const char*, const Field<Dim2>*>> dims,
                     std::initializer_list<std::pair<const char*, const Field<int64_t>*>> ints) {
    bool ok = true;
    for (auto& [name, f] : dims)
      if (f->present() && (f->value.r < 1 || f->value.c < 1 || f->value.r > (1 << 20) || f->value.c > (1 << 20))) {
        d_.error("positive-dims", f->loc, element + ": " + name + " " + dimText(f->value) + " must have both dimensions in 1..1048576");
        ok = false;
      }
    for (auto& [name, f] : ints)
      if (f->present() && (f->value < 1 || f->value > (1 << 24))) {
        d_.error("positive-dims", f->loc, element + ": " + name + " " + std::to_string(f->value) + " must be in 1..16777216");
        ok = false;
      }
    return ok;
  }

  // ---------------------------------------------------------------- queues
  void checkQueue(const Queue& queue) {
    const std::string element = "queue " + quote(queue.name);
    checkTargetDevice(queue.targetDevice, element);
    bool dimsOk = checkPositive(element, {{"grid_size", &queue.gridSize}, {"mblock", &queue.mblock}, {"ublock", &queue.ublock}},
                                {{"t", &queue.t}, {"entries", &queue.entries}});
    // Producer.
    if (queue.input.present() && !queue.isHostFed() && !queue.isExternal()) {
      auto op = ops_.find(queue.input.value);
      if (op == ops_.end()) {
        if (queues_.count(queue.input.value))
          d_.error("unknown-producer", queue.input.loc, element + ": input " + quote(queue.input.value) +
                                                          " is a queue; a queue's input must be an op or HOST");
        else
          d_.error("unknown-producer", queue.input.loc, element + ": input " + quote(queue.input.value) +
                                                          " names no op (expected an op name, HOST, or a net2net_* name)");
      } else if (dimsOk) {
        checkQueueShape(queue, *op->second);
      }
    }
    // Allocations.
    size_t cells = dimsOk && queue.gridSize.present() ? static_cast<size_t>(queue.gridSize.value.r * queue.gridSize.value.c) : 0;
    if (queue.location.present()) {
      bool dram = queue.location.value == IoLocation::Dram;
      const auto& allocs = dram ? queue.dram : queue.host;
      SourceLoc allocLoc = dram ? queue.dramLoc : queue.hostLoc;
      const char* field = dram ? "dram" : "host";
      if (!allocLoc.valid()) {
        d_.error("alloc-missing", queue.location.loc, element + ": loc is " + field + " but the queue has no '" + field + "' allocation list");
      } else if (cells && allocs.size() != cells) {
        d_.error("alloc-count", allocLoc,
                 element + ": " + std::to_string(allocs.size()) + " " + field + " allocation(s) for a grid_size of " +
                     dimText(queue.gridSize.value) + " (" + std::to_string(cells) + " buffers); there must be one per grid cell");
      }
      if (dram && queue.hostLoc.valid())
        d_.warning("alloc-unused", queue.hostLoc, element + ": 'host' allocations are ignored for a queue with loc: dram");
      if (!dram && queue.dramLoc.valid())
        d_.warning("alloc-unused", queue.dramLoc, element + ": 'dram' allocations are ignored for a queue with loc: host");
      if (dram && dimsOk) checkDramAllocations(queue);
    }
    if (queue.alias.present()) {
      auto target = queues_.find(queue.alias.value);
      if (target == queues_.end())
        d_.error("unknown-alias", queue.alias.loc, element + ": alias " + quote(queue.alias.value) + " names no queue");
      else if (target->second == &queue)
        d_.error("unknown-alias", queue.alias.loc, element + ": a queue cannot alias itself");
    }
    if (queue.df.present() && !archSupportsFormat(queue.df.value))
      formatArchError(queue.df.loc, element, queue.df.value);
    if (queue.tileDim.present()) checkTileDim(queue.tileDim, element);
  }

  void checkTileDim(const Field<Dim2>& td, const std::string& element) {
    static const std::set<std::pair<int64_t, int64_t>> kTiles = {{1, 32}, {2, 32}, {4, 32}, {8, 32}, {16, 32}, {32, 32}, {32, 16}};
    if (!kTiles.count({td.value.r, td.value.c}))
      d_.error("tile-dim", td.loc, element + ": tile_dim " + dimText(td.value) +
                                       " is not a supported tile shape (32x32, 32x16, or 1/2/4/8/16 rows x 32)");
  }

  // Saturates at UINT64_MAX: dims are bounded (positive-dims) but their product is not.
  // Tiles smaller than 32x32: no integer formats, and the tile must stay a
  // multiple of 32 bytes for the NOC (Bfp2 with 1 or 2 rows and Bfp4 with 1 row
  // are not). `what` names the data (out_df, or an input and its producer).
  void checkTileFormat(Dim2 tile, const Field<DataFormat>& f, const std::string& element, const std::string& what) {
    if (tile == Dim2{32, 32} || !f.present()) return;
    DataFormat df = f.value;
    std::string format(dataFormatName(df));
    if (df == DataFormat::Int8 || df == DataFormat::Int32)
      d_.error("tile-dim-format", f.loc, element + ": " + what + " is " + format + " in " + dimText(tile) +
                                             " tiles; integer formats need 32x32 tiles");
    bool bfp2 = df == DataFormat::Bfp2 || df == DataFormat::Bfp2_b;
    bool bfp4 = df == DataFormat::Bfp4 || df == DataFormat::Bfp4_b;
    if ((bfp2 && tile.r <= 2) || (bfp4 && tile.r == 1))
      d_.error("tile-dim-format", f.loc, element + ": " + what + " is a " + dimText(tile) + " tile in " + format +
                                             ", which is not a multiple of 32 bytes, the unit the NOC moves");
  }

  static Dim2 tileOf(const Field<Dim2>& tileDim) { return tileDim.present() ? tileDim.value : Dim2{32, 32}; }

  uint64_t queueBufferBytes(const Queue& queue) const {
    unsigned __int128 bytes = static_cast<unsigned __int128>(queue.entries.value) * tileSizeBytes(queue.df.value);
    for (int64_t f : {queue.t.value, queue.mblock.value.r, queue.mblock.value.c, queue.ublock.value.r, queue.ublock.value.c}) {
      bytes *= static_cast<uint64_t>(f);
      if (bytes > UINT64_MAX) return UINT64_MAX;
    }
    bytes += kQueueHeaderBytes;
    return bytes > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(bytes);
  }
  static constexpr uint64_t kQueueHeaderBytes = 32; // rd/wr pointers etc., as BUDA DRAM queues carry

  uint64_t otherArchBankSize(Arch arch) {
    auto it = bankSizes_.find(arch);
    if (it == bankSizes_.end())
      it = bankSizes_.emplace(arch, loadBundledDescriptor(defaultDescriptorName(arch)).dramBankSize).first;
    return it->second;
  }
  std::map<Arch, uint64_t> bankSizes_; // other archs' bundled descriptors, for dram-address notes

  void checkDramAllocations(const Queue& queue) {
    const std::string element = "queue " + quote(queue.name);
    bool sized = queue.entries.present() && queue.t.present() && queue.mblock.present() && queue.ublock.present() && queue.df.present();
    uint64_t bytes = sized ? queueBufferBytes(queue) : 0;
    for (size_t i = 0; i < queue.dram.size(); ++i) {
      const AllocAddress& a = queue.dram[i];
      if (a.channel < 0 || a.channel >= device().dramChannelCount()) {
        d_.error("dram-channel", a.loc, element + ": buffer " + std::to_string(i) + " is on DRAM channel " + std::to_string(a.channel) +
                                            " but " + device().name + " has channels 0.." + std::to_string(device().dramChannelCount() - 1));
        continue;
      }
      if (a.address >= device().dramBankSize || (sized && bytes > device().dramBankSize - a.address)) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a.address));
        auto diag = d_.error("dram-address", a.loc, element + ": buffer " + std::to_string(i) + " at " + buf + " (" + std::to_string(bytes) +
                                            " bytes) does not fit DRAM channel " + std::to_string(a.channel) + " of " +
                                            std::to_string(device().dramBankSize) + " bytes");
        // A netlist listing several archs runs on whichever the machine has
        // (BUDA's parser does not compare addresses with the channel size).
        if (sized && a.address < UINT64_MAX - bytes)
          for (const auto& other : nl_.devices.arch)
            if (other.value != target_.arch) {
              const uint64_t size = otherArchBankSize(other.value);
              if (a.address + bytes <= size) {
                diag.note(other.loc, "it fits the " + std::to_string(size) + "-byte channels of " +
                                         std::string(archName(other.value)) + ", which the netlist also lists (--arch " +
                                         std::string(archName(other.value)) + ")");
                break;
              }
            }
      }
    }
  }

  // Two queues (or two buffers of one queue) must not share DRAM unless one aliases the other or their
  // lifetimes are managed by allocate_queue/deallocate_queue.
  void checkDramOverlap() {
    struct Range { uint64_t begin, end; const Queue* queue; SourceLoc loc; size_t index; };
    // Each chip has its own DRAM: queues on different chips may share addresses.
    std::map<std::pair<ChipId, int64_t>, std::vector<Range>> byChannel;
    for (const Queue& queue : nl_.queues) {
      if (!queue.location.present() || queue.location.value != IoLocation::Dram || queue.alias.present()) continue;
      auto chip = chipOf(queue);
      if (!chip) continue;
      if (dynamicQueues_.count(queue.name)) continue;
      if (!(queue.entries.value > 0 && queue.t.value > 0 && queue.mblock.value.r > 0 && queue.mblock.value.c > 0 &&
            queue.ublock.value.r > 0 && queue.ublock.value.c > 0 && queue.df.present()))
        continue;
      uint64_t bytes = queueBufferBytes(queue);
      for (size_t i = 0; i < queue.dram.size(); ++i) {
        const AllocAddress& a = queue.dram[i];
        uint64_t end = bytes > UINT64_MAX - a.address ? UINT64_MAX : a.address + bytes;
        byChannel[{*chip, a.channel}].push_back({a.address, end, &queue, a.loc, i});
      }
    }
    std::set<std::pair<std::string, std::string>> reported;
    for (auto& [chipChannel, ranges] : byChannel) {
      const std::string where = (cluster().chipCount() > 1 ? "chip " + std::to_string(chipChannel.first) + " " : "") +
                                "channel " + std::to_string(chipChannel.second);
      std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
        if (a.begin != b.begin) return a.begin < b.begin;
        return a.queue->name != b.queue->name ? a.queue->name < b.queue->name : a.index < b.index;
      });
      // Sweep in address order, comparing each buffer with the one reaching
      // furthest so far: that also catches a buffer nested inside a big one.
      const Range* reach = ranges.empty() ? nullptr : &ranges.front();
      for (size_t i = 1; i < ranges.size(); ++i) {
        const Range& cur = ranges[i];
        const Range& prev = *reach;
        if (cur.end > reach->end) reach = &cur;
        if (cur.begin >= prev.end) continue;
        if (aliasedQueues_.count(prev.queue->name) || aliasedQueues_.count(cur.queue->name)) continue;
        if (prev.queue == cur.queue) {
          // Two cells of one queue in one place: each core reads the tiles
          // written last to either (the reference model keeps them apart).
          if (!reported.insert({cur.queue->name, cur.queue->name}).second) continue;
          d_.warning("dram-overlap", cur.loc,
                     "queue " + quote(cur.queue->name) + ": DRAM buffer " + std::to_string(cur.index) + " on " + where +
                         " overlaps its buffer " + std::to_string(prev.index))
              .note(prev.loc, "buffer " + std::to_string(prev.index) + " spans " + std::to_string(prev.end - prev.begin) +
                                  " bytes from here");
          continue;
        }
        if (!reported.insert({prev.queue->name, cur.queue->name}).second) continue;
        // A warning: the BUDA backend does not check this and real netlists share
        // DRAM on purpose (e.g. a cache written in place under a second name).
        d_.warning("dram-overlap", cur.loc,
                   "queue " + quote(cur.queue->name) + ": DRAM buffer on " + where + " overlaps a buffer of queue " +
                       quote(prev.queue->name))
            .note(prev.loc, "queue " + quote(prev.queue->name) + " buffer spans " + std::to_string(prev.end - prev.begin) + " bytes from here");
      }
    }
  }

  void checkQueueShape(const Queue& queue, const Op& producer) {
    auto out = opOutputShape(producer);
    auto qs = queueShape(queue);
    if (!out || !qs) return;
    TensorShape expected = *out;
    if (!queue.inputTms.empty()) {
      std::string why;
      const Tm* failed = nullptr;
      auto applied = applyTms(expected, queue.inputTms, &failed, &why);
      if (!applied) {
        d_.error("tm-divisibility", failed ? failed->loc : queue.inputTmsLoc,
                 "queue " + quote(queue.name) + ": input_tms on the output of " + quote(producer.name) + " " + expected.str() + ": " + why);
        return;
      }
      expected = *applied;
    }
    if (!(expected == *qs))
      d_.error("shape-mismatch", queue.loc,
               "queue " + quote(queue.name) + " holds " + qs->str() + " but its producer op " + quote(producer.name) +
                   " writes " + expected.str() + (queue.inputTms.empty() ? "" : " after the queue's input_tms"))
          .note(producer.loc, "op " + quote(producer.name) + " defined here");
    Dim2 opTile = producer.tileDim.present() ? producer.tileDim.value : Dim2{32, 32};
    Dim2 queueTile = queue.tileDim.present() ? queue.tileDim.value : Dim2{32, 32};
    if (!(opTile == queueTile))
      d_.error("tile-dim-mismatch", queue.tileDim.present() ? queue.tileDim.loc : queue.loc,
               "queue " + quote(queue.name) + " has tile_dim " + dimText(queueTile) + " but its producer op " + quote(producer.name) +
                   " writes " + dimText(opTile) + " tiles")
          .note(producer.tileDim.present() ? producer.tileDim.loc : producer.loc, "tile_dim of " + quote(producer.name));
    if (producer.outDf.present() && queue.df.present() && producer.outDf.value != queue.df.value)
      d_.error("df-mismatch", queue.df.loc,
               "queue " + quote(queue.name) + " has df " + std::string(dataFormatName(queue.df.value)) + " but op " +
                   quote(producer.name) + " writes " + std::string(dataFormatName(producer.outDf.value)))
          .note(producer.outDf.loc, "out_df of " + quote(producer.name));
  }

  // ---------------------------------------------------------------- formats
  bool archSupportsFormat(DataFormat f) const {
    if (target_.arch == Arch::Grayskull)
      return !isIntegerFormat(f) && f != DataFormat::Lf8 && f != DataFormat::Fp8_e4m3;
    if (target_.arch == Arch::Wormhole) return f != DataFormat::Lf8 && f != DataFormat::Fp8_e4m3;
    return true;
  }
  void formatArchError(SourceLoc loc, const std::string& element, DataFormat f) {
    d_.error("format-arch", loc, element + ": data format " + std::string(dataFormatName(f)) + " is not supported on " + archStr());
  }

  // ---------------------------------------------------------------- graphs and ops
  void checkGraph(const Graph& g) {
    const std::string element = "graph " + quote(g.name);
    checkTargetDevice(g.targetDevice, element);
    if (g.inputCount.present() && g.inputCount.value < 1)
      d_.error("positive-dims", g.inputCount.loc, element + ": input_count must be at least 1");
    for (const Op& op : g.ops) checkOp(g, op);
    if (auto group = groups_.find(&g); group != groups_.end()) checkGridOverlap(group->second);
    checkCycles(g);
  }

  void checkOp(const Graph& g, const Op& op) {
    const std::string element = "op " + quote(op.name);
    bool dimsOk = checkPositive(element, {{"grid_size", &op.gridSize}, {"mblock", &op.mblock}, {"ublock", &op.ublock}},
                                {{"t", &op.t}});
    if (op.gridLoc.present() && (op.gridLoc.value.r < 0 || op.gridLoc.value.c < 0)) {
      d_.error("grid-bounds", op.gridLoc.loc, element + ": grid_loc " + dimText(op.gridLoc.value) + " must not be negative");
      dimsOk = false;
    }
    if (op.type.present() && !isKnownOpType(op.type.value))
      d_.warning("unknown-op-type", op.type.loc, element + ": op type " + quote(op.type.value) + " is not one the toolchain knows");
    // Grid on the device (an ethernet_datacopy runs on ethernet cores instead).
    if (dimsOk && op.gridLoc.present() && op.gridSize.present() && op.type.value != "ethernet_datacopy") {
      Dim2 placed = op.placedGridSize();
      if (op.gridLoc.value.r + placed.r > device().workerRows || op.gridLoc.value.c + placed.c > device().workerCols) {
        auto diag = d_.error("grid-bounds", op.gridLoc.loc,
                             element + ": grid_loc " + dimText(op.gridLoc.value) + " with grid_size " + dimText(op.gridSize.value) +
                                 (op.gridTranspose.value ? " (transposed)" : "") + " extends past the " +
                                 std::to_string(device().workerRows) + "x" + std::to_string(device().workerCols) +
                                 " worker grid of " + device().name);
        diag.note("the op occupies rows " + std::to_string(op.gridLoc.value.r) + ".." +
                  std::to_string(op.gridLoc.value.r + placed.r - 1) + ", columns " + std::to_string(op.gridLoc.value.c) + ".." +
                  std::to_string(op.gridLoc.value.c + placed.c - 1));
      }
    }
    // Inputs.
    if (op.inDfLoc.valid() && op.inDf.size() != op.inputs.size())
      d_.error("in-df-count", op.inDfLoc, element + ": in_df lists " + std::to_string(op.inDf.size()) + " format(s) for " +
                                               std::to_string(op.inputs.size()) + " input(s)");
    for (size_t i = 0; i < op.inputs.size(); ++i) checkOperand(g, op, i, dimsOk);
    // Formats.
    for (const auto& f : op.inDf)
      if (!archSupportsFormat(f.value)) formatArchError(f.loc, element, f.value);
    for (const Field<DataFormat>* f : {&op.outDf, &op.intermedDf, &op.accDf})
      if (f->present() && !archSupportsFormat(f->value)) formatArchError(f->loc, element, f->value);
    checkOpFormats(op, target_.arch, d_);
    // Dest capacity.
    if (dimsOk && op.ublock.present() && op.accDf.present() && op.type.value != "tilizer") {
      bool fp32 = op.accDf.value == DataFormat::Float32 || op.accDf.value == DataFormat::Int32;
      int limit = maxUblockTiles(target_.arch, fp32);
      int64_t tiles = op.ublock.value.r * op.ublock.value.c;
      if (tiles > limit)
        d_.error("ublock-fits-dest", op.ublock.loc,
                 element + ": ublock " + dimText(op.ublock.value) + " holds " + std::to_string(tiles) +
                     " tiles but dest holds " + std::to_string(limit) + " with " + std::string(dataFormatName(op.accDf.value)) +
                     " accumulation (half of dest: math and pack double-buffer it)");
    }
    // Output buffer.
    if (op.bufSizeMb.present()) {
      int64_t b = op.bufSizeMb.value;
      if (b < 1)
        d_.error("buf-size-mb", op.bufSizeMb.loc, element + ": buf_size_mb must be at least 1, got " + std::to_string(b));
      else if (b > 1 && b % 2 != 0)
        d_.error("buf-size-mb", op.bufSizeMb.loc, element + ": buf_size_mb " + std::to_string(b) +
                                                     " must be 1 (single-buffered) or even (double-buffered halves)");
      // Whether the buffer fits L1 next to everything else on the core is
      // pipegen's L1 allocation, which sees every buffer of the core.
    }
    checkAttributes(op);
    checkInputCount(op);
    if (op.untilizeOutput.value) checkUntilize(op);
    if (op.tileDim.present()) {
      checkTileDim(op.tileDim, element);
      checkTileFormat(op.tileDim.value, op.outDf, element, "its output (out_df)");
    }
    if (op.type.value == "fused_op") {
      if (!op.attributes.fusedOpId.present())
        d_.error("unknown-fused-op", op.type.loc, element + ": a fused_op needs attributes.fused_op_id");
      else if (auto f = fused_.find(op.attributes.fusedOpId.value); f == fused_.end())
        d_.error("unknown-fused-op", op.attributes.fusedOpId.loc,
                 element + ": fused_op_id " + quote(op.attributes.fusedOpId.value) + " names no entry of fused_ops");
      else if (f->second->inputs.present() && op.inputsLoc.valid() &&
               f->second->inputs.value != static_cast<int64_t>(op.inputs.size()))
        d_.error("fused-input-count", op.inputsLoc,
                 element + ": has " + std::to_string(op.inputs.size()) + " input(s) but fused op " + quote(f->first) +
                     " takes " + std::to_string(f->second->inputs.value))
            .note(f->second->inputs.loc, "inputs of fused op " + quote(f->first));
    }
    // Output shape check against consumers happens from the consumer side.
    (void)g;
  }

  // Element-wise ops take exactly their operands; a binary op with one input
  // is a netlist bug the backend only finds when it builds the kernel.
  void checkInputCount(const Op& op) {
    static const std::set<std::string> kBinary = {"add", "subtract", "multiply", "maximum"};
    static const std::set<std::string> kUnary = {"exp", "log", "sqrt", "reciprocal", "gelu", "gelu_derivative",
                                                 "sigmoid", "tanh", "abs", "sine", "cosine", "square", "power",
                                                 "lrelu", "datacopy", "nop", "ethernet_datacopy"};
    size_t want = kBinary.count(op.type.value) ? 2 : kUnary.count(op.type.value) ? 1 : 0;
    if (want == 0 || !op.inputsLoc.valid() || op.inputs.size() == want) return;
    d_.error("op-input-count", op.inputsLoc,
             "op " + quote(op.name) + ": " + op.type.value + " takes " + std::to_string(want) + " input" +
                 (want == 1 ? "" : "s") + ", got " + std::to_string(op.inputs.size()));
  }

  void checkAttributes(const Op& op) {
    const std::string element = "op " + quote(op.name);
    const OpAttributes& a = op.attributes;
    if (op.type.value == "matmul" && !a.identity.value && op.inputs.size() >= 2) {
      if (!a.mK.present() || !a.uKt.present())
        d_.error("matmul-attributes", a.loc.valid() ? a.loc : op.type.loc, element + ": matmul needs attributes m_k and u_kt");
      else if (a.mK.value < 1 || a.uKt.value < 1)
        d_.error("matmul-attributes", a.mK.loc, element + ": m_k and u_kt must be at least 1");
    }
    if (op.type.value == "reduce") {
      if (!a.reduceDim.present() || (a.reduceDim.value != "r" && a.reduceDim.value != "c" && a.reduceDim.value != "z"))
        d_.error("reduce-attributes", a.reduceDim.present() ? a.reduceDim.loc : op.type.loc,
                 element + ": reduce needs attributes.dim r, c or z");
      if (!a.reduceType.present() || (a.reduceType.value != "max" && a.reduceType.value != "sum" && a.reduceType.value != "avg"))
        d_.error("reduce-attributes", a.reduceType.present() ? a.reduceType.loc : op.type.loc,
                 element + ": reduce needs attributes.type max, sum or avg");
      if (a.reduceDim.value == "z" && (!a.z.present() || a.z.value < 1))
        d_.error("reduce-attributes", a.reduceDim.loc, element + ": reduce over z needs attributes.z (the number of t slices to reduce)");
    }
    for (const auto& [index, kb] : a.kernelBroadcast)
      if (index < 0 || static_cast<size_t>(index) >= op.inputs.size())
        d_.error("operand-index", kb.loc, element + ": kernel_broadcast names input_" + std::to_string(index) + " but the op has " +
                                              std::to_string(op.inputs.size()) + " input(s)");
    if (a.reluMode.present() && a.reluMode.value != "min" && a.reluMode.value != "max" && a.reluMode.value != "none")
      d_.error("attribute-value", a.reluMode.loc, element + ": relu_mode must be min, max or none, got " + quote(a.reluMode.value));
  }

  void checkUntilize(const Op& op) {
    const std::string element = "op " + quote(op.name);
    SourceLoc loc = op.untilizeOutput.loc;
    for (const Graph& g : nl_.graphs)
      for (const Op& consumer : g.ops)
        for (const Operand& in : consumer.inputs)
          if (in.name == op.name)
            d_.error("untilize-output", in.loc, "op " + quote(consumer.name) + " reads op " + quote(op.name) +
                                                    ", whose output is untilized; an untilized output may only feed queues")
                .note(loc, "untilize_output set here");
    // The untilized rows go to exactly one [1, 1] queue, which no op reads back.
    const Queue* first = nullptr;
    for (const Queue& queue : nl_.queues) {
      if (queue.input.value != op.name) continue;
      if (first)
        d_.error("untilize-output", queue.loc,
                 "queue " + quote(queue.name) + " is a second queue fed by " + quote(op.name) + ", whose output is untilized; "
                 "an untilized output feeds one queue (no fork)")
            .note(first->loc, "first queue " + quote(first->name));
      first = first ? first : &queue;
      if (queue.gridSize.present() && !(queue.gridSize.value == Dim2{1, 1}))
        d_.error("untilize-output", queue.gridSize.loc,
                 "queue " + quote(queue.name) + " receives the untilized output of " + quote(op.name) + " and must have grid_size [1, 1]")
            .note(loc, "untilize_output set here");
      for (const Graph& g : nl_.graphs)
        for (const Op& consumer : g.ops)
          for (const Operand& in : consumer.inputs)
            if (in.name == queue.name)
              d_.error("untilize-output", in.loc, "op " + quote(consumer.name) + " reads queue " + quote(queue.name) +
                                                      ", which holds the untilized output of " + quote(op.name) +
                                                      "; untilized data feeds no op")
                  .note(loc, "untilize_output set here");
    }
    if (!first)
      d_.error("untilize-output", loc, element + ": an op with untilize_output must feed a queue");
    if (op.outDf.present() && isBfpFormat(op.outDf.value))
      d_.error("untilize-output", op.outDf.loc, element + ": untilized output cannot use block format " +
                                                    std::string(dataFormatName(op.outDf.value)) + " (rows share no exponent block)");
    // Untilizing packs from the buffer these ops also use for partial results.
    if (op.type.value == "matmul" && op.attributes.mK.value > 1)
      d_.error("untilize-output", loc, element + ": a matmul with m_k " + std::to_string(op.attributes.mK.value) +
                                           " keeps partial sums in its output buffer and cannot untilize it (needs m_k 1)");
    if (op.type.value == "reduce" && op.attributes.reduceType.value == "max" && op.attributes.reduceDim.value == "z")
      d_.error("untilize-output", loc, element + ": reduce max over z keeps partial results in its output buffer and "
                                                 "cannot untilize it");
  }

  void checkOperand(const Graph& g, const Op& op, size_t index, bool opDimsOk) {
    const Operand& in = op.inputs[index];
    const std::string element = "op " + quote(op.name);
    const Op* producerOp = nullptr;
    const Queue* producerQueue = nullptr;
    if (auto it = ops_.find(in.name); it != ops_.end()) producerOp = it->second;
    else if (auto qt = queues_.find(in.name); qt != queues_.end()) producerQueue = qt->second;
    if (!producerOp && !producerQueue) {
      d_.error("unknown-input", in.loc, element + ": input " + std::to_string(index) + " " + quote(in.name) + " names no queue or op");
      return;
    }
    if (producerOp == &op) {
      d_.error("graph-cycle", in.loc, element + ": reads its own output");
      return;
    }
    if (producerOp && producerOp->graph != g.name) {
      // Across chips an op may read an op directly (BUDA's queueless
      // multichip: the graphs then run as one temporal epoch); on one chip
      // data crosses graphs through queues.
      auto pg = graphs_.find(producerOp->graph);
      if (pg == graphs_.end()) return;
      auto fromChip = chipOf(*pg->second), toChip = chipOf(g);
      if (!fromChip || !toChip) return; // a bad target_device, reported already
      const ChipId from = *fromChip, to = *toChip;
      if (from == to) {
        d_.error("cross-graph-edge", in.loc,
                 element + " in graph " + quote(g.name) + " reads op " + quote(in.name) + " of graph " + quote(producerOp->graph) +
                     "; data crosses graphs only through queues")
            .note(producerOp->loc, "op " + quote(in.name) + " defined here");
        return;
      }
      if (!crossChipOpEdgesSupported(target_.arch)) {
        d_.error("cross-graph-edge", in.loc,
                 element + " on chip " + std::to_string(to) + " reads op " + quote(in.name) + " of graph " +
                     quote(producerOp->graph) + " on chip " + std::to_string(from) + "; " + archStr() +
                     " has no op-to-op edges between chips: put a queue between them")
            .note(producerOp->loc, "op " + quote(in.name) + " defined here");
        return;
      }
    }
    // Data format as produced.
    Field<DataFormat> produced = producerOp ? producerOp->outDf : producerQueue->df;
    if (index < op.inDf.size() && produced.present() && op.inDf[index].value != produced.value)
      d_.error("in-df-mismatch", op.inDf[index].loc,
               element + ": in_df[" + std::to_string(index) + "] is " + std::string(dataFormatName(op.inDf[index].value)) +
                   " but input " + quote(in.name) + " is " + std::string(dataFormatName(produced.value)))
          .note(produced.loc, "format of " + quote(in.name));
    // Formats in the producer's tiles.
    if (index < op.inDf.size())
      checkTileFormat(producerOp ? tileOf(producerOp->tileDim) : tileOf(producerQueue->tileDim), op.inDf[index], element,
                      "input " + std::to_string(index) + " (" + quote(in.name) + ")");
    // Shapes.
    if (!opDimsOk) return;
    auto src = producerOp ? opOutputShape(*producerOp) : queueShape(*producerQueue);
    if (!src) return;
    TensorShape shape = *src;
    if (in.unpad) {
      shape.r -= in.unpad->rt;
      shape.c -= in.unpad->ct;
      if (shape.r < 1 || shape.c < 1) {
        d_.error("tm-divisibility", in.unpad->loc, element + ": input_" + std::to_string(index) + "_unpad removes more tiles than " +
                                                        quote(in.name) + " has (" + src->str() + ")");
        return;
      }
    }
    std::string why;
    const Tm* failed = nullptr;
    auto after = applyTms(shape, in.tms, &failed, &why);
    if (!after) {
      d_.error("tm-divisibility", failed ? failed->loc : in.tmsLoc, element + ": input_" + std::to_string(index) + "_tms on " +
                                                                         quote(in.name) + " " + shape.str() + ": " + why);
      return;
    }
    if (in.pad) {
      after->r += in.pad->rt;
      after->c += in.pad->ct;
    }
    auto expected = expectedInputShape(op, index, *after);
    if (!expected) return;
    if (!(*expected == *after)) {
      auto diag = d_.error("shape-mismatch", in.loc,
                           element + " (" + op.type.value + "): input " + std::to_string(index) + " " + quote(in.name) + " is " +
                               after->str() + (in.tms.empty() && !in.pad && !in.unpad ? "" : " after its TMs") +
                               " but the op expects " + expected->str());
      diag.note(producerOp ? producerOp->loc : producerQueue->loc, quote(in.name) + " produces " + src->str());
    }
  }

  // What input `index` of `op` must look like (after TMs), given what it is;
  // nullopt when the op type's rule is not checked statically.
  std::optional<TensorShape> expectedInputShape(const Op& op, size_t index, const TensorShape& actual) const {
    auto outOpt = opOutputShape(op);
    if (!outOpt) return std::nullopt;
    TensorShape out = *outOpt;
    const std::string& type = op.type.value;
    const OpAttributes& a = op.attributes;
    if (isEltwise(type)) return out;
    if (type == "matmul") {
      if (a.identity.value || a.accumulate.value || a.z.present() || a.find("requant") || a.find("dequant")) return std::nullopt;
      if (!a.mK.present() || !a.uKt.present() || a.mK.value < 1 || a.uKt.value < 1) return std::nullopt;
      if (a.mK.value > (1 << 20) || a.uKt.value > (1 << 20)) return std::nullopt;
      int64_t k = a.mK.value * a.uKt.value;
      if (index == 0) return TensorShape{out.t, out.r, k};
      if (index == 1) return TensorShape{out.t, k, out.c};
      if (index == 2 && a.bias.value) return out;
      return std::nullopt;
    }
    if (type == "reduce") {
      const std::string& dim = a.reduceDim.value;
      if (dim == "r") return TensorShape{out.t, actual.r, out.c};
      if (dim == "c") return TensorShape{out.t, out.r, actual.c};
      if (dim == "z" && a.z.present()) return TensorShape{out.t * a.z.value, out.r, out.c};
    }
    return std::nullopt;
  }

  // Ops that run at once must not share a core: the ops of one graph, and of
  // every graph an op-to-op edge joins to it (one temporal epoch), per chip.
  void checkGridOverlap(const std::vector<const Graph*>& group) {
    struct Placed { const Op* op; const Graph* graph; int64_t r0, c0, r1, c1; };
    std::map<ChipId, std::vector<Placed>> byChip;
    for (const Graph* g : group) {
      auto chip = chipOf(*g);
      if (!chip) continue;
      for (const Op& op : g->ops) {
        if (!op.gridLoc.present() || !op.gridSize.present() || op.type.value == "ethernet_datacopy") continue;
        Dim2 s = op.placedGridSize();
        // Grids already rejected by positive-dims/grid-bounds would only add noise (and overflow).
        constexpr int64_t kMax = 1 << 20;
        if (s.r < 1 || s.c < 1 || s.r > kMax || s.c > kMax) continue;
        if (op.gridLoc.value.r < 0 || op.gridLoc.value.c < 0 || op.gridLoc.value.r > kMax || op.gridLoc.value.c > kMax) continue;
        byChip[*chip].push_back({&op, g, op.gridLoc.value.r, op.gridLoc.value.c, op.gridLoc.value.r + s.r, op.gridLoc.value.c + s.c});
      }
    }
    for (const auto& [chip, placed] : byChip)
      for (size_t i = 0; i < placed.size(); ++i)
        for (size_t j = 0; j < i; ++j) {
          const Placed& a = placed[j];
          const Placed& b = placed[i];
          if (!(b.r0 < a.r1 && a.r0 < b.r1 && b.c0 < a.c1 && a.c0 < b.c1)) continue;
          int64_t r = std::max(a.r0, b.r0), c = std::max(a.c0, b.c0);
          const std::string core = "core [" + std::to_string(r) + ", " + std::to_string(c) + "]";
          if (a.graph == b.graph)
            d_.error("grid-overlap", b.op->gridLoc.loc,
                     "op " + quote(b.op->name) + " overlaps op " + quote(a.op->name) + " in graph " + quote(a.graph->name) +
                         " (both use " + core + ")")
                .note(a.op->gridLoc.loc, "op " + quote(a.op->name) + " placed here");
          else
            d_.error("grid-overlap", b.op->gridLoc.loc,
                     "op " + quote(b.op->name) + " of graph " + quote(b.graph->name) + " overlaps op " + quote(a.op->name) +
                         " of graph " + quote(a.graph->name) + " on chip " + std::to_string(chip) + " (both use " + core +
                         "); op-to-op edges join the two graphs into one temporal epoch, so they run at once")
                .note(a.op->gridLoc.loc, "op " + quote(a.op->name) + " placed here");
        }
  }

  void checkCycles(const Graph& g) {
    // Colour DFS over op->op edges inside the graph (iterative: graphs can be deep).
    std::unordered_map<std::string, const Op*> local;
    for (const Op& op : g.ops) local.emplace(op.name, &op);
    std::unordered_map<const Op*, int> colour; // 0 white, 1 grey, 2 black
    for (const Op& root : g.ops) {
      if (colour[&root]) continue;
      std::vector<std::pair<const Op*, size_t>> stack{{&root, 0}};
      colour[&root] = 1;
      while (!stack.empty()) {
        auto& [op, next] = stack.back();
        if (next == op->inputs.size()) {
          colour[op] = 2;
          stack.pop_back();
          continue;
        }
        const Operand& in = op->inputs[next++];
        auto it = local.find(in.name);
        if (it == local.end() || it->second == op) continue;
        int& c = colour[it->second];
        if (c == 1) {
          d_.error("graph-cycle", in.loc, "op " + quote(op->name) + " reads op " + quote(in.name) + ", which depends on " + quote(op->name) +
                                              ": ops of graph " + quote(g.name) + " form a cycle");
        } else if (c == 0) {
          c = 1;
          stack.push_back({it->second, 0});
        }
      }
    }
  }

  // ---------------------------------------------------------------- programs
  void checkPrograms() {
    for (const Program& p : nl_.programs) checkProgram(p);
  }

  void checkProgram(const Program& p) {
    const std::string element = "program " + quote(p.name);
    std::map<std::string, SourceLoc> declared;
    std::vector<SourceLoc> loops;
    auto use = [&](const Operand64& o, const std::string& what) {
      if (o.isVar && !declared.count(o.var))
        d_.error("undeclared-variable", o.loc, element + ": " + what + " uses " + o.var +
                                                   " before it is declared by var, staticvar or param");
    };
    for (const Instruction& ins : p.instructions) {
      switch (ins.kind) {
      case InstrKind::Param:
        // The caller binds parameters before the program runs anything.
        if (&ins != &p.instructions.front())
          d_.error("program-syntax", ins.loc, element + ": param must be the first instruction of the program");
        [[fallthrough]];
      case InstrKind::Var:
      case InstrKind::StaticVar:
        for (const VarDecl& v : ins.vars)
          if (auto [it, fresh] = declared.emplace(v.name, v.loc); !fresh)
            d_.warning("duplicate-variable", v.loc, element + ": " + v.name + " is declared again").note(it->second, "first declaration");
        break;
      case InstrKind::VarInst:
        for (const Operand64& a : ins.args) use(a, "varinst");
        // The BUDA runtime creates a variable on its first write; real netlists rely on it.
        if (!declared.count(ins.out)) {
          d_.warning("implicit-variable", ins.outLoc, element + ": varinst writes " + ins.out +
                                                          ", which no var, staticvar or param declares; it is declared implicitly");
          declared.emplace(ins.out, ins.outLoc);
        }
        break;
      case InstrKind::Loop:
        use(ins.loopCount, "loop");
        if (!ins.loopCount.isVar && ins.loopCount.value < 0)
          d_.error("loop-count", ins.loopCount.loc, element + ": loop count must not be negative");
        loops.push_back(ins.loc);
        break;
      case InstrKind::EndLoop:
        if (loops.empty()) d_.error("loop-balance", ins.loc, element + ": endloop without a matching loop");
        else loops.pop_back();
        break;
      case InstrKind::Execute:
        checkExecute(p, ins, use);
        break;
      case InstrKind::AllocateQueue:
      case InstrKind::DeallocateQueue:
        for (const auto& qn : ins.queues)
          if (!queues_.count(qn.value))
            d_.error("unknown-queue", qn.loc, element + ": " +
                                                  (ins.kind == InstrKind::AllocateQueue ? "allocate_queue" : "deallocate_queue") +
                                                  " names " + quote(qn.value) + ", which is not a queue");
        break;
      case InstrKind::EndProgram:
        break;
      }
    }
    for (SourceLoc l : loops) d_.error("loop-balance", l, element + ": loop has no matching endloop");
  }

  template <class Use> void checkExecute(const Program& p, const Instruction& ins, Use& use) {
    const std::string element = "program " + quote(p.name);
    auto gi = graphs_.find(ins.graphName.value);
    const Graph* graph = gi == graphs_.end() ? nullptr : gi->second;
    if (ins.graphName.present() && !graph)
      d_.error("unknown-graph", ins.graphName.loc, element + ": execute names graph " + quote(ins.graphName.value) + ", which does not exist");
    // Queues the graph reads: each needs settings.
    std::map<std::string, SourceLoc> reads;
    if (graph)
      for (const Op& op : graph->ops)
        for (const Operand& in : op.inputs)
          if (queues_.count(in.name)) reads.emplace(in.name, in.loc);
    std::set<std::string> given;
    for (const QueueSetting& qs : ins.queueSettings) {
      const std::string qel = element + ": queue_settings of " + quote(qs.queue);
      auto qi = queues_.find(qs.queue);
      if (qi == queues_.end()) {
        d_.error("unknown-queue", qs.loc, qel + ": " + quote(qs.queue) + " is not a queue");
        continue;
      }
      given.insert(qs.queue);
      const Queue& queue = *qi->second;
      for (auto [name, f] : {std::pair{"prologue", &qs.prologue}, {"epilogue", &qs.epilogue}})
        if (*f && (*f)->isVar)
          d_.error("static-property-variable", (*f)->loc, qel + ": " + name +
                                                              " is a static property and must be true or false, not a variable");
      for (const auto* f : {&qs.prologue, &qs.epilogue, &qs.zero, &qs.readOnly, &qs.rdPtrLocal, &qs.rdPtrGlobal, &qs.wrPtrGlobal,
                            &qs.globalRdptrAutoinc, &qs.rdPtrAutoinc, &qs.globalWrptrAutoinc})
        if (*f) use(**f, "queue_settings of " + quote(qs.queue));
      // Which pointers a program sets depends on the IO type: a queue is read
      // through a global and a local read pointer and written by its producer;
      // a ram is addressed by a global read and a global write pointer.
      bool isRam = queue.type.present() && queue.type.value == IoType::Ram;
      const char* kind = isRam ? "ram" : "queue";
      auto require = [&](const char* field, bool has) {
        if (!has) d_.error("queue-settings-field", qs.loc, qel + ": a " + std::string(kind) + " needs the setting '" + field + "'");
      };
      auto forbid = [&](const char* field, const std::optional<Operand64>& value, const char* why) {
        if (value)
          d_.error("queue-settings-field", value->loc, qel + ": " + field + " applies to " + why + "; " + quote(qs.queue) +
                                                           " is a " + kind);
      };
      require("rd_ptr_global", qs.rdPtrGlobal.has_value());
      if (isRam) {
        require("wr_ptr_global", qs.wrPtrGlobal.has_value());
        forbid("rd_ptr_local", qs.rdPtrLocal, "queues only");
      } else {
        require("rd_ptr_local", qs.rdPtrLocal.has_value());
        forbid("wr_ptr_global", qs.wrPtrGlobal, "rams only (a queue's writer advances it)");
        if (qs.epilogue && !qs.epilogue->isVar && qs.epilogue->value && !queue.isHostFed() && !queue.isExternal())
          d_.error("queue-settings-epilogue", qs.epilogue->loc,
                   qel + ": epilogue: true is not supported for a queue written by op " + quote(queue.input.value) +
                       " (BUDA issue 1818); stream it out with epilogue: false");
      }
      if (qs.rdPtrAutoinc && qs.globalRdptrAutoinc && !qs.rdPtrAutoinc->isVar && !qs.globalRdptrAutoinc->isVar &&
          qs.rdPtrAutoinc->value != 0 && qs.globalRdptrAutoinc->value != 0 &&
          qs.rdPtrAutoinc->value != qs.globalRdptrAutoinc->value)
        d_.error("queue-settings-field", qs.globalRdptrAutoinc->loc,
                 qel + ": rd_ptr_autoinc " + std::to_string(qs.rdPtrAutoinc->value) + " and global_rdptr_autoinc " +
                     std::to_string(qs.globalRdptrAutoinc->value) + " must be equal when both are set");
      if (qs.readOnly && !(qs.readOnly->isVar) && qs.readOnly->value && !queue.alias.present() && !aliasedQueues_.count(queue.name))
        // The spec reserves read_only for dual-view queues; real netlists also set it on KV-cache rams.
        d_.warning("queue-settings-field", qs.readOnly->loc, qel + ": read_only applies only to dual-view queues (alias)");
      if (graph && !isRam && reads.count(qs.queue)) checkOverread(*graph, queue, qs, qel, reads.at(qs.queue));
      if (graph && !reads.count(qs.queue) && !writtenBy(*graph, queue))
        d_.warning("queue-settings-unused", qs.loc, qel + ": graph " + quote(graph->name) + " neither reads nor writes " + quote(qs.queue));
    }
    for (const auto& [name, loc] : reads)
      if (!given.count(name)) {
        // A warning: the runtime then uses its defaults (no prologue, pointers at 0).
        auto diag = d_.warning("queue-settings-missing", ins.loc,
                             element + ": execute of graph " + quote(graph->name) + " has no queue_settings for input queue " + quote(name));
        diag.note(loc, "read here");
        QueueSetting defaults; // the runtime's: no prologue, no pops
        defaults.queue = name;
        defaults.loc = ins.loc;
        auto qi = queues_.find(name);
        if (qi != queues_.end() && !(qi->second->type.present() && qi->second->type.value == IoType::Ram))
          checkOverread(*graph, *qi->second, defaults, element + ": execute of graph " + quote(graph->name), loc);
      }
  }

  // queue-overread: one epoch reads input_count entries (times rd_ptr_autoinc)
  // of a host-fed queue that holds fewer, and nothing frees a slot during the
  // epoch (BUDA's global_rdptr_autoinc defaults to 0 for queues, and the host
  // pushes only into free slots), so the device would wait for the entry past
  // the last forever. Upstream's drivers cannot run such a netlist either;
  // it only completes with its DRAM reads decoupled (a perf mode, no data).
  void checkOverread(const Graph& g, const Queue& queue, const QueueSetting& qs, const std::string& qel, SourceLoc readAt) {
    if (!queue.isHostFed() || !queue.entries.present() || !g.inputCount.present()) return;
    auto literal = [](const std::optional<Operand64>& f, int64_t absent) -> std::optional<int64_t> {
      if (!f) return absent;
      if (f->isVar) return std::nullopt;
      return f->value;
    };
    auto prologue = literal(qs.prologue, 0);
    auto stride = literal(qs.rdPtrAutoinc, 1);
    auto pops = literal(qs.globalRdptrAutoinc, 0);
    if (!prologue || *prologue || !stride || *stride <= 0 || !pops || *pops != 0) return;
    const int64_t n = g.inputCount.value, e = queue.entries.value;
    if ((n - 1) * *stride >= e) // input i reads entry i * stride
      d_.warning("queue-overread", qs.loc,
                 qel + ": graph " + quote(g.name) + " reads " + std::to_string((n - 1) * *stride + 1) +
                     " entries of host queue " + quote(queue.name) + " in one epoch (input_count " + std::to_string(n) +
                     (*stride != 1 ? ", rd_ptr_autoinc " + std::to_string(*stride) : std::string()) + ") but it holds " +
                     std::to_string(e) + " and nothing pops it during the epoch (global_rdptr_autoinc 0): the host cannot "
                     "refill it and the device would wait forever")
          .note(readAt, "read here");
  }

  static bool writtenBy(const Graph& g, const Queue& queue) {
    for (const Op& op : g.ops)
      if (op.name == queue.input.value) return true;
    return false;
  }
};

} // namespace

void validateNetlist(const Netlist& netlist, const ValidationTarget& target, DiagnosticEngine& diags) {
  Validator(netlist, target, diags).run();
  validatePerfCheck(netlist, diags);
}

} // namespace tessera::netlist
