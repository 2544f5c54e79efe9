// net2pipe's core: for one temporal epoch, the buffers of every op core and
// queue cell, the tile lists each consumer buffer needs (tile maps), the
// pipes that carry them (gathers, multicasts), the chunking of the source
// buffers, and the resource checks. docs/net2pipe.md describes every rule.
// The passes are in the files epoch_builder.hpp lists; this one holds
// build(), the output and compileNetlist.
#include "pipe/epoch_builder.hpp"

#include "device/arch_params.hpp"
#include "device/device_contract.h"
#include "netlist/text.hpp"
#include "pipe/dram_relays.hpp"
#include "pipe/mcast_split.hpp"
#include "pipe/period_slots.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

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

namespace build {

bool EpochBuilder::build(PipegenYaml& yaml) {
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

std::string EpochBuilder::epochNote() const {
  if (epoch_.graphs.size() == 1)
    return "temporal epoch " + std::to_string(epoch_.id) + " (graph " + quote(graph_.name) + ")";
  std::string names;
  for (const Graph* g : epoch_.graphs) names += (names.empty() ? "" : ", ") + quote(g->name);
  return "temporal epoch " + std::to_string(epoch_.id) + " (graphs " + names + ")";
}

CoreCoord EpochBuilder::physical(const Op& op, int64_t r, int64_t c) const {
  const Dim2 loc = op.gridLoc.value;
  if (op.gridTranspose.value) return CoreCoord{static_cast<uint32_t>(loc.r + c), static_cast<uint32_t>(loc.c + r)};
  return CoreCoord{static_cast<uint32_t>(loc.r + r), static_cast<uint32_t>(loc.c + c)};
}

void EpochBuilder::fail(const std::string& rule, SourceLoc loc, const std::string& message, const std::vector<std::string>& notes) {
  auto d = diags_.error(rule, loc, message);
  for (const auto& n : notes) d.note(n);
  d.note(epochNote());
  ok_ = false;
}

void EpochBuilder::emit(PipegenYaml& yaml) {
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
void EpochBuilder::recordAccess() {
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

} // namespace build

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
