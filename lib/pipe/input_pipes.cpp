// net2pipe's epoch builder: tile maps (which producer tiles each consumer
// buffer needs, in order), the pipes that carry them (gathers, multicasts
// over NOC rectangles), the pipes writing queues, unconsumed outputs
// (epoch_builder.hpp).
#include "pipe/epoch_builder.hpp"

#include "netlist/blocking.hpp"
#include "netlist/text.hpp"
#include "pipe/pcie.hpp"

#include <algorithm>

namespace tessera::pipe::build {

using namespace netlist;

std::optional<EpochBuilder::Producer> EpochBuilder::producerOf(const Op& consumer, size_t input) {
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

void EpochBuilder::buildInputPipes(const Op& op, size_t input) {
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

std::string EpochBuilder::coresText(const std::vector<CoreCoord>& cs) {
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
std::vector<std::vector<int64_t>> EpochBuilder::rectangles(const Op& op, const std::vector<int64_t>& members) {
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
void EpochBuilder::buildQueueWrite(const Queue& q, const Op& op) {
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
void EpochBuilder::checkUnconsumed() {
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

} // namespace tessera::pipe::build
