// Relay chains between chips (docs/cluster.md "The data path",
// docs/net2pipe.md "Several chips"): a buffer read on another chip is
// replicated there by relays on ethernet cores, hop by hop along the
// cluster's route; an ethernet_datacopy is such a chain per core.
#include "pipe/relays.hpp"

#include "device/device_contract.h"
#include "netlist/text.hpp"

#include <set>

namespace tessera::pipe::build {

using namespace netlist;


RelayChains::RelayChains(Shared& sh, std::vector<Buf>& bufs, std::vector<PendingPipe>& pending, int64_t inputCount,
                         FailFn fail)
    : sh_(sh), bufs_(bufs), pending_(pending), inputCount_(inputCount), fail_(std::move(fail)),
      links_(sh.cluster, sh.out.limits.ethL1DataBytes, contract::kEthStreamsPerCore) {}

// Where a buffer sits, for comments and messages.
std::string RelayChains::where(uint32_t h) const {
  const Buffer& d = bufs_[h].doc;
  const std::string chip = multiChip() ? "chip " + std::to_string(d.chipId) + " " : "";
  if (d.ethernetChan)
    return chip + "ethernet chan " + std::to_string(*d.ethernetChan) + " [y=" + std::to_string(d.core.r) +
           ", x=" + std::to_string(d.core.c) + "]";
  if (bufs_[h].place != Buf::Place::Core) return chip + "DRAM";
  return chip + coreText(d.core);
}

// The ethernet core of a channel as core_coordinates ([y, x], NOC).
std::optional<CoreCoord> RelayChains::ethCore(EthEndpoint at, SourceLoc loc) {
  const auto& eth = sh_.target.device->ethCores;
  if (at.chan < eth.size())
    return CoreCoord{static_cast<uint32_t>(eth[at.chan].y), static_cast<uint32_t>(eth[at.chan].x)};
  fail("pipe-ethernet", loc,
       "chip " + std::to_string(at.chip) + " ethernet channel " + std::to_string(at.chan) + " does not exist: device " +
           quote(sh_.target.device->name) + " has " + std::to_string(eth.size()) + " ethernet cores");
  return std::nullopt;
}

// A relay (or an ethernet_datacopy's output) on an ethernet core carrying
// `like`'s tiles; read like a packer (reorder window, chunks); sized for
// two blocks of `granule` tiles where the input allows.
std::optional<uint32_t> RelayChains::ethBuffer(const Buffer& like, int64_t granule, EthEndpoint at, BufferType type, const Op* op,
                                  int category, const std::string& comment, SourceLoc loc) {
  const auto core = ethCore(at, loc);
  if (!core) return std::nullopt;
  Buf b = relayLike(like, granule, type, op, category, comment);
  Buffer& d = b.doc;
  d.chipId = at.chip;
  d.ethernetChan = at.chan;
  d.core = *core;
  d.mblockK = like.mblockK ? like.mblockK : 1;
  links_.place(at, d.tileSize);
  return addRelay(std::move(b));
}

// The part of a relay buffer both kinds share: `like`'s tiles and shape,
// read like a packer, sized for two blocks of `granule` tiles where the
// input allows. Nothing computes on a relay's core: it moves single tiles
// as well as blocks, so it may shrink to one tile (or its reorder window)
// when the core's L1 is short.
Buf RelayChains::relayLike(const Buffer& like, int64_t granule, BufferType type, const Op* op, int category,
                                const std::string& comment) {
  Buf b;
  b.category = category;
  b.orderKey = bufs_.size();
  b.op = op;
  b.packer = true;
  b.ublockTiles = 1;
  b.granule = 1;
  b.minSize = 1;
  Buffer& d = b.doc;
  d.uniqid = sh_.newId();
  d.mdOpName = like.mdOpName;
  d.bufferType = type;
  d.comment = comment;
  d.tilesPerInput = like.tilesPerInput;
  d.epochTiles = static_cast<uint32_t>(like.tilesPerInput * inputCount_);
  d.sizeTiles = static_cast<uint32_t>(std::min<int64_t>(like.tilesPerInput, 2 * std::max<int64_t>(1, granule)));
  d.tileSize = like.tileSize;
  d.dataFormat = like.dataFormat;
  d.ublockRt = like.ublockRt;
  d.ublockCt = like.ublockCt;
  d.mblockM = like.mblockM;
  d.mblockN = like.mblockN;
  d.untilizedOutput = like.untilizedOutput;
  d.untilizedOutputFullRDim = like.untilizedOutputFullRDim;
  d.untilizedOutputFullCDim = like.untilizedOutputFullCDim;
  d.untilizedOutputRDim = like.untilizedOutputRDim;
  d.untilizedOutputCDim = like.untilizedOutputCDim;
  d.untilizedOutputZDim = like.untilizedOutputZDim;
  return b;
}

// Appends relay `b`; its comment gains where it sits.
uint32_t RelayChains::addRelay(Buf b) {
  bufs_.push_back(std::move(b));
  const uint32_t h = static_cast<uint32_t>(bufs_.size() - 1);
  bufs_[h].doc.comment += " at " + where(h);
  return h;
}

std::optional<uint32_t> RelayChains::pcieBuffer(const Buffer& like, int64_t granule, uint32_t chip, const Op* op,
                                                const std::string& comment, SourceLoc loc) {
  const SocDescriptor& soc = *sh_.target.device;
  // Cores any op on `chip` uses, in any graph: a relay never shares a core
  // (its stream ids and L1) with a kernel.
  std::set<std::pair<uint32_t, uint32_t>> busy;
  for (const Graph& g : sh_.nl.graphs) {
    if (!g.targetDevice.present() || static_cast<uint32_t>(g.targetDevice.value) != chip) continue;
    for (const Op& o : g.ops) {
      const Dim2 at = o.gridLoc.value, size = o.placedGridSize();
      for (int64_t r = at.r; r < at.r + size.r; ++r)
        for (int64_t c = at.c; c < at.c + size.c; ++c) busy.insert({static_cast<uint32_t>(r), static_cast<uint32_t>(c)});
    }
  }
  // From the grid's last core backwards: away from where netlists place ops.
  std::optional<CoreCoord> core;
  for (int r = soc.workerRows - 1; r >= 0 && !core; --r)
    for (int c = soc.workerCols - 1; c >= 0 && !core; --c) {
      const uint32_t ur = static_cast<uint32_t>(r), uc = static_cast<uint32_t>(c);
      if (!busy.count({ur, uc}) && !pcieTaken_.count({chip, ur, uc})) core = CoreCoord{ur, uc};
    }
  if (!core) {
    unrouted_ = true;  // the producer's output then is no second error
    fail("pipe-unsupported", loc,
         "chip " + std::to_string(chip) + " has no worker core left for a relay through PCIe (every core of " +
             quote(soc.name) + " holds an op or another relay)");
    return std::nullopt;
  }
  pcieTaken_.insert({chip, core->r, core->c});
  Buf b = relayLike(like, granule, BufferType::Relay, op, 3, comment);
  Buffer& d = b.doc;
  d.chipId = chip;
  d.pcieRelay = true;
  d.core = *core;
  return addRelay(std::move(b));
}

// A pipe moving every tile of `from`, in order, to `to` (a link of a
// relay chain: on one chip, or over ethernet between linked channels).
PendingPipe RelayChains::chainPipe(uint32_t from, uint32_t to, const Op* op, int input, const std::string& what) {
  PendingPipe p;
  const int64_t tiles = bufs_[from].doc.tilesPerInput;
  p.tiles.reserve(static_cast<size_t>(tiles));
  for (int64_t k = 0; k < tiles; ++k) p.tiles.push_back(SourceTile{from, k});
  p.outputs.push_back(to);
  p.op = op;
  p.input = input;
  const bool ethernet = bufs_[from].doc.chipId != bufs_[to].doc.chipId;
  const bool viaPcie = ethernet && bufs_[from].doc.pcieRelay;
  p.comment = std::string(viaPcie ? "PCIe: " : ethernet ? "Ethernet: " : "Relay: ") + what + ", " + where(from) + " to " + where(to);
  return p;
}

int64_t RelayChains::granuleOf(uint32_t h) const {
  const Buf& b = bufs_[h];
  return b.packer ? b.ublockTiles : std::max<int64_t>(1, int64_t{b.doc.ublockRt} * b.doc.ublockCt);
}

// Who reads a chain: an op input, or a queue an op writes; onChip adds the
// list (the pipe). Each reading pipe gets chains of its own: a chain is one
// FIFO that pipegen fills reader after reader, so two pipes sharing it (two
// operands of one core, two cores or ops one of which waits on the other)
// would each wait for tiles queued behind the other's.
std::string RelayChains::readerKey(const Op& op, int input, const std::string& queue) {
  // Distinct first characters: no op name collides with a queue name.
  return queue.empty() ? "o" + std::to_string(input) + ":" + op.name : "q:" + queue;
}

// The replica on `chip` of buffer `src` (on another chip) for one reader:
// the last relay of a chain along ClusterDescriptor::route, built on first
// use; every relay of the chain is the replica of its chip for that
// reader's later tiles.
std::optional<uint32_t> RelayChains::relayTo(uint32_t src, uint32_t chip, const Op& forOp, int input, SourceLoc loc,
                                             const std::string& queue, const std::string& who) {
  if (auto it = relayed_.find({src, chip, who}); it != relayed_.end()) return it->second;
  std::vector<SourceTile> all;
  const int64_t tiles = bufs_[src].doc.tilesPerInput;
  all.reserve(static_cast<size_t>(tiles));
  for (int64_t k = 0; k < tiles; ++k) all.push_back(SourceTile{src, k});
  const Buffer like = bufs_[src].doc; // a copy: ethBuffer grows bufs_
  return chain(all, like, granuleOf(src), chip, forOp, input, loc, queue, bufs_[src].doc.mdOpName,
               [&](uint32_t c) -> std::optional<uint32_t> {
                 auto it = relayed_.find({src, c, who});
                 return it == relayed_.end() ? std::nullopt : std::optional<uint32_t>(it->second);
               },
               [&](uint32_t c, uint32_t h) { relayed_.emplace(std::make_tuple(src, c, who), h); });
}

// A consumer's tiles from several buffers of another chip, gathered there
// in its order into one chain (as BUDA gathers a chip-to-chip pipe on the
// producer's chip): one chain instead of one per buffer.
std::optional<uint32_t> RelayChains::gatherTo(const std::vector<SourceTile>& tiles, uint32_t chip, const Op& forOp,
                                              int input, SourceLoc loc, const std::string& queue,
                                              const std::string& who) {
  if (auto it = gathered_.find({tiles, chip, who}); it != gathered_.end()) return it->second;
  Buffer like = bufs_[tiles.front().source].doc;
  like.tilesPerInput = static_cast<uint32_t>(tiles.size());
  return chain(tiles, like, granuleOf(tiles.front().source), chip, forOp, input, loc, queue,
               like.mdOpName + " (gathered)",
               [&](uint32_t c) -> std::optional<uint32_t> {
                 auto it = gathered_.find({tiles, c, who});
                 return it == gathered_.end() ? std::nullopt : std::optional<uint32_t>(it->second);
               },
               [&](uint32_t c, uint32_t h) { gathered_.emplace(std::make_tuple(tiles, c, who), h); });
}

std::optional<uint32_t> RelayChains::chain(const std::vector<SourceTile>& first, const Buffer& like, int64_t granule,
                                           uint32_t chip, const Op& forOp, int input, SourceLoc loc,
                                           const std::string& queue, const std::string& source,
                                           const std::function<std::optional<uint32_t>(uint32_t)>& known,
                                           const std::function<void(uint32_t, uint32_t)>& made) {
  const uint32_t from = like.chipId;
  // Without ethernet every chip reaches every other through the host: one
  // hop, relay to relay over the two chips' PCIe cores.
  const bool pcie = sh_.target.device->ethCores.empty();
  const std::vector<ChipId> route =
      pcie ? std::vector<ChipId>{from, chip} : links_.route(from, chip, like.tileSize);
  // Who the chain is for: an op input, or a queue the op writes.
  const std::string reader = queue.empty() ? "op " + forOp.name + " input " + std::to_string(input) : "queue " + queue;
  const std::string what = source + " for " + reader;
  if (route.empty()) {
    noRoute(from, chip, loc,
            queue.empty() ? "op " + quote(forOp.name) + " input " + std::to_string(input) + " on chip " + std::to_string(chip) +
                                " reads " + quote(like.mdOpName) + " on chip " + std::to_string(from)
                          : "op " + quote(forOp.name) + " on chip " + std::to_string(from) + " writes queue " + quote(queue) +
                                " on chip " + std::to_string(chip));
    return std::nullopt;
  }
  std::optional<uint32_t> cur;
  for (size_t i = 0; i + 1 < route.size(); ++i) {
    if (auto k = known(route[i + 1])) {
      cur = *k;
      continue;
    }
    const std::string role = "Relay of " + what + " (" + routeText(route) + (pcie ? " through PCIe" : "") + "), ";
    std::optional<EthHop> hop;
    std::optional<uint32_t> tx, rx;
    if (pcie) {
      tx = pcieBuffer(like, granule, route[i], &forOp, role + "sending", loc);
      rx = pcieBuffer(like, granule, route[i + 1], &forOp, role + "receiving", loc);
    } else {
      hop = links_.hop(route[i], route[i + 1], like.tileSize);
      if (!hop) return std::nullopt; // route() only steps over links
      tx = ethBuffer(like, granule, hop->from, BufferType::Relay, &forOp, 3, role + "sending", loc);
      rx = ethBuffer(like, granule, hop->to, BufferType::Relay, &forOp, 3, role + "receiving", loc);
    }
    if (!tx || !rx) return std::nullopt;
    if (cur) {
      pending_.push_back(chainPipe(*cur, *tx, &forOp, input, what));
    } else { // the chain's first pipe: the tiles in order (a gather for a gathered chain)
      // Its relay reads DRAM when they come from DRAM: on another ethernet
      // core of the chip (relaying to the link's) when the link's has all
      // its DRAM input streams.
      uint32_t firstRelay = *tx;
      const auto fromDram = [&](const SourceTile& t) { return bufs_[t.source].place == Buf::Place::Dram; };
      if (!pcie && std::any_of(first.begin(), first.end(), fromDram)) {
        const EthEndpoint reader =
            spareFor(hop->from, dramReaders_, sh_.out.limits.dramInputStreamsPerCore, like.tileSize);
        ++dramReaders_[reader];
        if (!(reader == hop->from)) {
          auto r = ethBuffer(like, granule, reader, BufferType::Relay, &forOp, 3, role + "reading DRAM", loc);
          if (!r) return std::nullopt;
          firstRelay = *r;
        }
      }
      PendingPipe p;
      p.tiles = first;
      p.outputs.push_back(firstRelay);
      p.op = &forOp;
      p.input = input;
      p.comment = "Relay: " + what + ", " + (first.size() && first.front().source != first.back().source ? "gathered on " : "") +
                  where(first.front().source) + " to " + where(firstRelay);
      pending_.push_back(std::move(p));
      if (firstRelay != *tx) pending_.push_back(chainPipe(firstRelay, *tx, &forOp, input, what));
    }
    pending_.push_back(chainPipe(*tx, *rx, &forOp, input, what));
    cur = *rx;
    // The last relay of a chain into a queue writes its DRAM: when its core
    // has all its DRAM output streams, one more on-chip step to another
    // ethernet core of the chip (with room; linked or not) writes instead.
    if (!pcie && !queue.empty() && i + 2 == route.size()) {
      const EthEndpoint end{chip, *bufs_[*rx].doc.ethernetChan};
      const EthEndpoint writer = spareFor(end, dramWriters_, sh_.out.limits.dramOutputStreamsPerCore, like.tileSize);
      if (!(writer == end)) {
        auto w = ethBuffer(like, granule, writer, BufferType::Relay, &forOp, 3,
                           "Relay of " + what + " (" + routeText(route) + "), writing DRAM", loc);
        if (!w) return std::nullopt;
        pending_.push_back(chainPipe(*rx, *w, &forOp, input, what));
        cur = *w;
      }
      ++dramWriters_[writer];
    }
    made(route[i + 1], *cur);
  }
  return cur;
}

EthEndpoint RelayChains::spareFor(EthEndpoint at, std::map<EthEndpoint, uint32_t>& count, uint32_t limit,
                                  uint64_t tileBytes) {
  if (count[at] < limit) return at;
  const uint32_t chans = static_cast<uint32_t>(sh_.target.device->ethCores.size());
  for (uint32_t k = 0; k < chans; ++k) {
    const EthEndpoint e{at.chip, k};
    if (count[e] < limit && links_.hasRoom(e, tileBytes)) return e;
  }
  return at;
}

void RelayChains::noRoute(uint32_t from, uint32_t to, SourceLoc loc, const std::string& what) {
  unrouted_ = true;
  // Chips without ethernet (grayskull) talk through the host: the checker
  // accepts that, but net2pipe plans no pipes through host memory.
  if (sh_.target.device->ethCores.empty()) {
    fail("pipe-unsupported", loc,
         what + ": " + quote(sh_.target.device->name) +
             " has no ethernet cores, and net2pipe does not move data between chips through the host",
         {"Tessera's data path crosses chips only over ethernet (docs/net2pipe.md \"Several chips\")"});
    return;
  }
  fail("pipe-no-route", loc,
       what + ", but no ethernet route leads from chip " + std::to_string(from) + " to chip " + std::to_string(to),
       {"cluster " + quote(sh_.cluster.name) + ": " + std::to_string(sh_.cluster.chipCount()) + " chips, " +
        std::to_string(sh_.cluster.links.size()) + " ethernet links"});
}

// Every source tile on another chip than `chip` (padding aside) is read
// from a relay on `chip`: the replica of its buffer, or, per source chip,
// one gathered chain per distinct list when that makes fewer chains and
// the buffers outnumber the first hop's links (a queue cell, written by
// one stream, always gathers).
bool RelayChains::onChip(std::vector<std::vector<SourceTile>>& lists, uint32_t chip, const Op& op, int input, SourceLoc loc,
                         const std::string& queue) {
  auto remote = [&](const SourceTile& t) {
    const Buf& b = bufs_[t.source];
    return b.place != Buf::Place::Padding && b.doc.chipId != chip;
  };
  // Per source chip: the buffers read, and each list's tiles from there.
  std::map<uint32_t, std::set<uint32_t>> buffers;
  std::map<uint32_t, std::set<std::vector<SourceTile>>> gathers;
  std::map<uint32_t, size_t> replicas; // chains without gathering: per distinct list, its buffers there
  std::set<std::vector<SourceTile>> seen;
  for (const auto& list : lists) {
    const bool fresh = seen.insert(list).second;
    std::map<uint32_t, std::vector<SourceTile>> mine;
    std::map<uint32_t, std::set<uint32_t>> mineBufs;
    for (const SourceTile& t : list)
      if (remote(t)) {
        buffers[bufs_[t.source].doc.chipId].insert(t.source);
        mine[bufs_[t.source].doc.chipId].push_back(t);
        mineBufs[bufs_[t.source].doc.chipId].insert(t.source);
      }
    for (auto& [c, tiles] : mine) gathers[c].insert(std::move(tiles));
    if (fresh)
      for (const auto& [c, bs] : mineBufs) replicas[c] += bs.size();
  }
  std::set<uint32_t> gather;
  for (const auto& [c, bs] : buffers) {
    // Replicas of a few buffers spread over the parallel links of the first
    // hop; a gather puts all of a list on one.
    const std::vector<ChipId> route = sh_.cluster.route(c, chip);
    const size_t links = route.size() > 1 ? sh_.cluster.linksBetween(route[0], route[1]).size() : 0;
    if (bs.size() > 1 && (!queue.empty() || (gathers[c].size() < replicas[c] && bs.size() > links))) gather.insert(c);
  }
  // Equal lists become one pipe (a multicast) and share their chains.
  std::map<std::vector<SourceTile>, size_t> listIds;
  for (auto& list : lists) {
    const std::string who =
        readerKey(op, input, queue) + "#" + std::to_string(listIds.emplace(list, listIds.size()).first->second);
    std::map<uint32_t, uint32_t> replica;
    std::map<uint32_t, std::vector<SourceTile>> mine;
    for (const SourceTile& t : list)
      if (remote(t) && gather.count(bufs_[t.source].doc.chipId)) mine[bufs_[t.source].doc.chipId].push_back(t);
    std::map<uint32_t, std::pair<uint32_t, int64_t>> next; // source chip -> (its relay, next tile)
    for (const auto& [c, tiles] : mine) {
      auto r = gatherTo(tiles, chip, op, input, loc, queue, who);
      if (!r) return false;
      next[c] = {*r, 0};
    }
    for (SourceTile& t : list) {
      if (!remote(t)) continue;
      if (auto g = next.find(bufs_[t.source].doc.chipId); g != next.end()) {
        t = SourceTile{g->second.first, g->second.second++};
        continue;
      }
      auto it = replica.find(t.source);
      if (it == replica.end()) {
        auto r = relayTo(t.source, chip, op, input, loc, queue, who);
        if (!r) return false;
        it = replica.emplace(t.source, *r).first;
      }
      t.source = it->second;
    }
  }
  return true;
}

// Tile k of an ethernet buffer is tile k of the one pipe writing it (a
// relay's pipe sends one period in one pass), followed back to a buffer
// off the ethernet cores.
const std::vector<SourceTile>& RelayChains::origins(uint32_t h, const std::map<uint32_t, const PendingPipe*>& writers,
                                                    std::map<uint32_t, std::vector<SourceTile>>& memo, int depth) {
  if (auto it = memo.find(h); it != memo.end()) return it->second;
  std::vector<SourceTile> out;
  const auto w = writers.find(h);
  // (Chains are acyclic and short; the depth bound only guards the recursion.)
  if (w != writers.end() && depth < 64 &&
      static_cast<int64_t>(w->second->tiles.size()) == int64_t{bufs_[h].doc.tilesPerInput}) {
    out.reserve(w->second->tiles.size());
    for (const SourceTile& t : w->second->tiles) {
      if (!onEthernet(t.source)) {
        out.push_back(t);
        continue;
      }
      const std::vector<SourceTile>& up = origins(t.source, writers, memo, depth + 1);
      if (t.index < 0 || static_cast<size_t>(t.index) >= up.size()) {
        out.clear();
        break;
      }
      out.push_back(up[static_cast<size_t>(t.index)]);
    }
  }
  return memo.emplace(h, std::move(out)).first->second;
}

void RelayChains::originWindows(const std::vector<PendingPipe>& pending) {
  std::map<uint32_t, const PendingPipe*> writers;
  for (const PendingPipe& p : pending)
    if (p.outputs.size() == 1 && p.slots.empty() && onEthernet(p.outputs.front())) writers[p.outputs.front()] = &p;
  std::map<uint32_t, std::vector<SourceTile>> memo;
  for (const PendingPipe& p : pending) {
    // Per (origin, last relay): the order this pipe reads the origin's tiles
    // in through that chain (one lane of the origin per chain).
    std::map<std::pair<uint32_t, uint32_t>, std::vector<int64_t>> orders;
    for (size_t slot = 0; slot < p.slotCount(); ++slot)
      for (const SourceTile& t : p.tiles) {
        if (!onEthernet(t.source)) continue;
        const std::vector<SourceTile>& from = origins(t.source, writers, memo, 0);
        if (t.index < 0 || static_cast<size_t>(t.index) >= from.size()) continue;
        const SourceTile o = from[static_cast<size_t>(t.index)];
        if (bufs_[o.source].packer && !onEthernet(o.source)) orders[{o.source, t.source}].push_back(o.index);
      }
    for (const auto& [key, order] : orders) bufs_[key.first].window = std::max(bufs_[key.first].window, reorderWindow(order));
  }
}


// ethernet_datacopy (no kernel): core k of its grid is an input relay on
// the source chip's ethernet core ingress_channels[k] and its output on
// the destination chip's egress_channels[k] (without channels: the
// links the route takes, round robin), joined by a relay chain.
bool RelayChains::ethernetDatacopy(const Op& op, uint32_t src, std::vector<std::vector<uint32_t>>& ins,
                                   std::vector<uint32_t>& outs, std::vector<PendingPipe>& pipes) {
  const OpAttributes& attrs = op.attributes;
  const std::optional<int64_t> dest =
      attrs.destDevice.present() ? std::optional<int64_t>(attrs.destDevice.value) : std::nullopt;
  const std::vector<int64_t>& ingress = attrs.ingressChannels.value; // empty: the links in turn
  const std::vector<int64_t>& egress = attrs.egressChannels.value;
  const Dim2 grid = op.gridSize.value;
  const int64_t cores = grid.r * grid.c;
  const SourceLoc at = op.attributes.loc.valid() ? op.attributes.loc : op.loc;
  if (!dest || *dest < 0 || static_cast<uint32_t>(*dest) == src) {
    fail("pipe-unsupported", at,
         "ethernet_datacopy " + quote(op.name) + " on chip " + std::to_string(src) +
             " needs a dest_device attribute naming another chip");
    return false;
  }
  if ((!ingress.empty() && static_cast<int64_t>(ingress.size()) < cores) ||
      (!egress.empty() && static_cast<int64_t>(egress.size()) < cores)) {
    fail("pipe-unsupported", at,
         "ethernet_datacopy " + quote(op.name) + " has " + std::to_string(cores) +
             " cores but fewer ingress_channels or egress_channels");
    return false;
  }
  if (!op.inDf.empty() && op.inDf.front().value != op.outDf.value) {
    fail("pipe-unsupported", op.outDf.loc.valid() ? op.outDf.loc : op.loc,
         "ethernet_datacopy " + quote(op.name) + " converts " + std::string(dataFormatName(op.inDf.front().value)) +
             " to " + std::string(dataFormatName(op.outDf.value)) + ": ethernet cores have no packer to convert tiles");
    return false;
  }
  const uint32_t to = static_cast<uint32_t>(*dest);
  const std::vector<ChipId> route = sh_.cluster.route(src, to);
  if (route.empty()) {
    noRoute(src, to, at, "ethernet_datacopy " + quote(op.name) + " copies from chip " + std::to_string(src) + " to chip " +
                             std::to_string(to));
    return false;
  }
  Buffer like;
  like.mdOpName = op.name;
  like.tilesPerInput = static_cast<uint32_t>(op.t.value * op.mblock.value.r * op.mblock.value.c * op.ublock.value.r *
                                             op.ublock.value.c);
  like.tileSize = tileBytes(op.outDf.value, false, tileOf(op.tileDim));
  like.dataFormat = std::string(dataFormatName(op.outDf.value));
  like.ublockRt = static_cast<uint32_t>(op.ublock.value.r);
  like.ublockCt = static_cast<uint32_t>(op.ublock.value.c);
  like.mblockM = static_cast<uint32_t>(op.mblock.value.r);
  like.mblockN = static_cast<uint32_t>(op.mblock.value.c);
  const int64_t granule = op.ublock.value.r * op.ublock.value.c;
  ins.assign(op.inputs.size(), std::vector<uint32_t>(static_cast<size_t>(cores), 0));
  outs.assign(static_cast<size_t>(cores), 0);
  for (int64_t k = 0; k < cores; ++k) {
    const size_t kk = static_cast<size_t>(k);
    std::optional<uint32_t> first, last;
    if (!ingress.empty()) first = static_cast<uint32_t>(ingress[kk]);
    if (!egress.empty()) last = static_cast<uint32_t>(egress[kk]);
    const auto hops = links_.chain(src, to, first, last);
    if (!hops || hops->empty()) return false; // route() found one above
    const EthEndpoint inAt = first ? EthEndpoint{src, *first} : hops->front().from;
    const EthEndpoint outAt = last ? EthEndpoint{to, *last} : hops->back().to;
    const std::string core = "Op " + op.name + ": core " + std::to_string(k);
    auto in = ethBuffer(like, granule, inAt, BufferType::Relay, &op, 0, core + ", input relay", at);
    if (!in) return false;
    for (auto& perInput : ins) perInput[kk] = *in; // one input (the validator checks)
    uint32_t cur = *in;
    std::optional<uint32_t> out;
    const std::string what = op.name + " core " + std::to_string(k);
    for (size_t i = 0; i < hops->size(); ++i) {
      const EthHop& hop = (*hops)[i];
      const Buffer& cd = bufs_[cur].doc;
      if (!(cd.chipId == hop.from.chip && cd.ethernetChan == hop.from.chan)) {
        auto tx = ethBuffer(like, granule, hop.from, BufferType::Relay, &op, 0, core + ", relay", at);
        if (!tx) return false;
        pipes.push_back(chainPipe(cur, *tx, &op, -1, what));
        cur = *tx;
      }
      const bool final = i + 1 == hops->size() && hop.to == outAt;
      auto rx = ethBuffer(like, granule, hop.to, final ? BufferType::Ethernet : BufferType::Relay, &op, 0,
                          core + (final ? ", output" : ", relay"), at);
      if (!rx) return false;
      pipes.push_back(chainPipe(cur, *rx, &op, -1, what));
      cur = *rx;
      if (final) out = cur;
    }
    if (!out) { // the egress channel is not the link's end: one more step on the destination chip
      out = ethBuffer(like, granule, outAt, BufferType::Ethernet, &op, 0, core + ", output", at);
      if (!out) return false;
      pipes.push_back(chainPipe(cur, *out, &op, -1, what));
    }
    outs[kk] = *out;
  }
  return true;
}

} // namespace tessera::pipe::build
