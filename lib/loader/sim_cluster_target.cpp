// The sim target on several chips (docs/loader.md, "The sim target"): every
// launch of a temporal epoch runs all its graphs at once on a sim::Cluster.
// As on one chip, the runtime's QueueStore stays the authority on queue
// contents: before the launch every queue the launch reads goes into its
// chip's DRAM (target_device; `loc: host` queues into the host memory every
// chip reaches through its MMIO chip), the queues it writes get empty
// headers; each op's cores get their kernels and binaries on the op's chip
// (its graph's target_device), every chip gets its blobs (ethernet cores'
// too); after it the written slots go back to the runtime through the
// producing graph's EpochIo.
#include "loader/sim_target.hpp"
#include "loader/ram_writes.hpp"

#include "formats/blocking.hpp"
#include "netlist/blocking.hpp"
#include "netlist/multichip.hpp"
#include "netlist/text.hpp"
#include "sim/dram.hpp"
#include "support/text_format.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <tuple>

namespace tessera::loader {

namespace fs = std::filesystem;
using formats::Tensor;
using netlist::quote;
using runtime::RuntimeError;

namespace {

// The validator has accepted every target_device as a chip of the cluster.
template <typename Element>
ChipId chipIdOf(const Element& e) {
  return netlist::chipOf(e).value_or(0);
}

}  // namespace

void SimTarget::launch(const runtime::Launch& launch) {
  if (!cluster_) {
    runtime::Target::launch(launch);
    return;
  }
  executeOnCluster(launch.graphs);
}

const SimEpochInfo& SimTarget::epochForLaunch(const std::vector<runtime::EpochIo*>& ios) const {
  std::set<std::string> graphs, touched, prologue, epilogue;
  std::map<std::string, runtime::EpochIo*> ioOfQueue;
  for (runtime::EpochIo* io : ios) {
    const netlist::Graph& g = io->graph();
    graphs.insert(g.name);
    for (const auto& op : g.ops) {
      for (const auto& in : op.inputs)
        if (queues_.count(in.name) && ioOfQueue.emplace(in.name, io).second) touched.insert(in.name);
      for (const auto& q : nl_->queues)
        if (q.input.value == op.name && ioOfQueue.emplace(q.name, io).second) touched.insert(q.name);
    }
  }
  for (const auto& q : touched) {
    if (ioOfQueue.at(q)->settings(q).prologue) prologue.insert(q);
    if (ioOfQueue.at(q)->settings(q).epilogue) epilogue.insert(q);
  }
  for (const auto& e : art_.epochs) {
    std::set<std::string> eg(e.graphs.begin(), e.graphs.end());
    if (eg.empty()) eg.insert(e.graph);
    if (eg == graphs && e.prologue == prologue && e.epilogue == epilogue) return e;
  }
  std::string names;
  for (const auto& g : graphs) names += (names.empty() ? "" : ", ") + g;
  throw RuntimeError("sim-epoch", ios.front()->graph().loc,
                     "graphs [" + names + "] have no temporal epoch with these prologue and epilogue queues in '" +
                         (fs::path(art_.dir) / "epochs.yaml").string() +
                         "' (artifacts built from another netlist? run scripts/build-artifacts.sh again)");
}

void SimTarget::executeOnCluster(const std::vector<runtime::EpochIo*>& ios) {
  const SimEpochInfo& epoch = epochForLaunch(ios);
  const netlist::Graph& first = ios.front()->graph();
  std::string graphNames;
  for (runtime::EpochIo* io : ios) graphNames += (graphNames.empty() ? "" : ", ") + quote(io->graph().name);
  const std::string where = "temporal epoch " + std::to_string(epoch.id) + " (graph" + (ios.size() > 1 ? "s " : " ") +
                            graphNames + ")";
  auto fail = [&](const std::string& rule, SourceLoc loc, const std::string& msg) -> RuntimeError {
    return RuntimeError(rule, loc.valid() ? loc : first.loc, where + ": " + msg);
  };
  const ClusterDescriptor& desc = cluster_->descriptor();
  auto chipOrFail = [&](ChipId chip, SourceLoc loc, const std::string& what) -> sim::Chip& {
    if (!desc.hasChip(chip))
      throw fail("sim-cluster", loc, what + " is on chip " + std::to_string(chip) + ", which the cluster '" + desc.name +
                                         "' does not have");
    return cluster_->chip(chip);
  };

  // Which graph (EpochIo) produces and reads each queue of the launch.
  struct OpAt {
    const netlist::Op* op;
    runtime::EpochIo* io;
  };
  std::map<std::string, OpAt> opsByName;
  for (runtime::EpochIo* io : ios)
    for (const auto& op : io->graph().ops) opsByName[op.name] = OpAt{&op, io};
  std::vector<std::pair<const netlist::Queue*, runtime::EpochIo*>> written, read;
  std::set<std::string> untilized, gradients, writtenNames;
  for (const auto& q : nl_->queues) {
    auto producer = opsByName.find(q.input.value);
    if (producer == opsByName.end()) continue;
    if (producer->second.op->gradientOp.value) gradients.insert(q.name);
    if (producer->second.op->untilizeOutput.value) untilized.insert(q.name);
    written.emplace_back(&q, producer->second.io);
    writtenNames.insert(q.name);
  }
  {
    std::set<std::string> seen;
    for (runtime::EpochIo* io : ios)
      for (const auto& op : io->graph().ops)
        for (const auto& in : op.inputs) {
          auto it = queues_.find(in.name);
          if (it == queues_.end() || writtenNames.count(in.name) || !seen.insert(in.name).second) continue;
          read.emplace_back(it->second, io);
        }
  }

  // A ram view read while another view of its buffer is written: as on one
  // chip (sim_target.cpp), when both views are used by one graph on the
  // buffer's own chip.
  std::optional<SharedRamViews> views;
  {
    std::vector<RamAccess> ra, wa;
    std::map<const netlist::Queue*, runtime::EpochIo*> ioOf;
    for (const auto& [q, io] : read) {
      ra.push_back({q, io->rdPtrGlobal(q->name), &io->settings(q->name)});
      ioOf[q] = io;
    }
    for (const auto& [q, io] : written)
      if (!gradients.count(q->name)) {
        wa.push_back({q, io->wrPtrGlobal(q->name), &io->settings(q->name)});
        ioOf[q] = io;
      }
    const int64_t n = ios.empty() ? 1 : ios.front()->inputCount();
    std::string rule, error;
    const netlist::Queue* at = nullptr;
    views = sharedRamViews(ra, wa, n, rule, error, at, allowDualViewRace);
    if (!views && !error.empty()) throw fail(rule, at ? at->loc : SourceLoc{}, error);
    if (views && !error.empty() && warn) warn(where + ": " + error + " [" + rule + "]");
    if (views) {
      runtime::EpochIo* rio = ioOf.at(views->reader);
      runtime::EpochIo* wio = ioOf.at(views->writer);
      if (rio != wio || chipIdOf(rio->graph()) != chipIdOf(*views->writer))
        throw fail("sim-unsupported", views->reader->loc,
                   "ram " + quote(views->reader->name) + " is read in the epoch that writes " + quote(views->writer->name) +
                       ", a view of the same DRAM buffer (alias), from another graph or chip: the sim target handles "
                       "both views in one graph on the buffer's chip only");
    }
  }

  // A queue's buffers: device DRAM of its chip, or host memory (every chip
  // has its window on it; the host reads the producer's chip's).
  const auto isHost = [](const netlist::Queue& q) { return q.location.value == netlist::IoLocation::Host; };
  auto buffersOf = [&](const netlist::Queue& q) { return queueBuffers(q, fail); };
  // The memories holding a queue: its chip's DRAM, or every chip's host window.
  auto memoriesOf = [&](const netlist::Queue& q) {
    std::vector<sim::Dram*> mems;
    if (isHost(q))
      for (ChipId c : cluster_->chipIds()) mems.push_back(&cluster_->chip(c).hostMemory());
    else
      mems.push_back(&chipOrFail(chipIdOf(q), q.loc, "queue " + quote(q.name)).dram());
    return mems;
  };
  auto setHeaders = [&](const netlist::Queue& q, const std::vector<sim::QueueBufferLoc>& bufs, uint32_t wr, bool stay,
                        uint32_t wrAutoinc = 0, uint32_t rdAutoinc = 0) {
    sim::QueueHeader h;
    h.rdAutoinc = rdAutoinc;
    h.rdStay = stay ? 1 : 0;
    h.wrPtr = wr;
    h.wrAutoinc = wrAutoinc;
    h.slots = static_cast<uint32_t>(q.entries.value);
    for (sim::Dram* mem : memoriesOf(q))
      for (const auto& buf : bufs)
        if (!sim::writeQueueHeader(*mem, buf.channel, buf.address, h))
          throw fail("sim-queue", isHost(q) ? q.hostLoc : q.dramLoc,
                     "queue " + quote(q.name) + ": header at channel " + std::to_string(buf.channel) + " address " +
                         support::hexLiteral(buf.address) + " is outside " + (isHost(q) ? "host memory" : "DRAM"));
  };

  // A DRAM queue read by an op on another chip without ethernet: that chip
  // reads it through its PCIe core, from its peer window (sim/dram.hpp), which
  // gets a copy (docs/cluster.md, "Through the host").
  auto peerBuffers = [&](const netlist::Queue& q, ChipId through) {
    std::vector<sim::QueueBufferLoc> bufs = buffersOf(q);
    for (auto& b : bufs) {
      const auto ch = sim::peerWindowChannel(chipIdOf(q), b.channel);
      if (!ch)
        throw fail("sim-unsupported", q.loc,
                   "queue " + quote(q.name) + " on chip " + std::to_string(chipIdOf(q)) + " channel " +
                       std::to_string(b.channel) + " is outside chip " + std::to_string(through) + "'s PCIe peer window");
      b.channel = *ch;
    }
    return bufs;
  };
  auto peerReaders = [&](const netlist::Queue& q) {
    std::vector<std::pair<sim::Dram*, std::vector<sim::QueueBufferLoc>>> copies;
    if (isHost(q) || !soc_.ethCores.empty()) return copies;
    std::set<ChipId> chips;
    for (const auto& [name, at] : opsByName)
      for (const auto& in : at.op->inputs)
        if (in.name == q.name && chipIdOf(at.io->graph()) != chipIdOf(q)) chips.insert(chipIdOf(at.io->graph()));
    for (ChipId c : chips) copies.emplace_back(&cluster_->chip(c).hostMemory(), peerBuffers(q, c));
    return copies;
  };

  // Inputs, as on one chip (sim_target.cpp), into the queue's memories.
  for (const auto& [q, io] : read) {
    const auto peers = peerReaders(*q);
    auto bufs = buffersOf(*q);
    formats::Blocking b = netlist::blockingOf(*q);
    const int64_t n = io->inputCount();
    if (views && q == views->reader) { // its real slots; the writer's loop writes the shared header
      if (!peers.empty())
        throw fail("sim-unsupported", q->loc, "ram " + quote(q->name) + " is read through PCIe from another chip in the epoch that writes " +
                                                  quote(views->writer->name) + ", a view of the same DRAM buffer (alias)");
      for (int64_t i = 0; i < n; ++i) {
        std::string error;
        for (sim::Dram* mem : memoriesOf(*q))
          if (!sim::writeTensorEntry(*mem, bufs, views->readSlots[static_cast<size_t>(i)], io->read(q->name, i), 0, b,
                                     q->df.value, error))
            throw fail("sim-queue", q->loc, "queue " + quote(q->name) + " entry " + std::to_string(i) + ": " + error);
      }
      continue;
    }
    const runtime::QueueSettingsValues& s = io->settings(q->name);
    const bool stay = !s.prologue && q->type.value == netlist::IoType::Queue && s.rdPtrAutoinc == 0;
    const int64_t slots = s.prologue || stay ? 1 : std::min(n, q->entries.value);
    std::vector<Tensor> stored;
    const bool check = !s.prologue && n > slots;
    for (int64_t i = 0; i < n; ++i) {
      const Tensor& e = io->read(q->name, i);
      const int64_t slot = i % std::max<int64_t>(slots, 1);
      if (i < slots) {
        std::string error;
        for (sim::Dram* mem : memoriesOf(*q))
          if (!sim::writeTensorEntry(*mem, bufs, static_cast<uint32_t>(slot), e, 0, b, q->df.value, error))
            throw fail("sim-queue", q->loc, "queue " + quote(q->name) + " entry " + std::to_string(i) + ": " + error);
        for (const auto& [mem, pb] : peers)
          if (!sim::writeTensorEntry(*mem, pb, static_cast<uint32_t>(slot), e, 0, b, q->df.value, error))
            throw fail("sim-queue", q->loc, "queue " + quote(q->name) + " entry " + std::to_string(i) + ": " + error);
        if (check) stored.push_back(e);
      } else if (check && e.data != stored[static_cast<size_t>(slot)].data) {
        throw fail("sim-unsupported", q->loc,
                   "the graph reads " + std::to_string(n) + " different entries of queue " + quote(q->name) +
                       ", which has " + std::to_string(q->entries.value) +
                       " slots: the sim target lays out at most one per slot");
      }
    }
    // Input i's entry is in slot i: a ram whose reads step moves one slot per entry (ram_writes.hpp).
    setHeaders(*q, bufs, static_cast<uint32_t>(slots), stay, 0, ramReadStep(*q, s));
    for (const auto& [mem, pb] : peers) {
      sim::QueueHeader h;
      h.rdAutoinc = ramReadStep(*q, s);
      h.rdStay = stay ? 1 : 0;
      h.wrPtr = static_cast<uint32_t>(slots);
      h.slots = static_cast<uint32_t>(q->entries.value);
      for (const auto& buf : pb) sim::writeQueueHeader(*mem, buf.channel, buf.address, h);
    }
  }
  // A ram written by several inputs: slots 0, g, 2g, ... (ram_writes.hpp).
  std::map<std::string, RamWrites> ramSlots;
  for (const auto& [q, io] : written) {
    if (q->type.value != netlist::IoType::Ram || gradients.count(q->name)) continue;
    if (views && q == views->writer) {
      ramSlots.emplace(q->name, RamWrites{views->wrAutoinc, views->writeSlots});
      continue;
    }
    std::string error;
    std::optional<RamWrites> w = ramWrites(*q, io->settings(q->name), io->inputCount(), error);
    if (!w) throw fail("sim-unsupported", q->loc, error);
    ramSlots.emplace(q->name, std::move(*w));
  }
  for (const auto& [q, io] : written) {
    if (views && q == views->writer) { // the buffer's one header (sim_target.cpp)
      sim::QueueHeader h;
      h.rdPtr = views->rdPtr;
      h.rdAutoinc = views->rdAutoinc;
      h.wrPtr = views->wrPtr;
      h.wrAutoinc = views->wrAutoinc;
      h.slots = 0;
      for (sim::Dram* mem : memoriesOf(*q))
        for (const auto& buf : buffersOf(*q))
          if (!sim::writeQueueHeader(*mem, buf.channel, buf.address, h))
            throw fail("sim-queue", q->dramLoc, "queue " + quote(q->name) + ": header at channel " +
                                                    std::to_string(buf.channel) + " address " +
                                                    support::hexLiteral(buf.address) + " is outside DRAM");
      continue;
    }
    auto r = ramSlots.find(q->name);
    setHeaders(*q, buffersOf(*q), 0, false, r == ramSlots.end() ? 0 : r->second.autoinc);
  }
  // A DRAM queue written from another chip without ethernet goes through the
  // writer's PCIe core into its peer window (sim/dram.hpp; docs/cluster.md,
  // "Through the host"): its headers there, and nothing of the launch may
  // read it (the window holds what the writer sent, not the queue's chip's DRAM).
  std::map<std::string, std::pair<ChipId, std::vector<sim::QueueBufferLoc>>> peerWritten;
  for (const auto& [q, io] : written) {
    const ChipId writer = chipIdOf(io->graph());
    if (isHost(*q) || writer == chipIdOf(*q) || !soc_.ethCores.empty()) continue;
    std::vector<sim::QueueBufferLoc> bufs = peerBuffers(*q, writer);
    for (const auto& [name, at] : opsByName)
      for (const auto& in : at.op->inputs)
        if (in.name == q->name)
          throw fail("sim-unsupported", in.loc,
                     "op " + quote(name) + " reads queue " + quote(q->name) + ", which chip " + std::to_string(writer) +
                         " writes through PCIe in the same epoch");
    sim::QueueHeader h;
    h.slots = static_cast<uint32_t>(q->entries.value);
    if (auto r = ramSlots.find(q->name); r != ramSlots.end()) h.wrAutoinc = r->second.autoinc;
    for (const auto& b : bufs) sim::writeQueueHeader(cluster_->chip(writer).hostMemory(), b.channel, b.address, h);
    peerWritten.emplace(q->name, std::make_pair(writer, std::move(bufs)));
  }
  for (const auto& [q, io] : written) {
    if (!gradients.count(q->name)) continue;
    std::string error;
    for (sim::Dram* mem : memoriesOf(*q))
      if (!sim::writeTensorEntry(*mem, buffersOf(*q), 0, io->current(q->name), 0, netlist::blockingOf(*q), q->df.value,
                                 error))
        throw fail("sim-queue", q->loc, "gradient queue " + quote(q->name) + ": " + error);
  }

  // The cores of every chip: each op's on its graph's chip, every blob of the epoch.
  std::map<ChipId, sim::EpochRun> runs;
  std::map<ChipId, std::map<CoreCoord, size_t>> index;
  std::map<ChipId, const runtime::EpochIo*> ioOfChip;
  auto coreAt = [&](ChipId chip, CoreCoord noc) -> sim::EpochCore& {
    sim::EpochRun& run = runs[chip];
    auto [it, added] = index[chip].emplace(noc, run.cores.size());
    if (added) {
      run.cores.emplace_back();
      run.cores.back().noc = noc;
    }
    return run.cores[it->second];
  };
  for (runtime::EpochIo* io : ios) {
    const netlist::Graph& graph = io->graph();
    const ChipId chip = chipIdOf(graph);
    chipOrFail(chip, graph.loc, "graph " + quote(graph.name));
    ioOfChip.emplace(chip, io);
    for (const auto& op : graph.ops) {
      // No kernel: the ethernet cores' relay streams move its tiles (docs/cluster.md).
      if (op.type.value == "ethernet_datacopy") continue;
      auto kernel = art_.kernelOf.find(graph.name + "/" + op.name);
      if (kernel == art_.kernelOf.end())
        throw fail("sim-artifacts", op.loc,
                   "op " + quote(op.name) + " has no kernel in '" + (fs::path(art_.dir) / "manifest.yaml").string() + "'");
      const netlist::Dim2 placed = op.placedGridSize();
      for (int64_t r = 0; r < placed.r; ++r)
        for (int64_t c = 0; c < placed.c; ++c) {
          const CoreCoord noc =
              soc_.workerCore(static_cast<int>(op.gridLoc.value.r + r), static_cast<int>(op.gridLoc.value.c + c));
          if (noc.x < 0)
            throw fail("sim-artifacts", op.loc,
                       "op " + quote(op.name) + " core [" + std::to_string(r) + ", " + std::to_string(c) +
                           "] is outside the worker grid");
          sim::EpochCore& core = coreAt(chip, noc);
          core.kernelDir = kernel->second;
          core.name = op.name + "[" + std::to_string(r) + "," + std::to_string(c) + "]";
        }
    }
  }
  const std::string blobs = (fs::path(art_.dir) / ("temporal_epoch_" + std::to_string(epoch.id)) / "blobs").string();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(blobs, ec)) {
    const std::string file = entry.path().filename().string();
    unsigned e = 0, chip = 0;
    int y = 0, x = 0;
    char tail[8] = {};
    if (std::sscanf(file.c_str(), "pipegen_epoch%u_%u_%d_%d%7s", &e, &chip, &y, &x, tail) != 5 ||
        std::string(tail) != ".hex" || e != epoch.id)
      continue;
    chipOrFail(chip, {}, "blob '" + entry.path().string() + "'");
    coreAt(chip, CoreCoord{x, y}).blobHexPath = entry.path().string();
  }
  if (ec) throw fail("sim-artifacts", {}, "cannot list '" + blobs + "': " + ec.message());

  // Binaries: every worker through its chip's epoch command queue and cache;
  // ethernet cores (no cache) take their blob directly.
  for (auto& [chip, run] : runs) {
    std::sort(run.cores.begin(), run.cores.end(), [](const auto& a, const auto& b) {
      return std::tie(a.noc.y, a.noc.x) < std::tie(b.noc.y, b.noc.x);
    });
    const runtime::EpochIo* io = ioOfChip.count(chip) ? ioOfChip.at(chip) : ios.front();
    const uint32_t n = static_cast<uint32_t>(io->inputCount());
    run.options.epoch.epochId = epoch.id;
    run.options.epoch.inputCount = n;
    run.options.recordTrace = recordTrace;
    sim::Chip& c = cluster_->chip(chip);
    auto host = clusterBinaries_.find(chip);
    if (host == clusterBinaries_.end()) {
      Expected<sim::BinariesLayout> layout = sim::BinariesLayout::forSoc(soc_);
      if (!layout) throw fail("sim-unsupported", {}, layout.error());
      host = clusterBinaries_.emplace(chip, sim::BinariesHost(std::move(*layout))).first;
      checkReservedDram(host->second.layout());
    }
    std::vector<sim::EpochCore> workers;
    std::vector<size_t> at;
    for (size_t i = 0; i < run.cores.size(); ++i)
      if (!c.isEthernetCore(run.cores[i].noc)) {
        workers.push_back(run.cores[i]);
        at.push_back(i);
      }
    pushBinaries(c, host->second, io->graph(), epoch, workers, n, where + " chip " + std::to_string(chip));
    for (size_t i = 0; i < at.size(); ++i) run.cores[at[i]] = std::move(workers[i]);
  }

  sim::ClusterRunResult result = sim::runClusterEpoch(*cluster_, runs, jobs_);
  totalCycles_ += result.cycles;
  epochsRun_ += 1;
  for (const sim::ChipRunResult& r : result.chips) tilesMoved_ += r.streams.tilesMoved();
  if (trace) {
    size_t cores = 0;
    for (const auto& [chip, run] : runs) cores += run.cores.size();
    trace("sim " + where + ": " + sim::chipStopName(result.stop) + " after " + std::to_string(result.cycles) +
          " cycles, " + std::to_string(cores) + " cores on " + std::to_string(runs.size()) + " chips");
  }
  if (onClusterEpoch && result.ok()) onClusterEpoch(epoch, result);
  if (!result.ok()) {
    std::string what = std::string("the simulated cluster stopped: ") + sim::chipStopName(result.stop);
    if (!result.faultCategory.empty()) what += " (" + result.faultCategory + ")";
    if (result.faultChip)
      what += " on chip " + std::to_string(*result.faultChip) +
              (result.faultCore.empty() ? "" : " core " + quote(result.faultCore));
    if (result.stop == sim::ChipStop::Done)
      for (const sim::ChipRunResult& r : result.chips)
        for (const auto& c : r.cores)
          if (c.kernel && !c.harts.ok())
            what += "; chip " + std::to_string(r.chip) + " core " + quote(c.name) + " kernel did not exit cleanly";
    throw fail("sim-" + std::string(sim::chipStopName(result.stop)), {}, what + "\n" + result.message);
  }

  // Chips spread over processes: every process takes the written queues'
  // buffers from the process that ran their chip, so every process reads the
  // same outputs below (and its runtime stays in step).
  if (cluster_->distributed()) {
    std::vector<sim::Cluster::MemoryRegion> regions;
    for (const auto& [q, io] : written) {
      const formats::Blocking b = netlist::blockingOf(*q);
      const uint64_t tiled = static_cast<uint64_t>(b.tilesPerCore()) * formats::tileBytes(q->df.value, b.tile);
      const uint64_t rows = static_cast<uint64_t>(b.t) * b.rowTiles() * b.colTiles() * formats::kTileValues *
                            netlist::untilizedDatumBytes(q->df.value);
      const uint64_t bytes = sim::kQueueHeaderBytes + static_cast<uint64_t>(q->entries.value) * std::max(tiled, rows);
      const ChipId chip = isHost(*q) ? chipIdOf(io->graph()) : chipIdOf(*q);
      const sim::Dram& mem = isHost(*q) ? cluster_->chip(chip).hostMemory() : cluster_->chip(chip).dram();
      for (const auto& buf : buffersOf(*q))
        if (buf.address < mem.channelBytes())
          regions.push_back({chip, isHost(*q), buf.channel, buf.address, std::min(bytes, mem.channelBytes() - buf.address)});
    }
    cluster_->shareMemory(regions);
  }

  // Outputs: every slot the device wrote, to the producing graph's EpochIo.
  for (const auto& [q, io] : written) {
    auto peer = peerWritten.find(q->name);
    auto bufs = peer != peerWritten.end() ? peer->second.second : buffersOf(*q);
    formats::Blocking b = netlist::blockingOf(*q);
    // Host queues, and DRAM queues written through PCIe: the window of the chip that wrote them.
    const ChipId producerChip = chipIdOf(io->graph());
    sim::Dram& mem = isHost(*q) || peer != peerWritten.end() ? cluster_->chip(producerChip).hostMemory()
                                                             : *memoriesOf(*q).front();
    const uint32_t entries = static_cast<uint32_t>(q->entries.value);
    const bool ram = q->type.value == netlist::IoType::Ram;
    uint32_t count = 0;
    for (size_t k = 0; k < bufs.size(); ++k) {
      const sim::QueueHeader h = sim::readQueueHeader(mem, bufs[k].channel, bufs[k].address);
      const uint32_t c = ram ? 1 : sim::wrapPointer(h.wrPtr, entries);
      if (k == 0) count = c;
      else if (c != count)
        throw fail("sim-queue", q->loc,
                   "queue " + quote(q->name) + ": cell 0 holds " + std::to_string(count) + " entries but cell " +
                       std::to_string(k) + " holds " + std::to_string(c));
    }
    if (gradients.count(q->name)) count = 1;
    auto rs = ramSlots.find(q->name);
    if (rs != ramSlots.end()) count = static_cast<uint32_t>(rs->second.slots.size());
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t slot = rs != ramSlots.end() ? rs->second.slots[i] : i % entries;
      Tensor e(1, b.t, b.rowTiles() * formats::kTileDim, b.colTiles() * formats::kTileDim);
      std::string error;
      const bool rows = untilized.count(q->name) && bufs.size() == 1;
      if (rows ? !sim::readUntilizedEntry(mem, bufs[0], slot, q->df.value, e, 0, error, b.tile)
               : !sim::readTensorEntry(mem, bufs, slot, b, q->df.value, e, 0, error))
        throw fail("sim-queue", q->loc, "queue " + quote(q->name) + " entry " + std::to_string(i) + ": " + error);
      io->write(q->name, std::move(e));
    }
  }
}

}  // namespace tessera::loader
