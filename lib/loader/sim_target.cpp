#include "loader/sim_target.hpp"

#include "loader/ram_writes.hpp"

#include "formats/blocking.hpp"
#include "netlist/blocking.hpp"
#include "netlist/text.hpp"
#include "netlist/shape.hpp"
#include "sim/chip.hpp"
#include "sim/dram.hpp"
#include "sim/epoch_runner.hpp"
#include "support/file_io.hpp"
#include "support/source.hpp"
#include "support/text_format.hpp"
#include "support/yaml_tree.hpp"

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

// An index file of the build directory (manifest.yaml, epochs.yaml).
Expected<std::unique_ptr<yaml::Document>> readIndex(const std::string& path) {
  auto doc = yaml::Document::readMapFile(path);
  if (!doc) return Failure{doc.error() + " (run the stage tools again: loader run)"};
  return std::move(*doc);
}

std::set<std::string> scalarSet(const yaml::Node& seq) {
  std::set<std::string> out;
  if (seq.IsSequence())
    for (size_t i = 0; i < seq.size(); ++i) out.insert(seq[i].Scalar());
  return out;
}

std::string listText(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return "[" + out + "]";
}

std::string blobsDir(const std::string& dir, uint32_t epoch) {
  return (fs::path(dir) / ("temporal_epoch_" + std::to_string(epoch)) / "blobs").string();
}


} // namespace

Expected<SimArtifacts> loadSimArtifacts(const std::string& dir) {
  SimArtifacts a;
  a.dir = dir;
  if (!fs::is_directory(dir)) {
    return Failure{"--build-dir '" + dir + "' is not a directory"};
  }
  const std::string manifestPath = (fs::path(dir) / "manifest.yaml").string();
  if (!fs::exists(manifestPath)) {
    return Failure{"missing '" + manifestPath + "' (run net2hlks -o " + dir + ", or scripts/build-artifacts.sh)"};
  }
  auto manifest = readIndex(manifestPath);
  if (!manifest) return Failure{manifest.error()};
  yaml::Node ops = (*manifest)->root()["ops"];
  for (size_t i = 0; ops.IsSequence() && i < ops.size(); ++i) {
    yaml::Node op = ops[i];
    std::string kernel = (fs::path(dir) / op["kernel"].Scalar()).string();
    for (const char* elf : {"unpack.elf", "math.elf", "pack.elf"}) {
      std::string path = (fs::path(kernel) / elf).string();
      if (!fs::exists(path)) {
        return Failure{"missing '" + path + "' (run hlkc on " + kernel + ", or scripts/build-artifacts.sh)"};
      }
    }
    a.kernelOf[op["graph"].Scalar() + "/" + op["op"].Scalar()] = kernel;
  }

  const std::string epochsPath = (fs::path(dir) / "epochs.yaml").string();
  if (!fs::exists(epochsPath)) {
    return Failure{"missing '" + epochsPath + "' (run net2pipe -o " + dir + ", or scripts/build-artifacts.sh)"};
  }
  auto index = readIndex(epochsPath);
  if (!index) return Failure{index.error()};
  a.arch = (*index)->root()["arch"].Scalar();
  a.netlist = (*index)->root()["netlist"].Scalar();
  if (std::string m = (*manifest)->root()["netlist"].Scalar(); m != a.netlist) {
    return Failure{"'" + manifestPath + "' was built from '" + m + "' but '" + epochsPath + "' from '" + a.netlist +
                   "' (run scripts/build-artifacts.sh again)"};
  }
  yaml::Node epochs = (*index)->root()["epochs"];
  for (size_t i = 0; epochs.IsSequence() && i < epochs.size(); ++i) {
    yaml::Node e = epochs[i];
    SimEpochInfo info;
    info.id = static_cast<uint32_t>(std::stoul(e["epoch"].Scalar()));
    info.graph = e["graphs"][0].Scalar();
    for (size_t g = 0; e["graphs"].IsSequence() && g < e["graphs"].size(); ++g) info.graphs.push_back(e["graphs"][g].Scalar());
    info.prologue = scalarSet(e["prologue"]);
    info.epilogue = scalarSet(e["epilogue"]);
    std::string blobs = blobsDir(dir, info.id);
    if (!fs::is_directory(blobs)) {
      return Failure{"missing '" + blobs + "' (run pipegen and blobgen for temporal epoch " + std::to_string(info.id) +
                     ", or scripts/build-artifacts.sh)"};
    }
    a.epochs.push_back(std::move(info));
  }
  return a;
}

SimTarget::SimTarget(const netlist::Netlist& nl, const SocDescriptor& soc, SimArtifacts artifacts,
                     const std::optional<ClusterDescriptor>& cluster, unsigned jobs)
    : nl_(&nl), soc_(soc), art_(std::move(artifacts)), jobs_(std::max(1u, jobs)) {
  if (cluster && cluster->chipCount() > 1) cluster_ = std::make_unique<sim::Cluster>(soc_, *cluster);
  else chip_ = std::make_unique<sim::Chip>(soc_);
  for (const auto& q : nl.queues) queues_[q.name] = &q;
}

sim::BinariesCounters SimTarget::binariesCounters() const {
  sim::BinariesCounters sum = binaries_ ? binaries_->counters() : sim::BinariesCounters{};
  for (const auto& [chip, host] : clusterBinaries_) {
    const sim::BinariesCounters& c = host.counters();
    sum.commands += c.commands;
    sum.pushes += c.pushes;
    sum.pushedBytes += c.pushedBytes;
    sum.hits += c.hits;
    sum.evictions += c.evictions;
  }
  return sum;
}

SimTarget::~SimTarget() = default;

const SimEpochInfo& SimTarget::epochFor(runtime::EpochIo& io) const {
  const netlist::Graph& g = io.graph();
  std::set<std::string> touched;
  for (const auto& op : g.ops)
    for (const auto& in : op.inputs)
      if (queues_.count(in.name)) touched.insert(in.name);
  for (const auto& op : g.ops)
    for (const auto& q : nl_->queues)
      if (q.input.value == op.name) touched.insert(q.name);
  std::set<std::string> prologue, epilogue;
  for (const auto& q : touched) {
    if (io.settings(q).prologue) prologue.insert(q);
    if (io.settings(q).epilogue) epilogue.insert(q);
  }
  for (const auto& e : art_.epochs)
    if (e.graph == g.name && e.prologue == prologue && e.epilogue == epilogue) return e;
  throw RuntimeError("sim-epoch", g.loc,
                     "graph " + quote(g.name) + " with prologue " + listText(prologue) + " and epilogue " +
                         listText(epilogue) + " has no temporal epoch in '" +
                         (fs::path(art_.dir) / "epochs.yaml").string() +
                         "' (artifacts built from another netlist? run scripts/build-artifacts.sh again)");
}

void SimTarget::checkReservedDram(const sim::BinariesLayout& layout) {
  const uint64_t lo = layout.regionBase(), hi = lo + layout.regionBytes();
  for (const auto& q : nl_->queues) {
    if (q.location.value != netlist::IoLocation::Dram) continue;
    const uint64_t bytes = netlist::queueBufferBytes(q);
    for (size_t i = 0; i < q.dram.size(); ++i) {
      const auto& a = q.dram[i];
      if (a.channel < 0 || !layout.overlaps(static_cast<uint32_t>(a.channel), a.address, bytes)) continue;
      throw RuntimeError("sim-dram-reserved", a.loc.valid() ? a.loc : q.dramLoc,
                         "queue " + quote(q.name) + " buffer " + std::to_string(i) + " at channel " +
                             std::to_string(a.channel) + " [" + support::hexLiteral(a.address) + ", " +
                             support::hexLiteral(a.address + bytes) +
                             ") overlaps the binaries caches and epoch command queues the simulated chip keeps at [" +
                             support::hexLiteral(lo) + ", " + support::hexLiteral(hi) +
                             ") of every DRAM channel (docs/device-model.md, \"Binaries cache and epoch commands\")");
    }
  }
}

void SimTarget::pushBinaries(const netlist::Graph& graph, const SimEpochInfo& epoch, std::vector<sim::EpochCore>& cores,
                             uint32_t inputCount, const std::string& where) {
  if (!binaries_) {
    Expected<sim::BinariesLayout> layout = sim::BinariesLayout::forSoc(soc_);
    if (!layout) throw RuntimeError("sim-unsupported", graph.loc, where + ": " + layout.error());
    binaries_.emplace(std::move(*layout));
    checkReservedDram(binaries_->layout());  // once: the netlist's queues do not move
  }
  pushBinaries(*chip_, *binaries_, graph, epoch, cores, inputCount, where);
}

void SimTarget::pushBinaries(sim::Chip& chip, sim::BinariesHost& host, const netlist::Graph& graph,
                             const SimEpochInfo& epoch, std::vector<sim::EpochCore>& cores, uint32_t inputCount,
                             const std::string& where) {
  auto fail = [&](const std::string& rule, const std::string& msg) {
    return RuntimeError(rule, graph.loc, where + ": " + msg);
  };
  for (sim::EpochCore& core : cores) {
    const std::string name = core.name.empty() ? toString(core.noc) : core.name;
    // Parsed once per file per run, encoded only when the slot must be (re)filled.
    auto encode = [&](std::vector<uint8_t>& bytes, std::string& error) {
      sim::BinariesImage image;
      if (!core.kernelDir.empty()) {
        auto it = kernelFiles_.find(core.kernelDir);
        if (it == kernelFiles_.end()) {
          sim::BinariesImage parsed;
          if (!sim::readKernelDir(core.kernelDir, parsed, error)) return false;
          it = kernelFiles_.emplace(core.kernelDir, std::move(parsed)).first;
        }
        image.kernels = it->second.kernels;
      }
      if (!core.blobHexPath.empty()) {
        auto it = blobFiles_.find(core.blobHexPath);
        if (it == blobFiles_.end()) {
          sim::BinariesImage parsed;
          if (!sim::readBlobHexFile(core.blobHexPath, parsed, error)) return false;
          it = blobFiles_.emplace(core.blobHexPath, std::move(parsed.blob)).first;
        }
        image.blob = it->second;
      }
      bytes = sim::encodeBinaries(image);
      return true;
    };
    std::string error;
    if (!host.deploy(chip.dram(), core.noc, name, epoch.id, inputCount, encode, error))
      throw fail("sim-binaries", error);
    core.fromEpochCommand = true;
  }
}

// A queue's buffers, one per grid cell: DRAM channels, or host memories for
// `loc: host` (inside the PCIe window the chip models).
std::vector<sim::QueueBufferLoc> SimTarget::queueBuffers(const netlist::Queue& q, const FailFn& fail) {
  const bool host = q.location.value == netlist::IoLocation::Host;
  formats::Blocking b = netlist::blockingOf(q);
  const auto& allocs = host ? q.host : q.dram;
  const SourceLoc allocLoc = host ? q.hostLoc : q.dramLoc;
  if (static_cast<int64_t>(allocs.size()) != b.gridR * b.gridC)
    throw fail("sim-queue", allocLoc,
               "queue " + quote(q.name) + " has " + std::to_string(allocs.size()) + (host ? " host" : " dram") +
                   " buffers for a grid of " + std::to_string(b.gridR * b.gridC) + " cells");
  std::vector<sim::QueueBufferLoc> out;
  for (const auto& a : allocs) {
    if (host && (a.channel < 0 || a.channel >= int64_t{sim::kHostChannels} || a.address >= sim::kHostChannelBytes))
      throw fail("sim-unsupported", a.loc.valid() ? a.loc : allocLoc,
                 "queue " + quote(q.name) + ": host buffer at memory " + std::to_string(a.channel) + " address " +
                     support::hexLiteral(a.address) + " is outside the PCIe window the sim target models (" +
                     std::to_string(sim::kHostChannels) + " host memories of " +
                     support::hexLiteral(sim::kHostChannelBytes) + " bytes)");
    out.push_back({static_cast<uint32_t>(a.channel), a.address});
  }
  return out;
}

void SimTarget::execute(runtime::EpochIo& io) {
  const netlist::Graph& graph = io.graph();
  const SimEpochInfo& epoch = epochFor(io);
  const int64_t n = io.inputCount();
  const std::string where = "temporal epoch " + std::to_string(epoch.id) + " (graph " + quote(graph.name) + ")";
  auto fail = [&](const std::string& rule, SourceLoc loc, const std::string& msg) -> RuntimeError {
    return RuntimeError(rule, loc.valid() ? loc : graph.loc, where + ": " + msg);
  };

  std::map<std::string, const netlist::Op*> opsByName;
  for (const auto& op : graph.ops) opsByName[op.name] = &op;
  std::vector<const netlist::Queue*> written; // queues fed by this graph's ops
  std::set<std::string> untilized;            // of those, written row-major (untilize_output)
  std::set<std::string> writtenNames;
  std::set<std::string> gradients;            // of those, accumulated in place by a gradient op
  for (const auto& q : nl_->queues) {
    auto producer = opsByName.find(q.input.value);
    if (producer == opsByName.end()) continue;
    if (producer->second->gradientOp.value) gradients.insert(q.name);
    if (producer->second->untilizeOutput.value) untilized.insert(q.name);
    written.push_back(&q);
    writtenNames.insert(q.name);
  }
  std::vector<const netlist::Queue*> read; // queues the graph reads from DRAM, not written in it
  {
    std::set<std::string> seen;
    for (const auto& op : graph.ops)
      for (const auto& in : op.inputs) {
        auto it = queues_.find(in.name);
        if (it == queues_.end() || writtenNames.count(in.name) || !seen.insert(in.name).second) continue;
        read.push_back(it->second);
      }
  }

  // A ram view read while another view of its buffer is written: both at
  // their real slots of the one buffer, when no read overlaps a write.
  std::optional<SharedRamViews> views;
  {
    std::vector<RamAccess> ra, wa;
    for (const netlist::Queue* q : read) ra.push_back({q, io.rdPtrGlobal(q->name), &io.settings(q->name)});
    for (const netlist::Queue* q : written)
      if (!gradients.count(q->name)) wa.push_back({q, io.wrPtrGlobal(q->name), &io.settings(q->name)});
    std::string rule, error;
    const netlist::Queue* at = nullptr;
    views = sharedRamViews(ra, wa, n, rule, error, at, allowDualViewRace);
    if (!views && !error.empty()) throw fail(rule, at ? at->loc : graph.loc, error);
    if (views && !error.empty() && warn) warn(where + ": " + error + " [" + rule + "]");
  }

  // A queue's buffers are in device DRAM or, for `loc: host`, in host memory
  // (the chip reaches it through its PCIe core; the host reads it directly).
  const auto isHost = [](const netlist::Queue& q) { return q.location.value == netlist::IoLocation::Host; };
  auto memOf = [&](const netlist::Queue& q) -> sim::Dram& { return isHost(q) ? chip_->hostMemory() : chip_->dram(); };
  auto buffersOf = [&](const netlist::Queue& q) { return queueBuffers(q, fail); };
  auto setHeaders = [&](const netlist::Queue& q, const std::vector<sim::QueueBufferLoc>& bufs, uint32_t wr,
                        bool stay = false, uint32_t wrAutoinc = 0, uint32_t rdAutoinc = 0) {
    sim::QueueHeader h;
    h.rdPtr = 0;
    h.rdAutoinc = rdAutoinc;
    h.rdStay = stay ? 1 : 0;
    h.wrPtr = wr;
    h.wrAutoinc = wrAutoinc;
    h.slots = static_cast<uint32_t>(q.entries.value);
    for (const auto& buf : bufs)
      if (!sim::writeQueueHeader(memOf(q), buf.channel, buf.address, h))
        throw fail("sim-queue", isHost(q) ? q.hostLoc : q.dramLoc,
                   "queue " + quote(q.name) + ": header at channel " + std::to_string(buf.channel) + " address " +
                       support::hexLiteral(buf.address) + " is outside " + (isHost(q) ? "host memory" : "DRAM"));
  };

  // Inputs: the entries the runtime says the graph reads, into slots 0.. of
  // every cell, with headers rebuilt (rd 0, wr = the count). A queue read
  // with rd_ptr_autoinc 0 gives every input the same entry: one slot, and
  // the header tells the device's readers to stay on it.
  for (const netlist::Queue* q : read) {
    auto bufs = buffersOf(*q);
    formats::Blocking b = netlist::blockingOf(*q);
    if (views && q == views->reader) { // its real slots; the writer's loop writes the shared header
      for (int64_t i = 0; i < n; ++i) {
        std::string error;
        if (!sim::writeTensorEntry(memOf(*q), bufs, views->readSlots[static_cast<size_t>(i)], io.read(q->name, i), 0, b,
                                   q->df.value, error))
          throw fail("sim-queue", q->loc, "queue " + quote(q->name) + " entry " + std::to_string(i) + ": " + error);
      }
      continue;
    }
    const int64_t entries = q->entries.value;
    const runtime::QueueSettingsValues& s = io.settings(q->name);
    const bool stay = !s.prologue && q->type.value == netlist::IoType::Queue && s.rdPtrAutoinc == 0;
    const int64_t slots = s.prologue || stay ? 1 : std::min(n, entries);
    std::vector<Tensor> stored; // kept only to check reads past the slots repeat an entry
    const bool check = !s.prologue && n > slots;
    for (int64_t i = 0; i < n; ++i) {
      const Tensor& e = io.read(q->name, i);
      int64_t slot = i % std::max<int64_t>(slots, 1);
      if (i < slots) {
        std::string error;
        if (!sim::writeTensorEntry(memOf(*q), bufs, static_cast<uint32_t>(slot), e, 0, b, q->df.value, error))
          throw fail("sim-queue", q->loc, "queue " + quote(q->name) + " entry " + std::to_string(i) + ": " + error);
        if (check) stored.push_back(e);
      } else if (check && e.data != stored[static_cast<size_t>(slot)].data) {
        throw fail("sim-unsupported", q->loc,
                   "the graph reads " + std::to_string(n) + " different entries of queue " + quote(q->name) +
                       ", which has " + std::to_string(entries) + " slots: the sim target lays out at most one per slot");
      }
    }
    // Input i's entry is staged in slot i: a ram whose reads step
    // (global_rdptr_autoinc) has the device step one slot per entry read.
    setHeaders(*q, bufs, static_cast<uint32_t>(slots), stay, 0, ramReadStep(*q, s));
  }
  // A ram written by several inputs: the device steps its write pointer by
  // global_wrptr_autoinc after each entry (the header's wr_autoinc), so the
  // inputs land in slots 0, g, 2g, ... and are read back from there.
  std::map<std::string, RamWrites> ramSlots;
  for (const netlist::Queue* q : written) {
    if (q->type.value != netlist::IoType::Ram || gradients.count(q->name)) continue;
    if (views && q == views->writer) {
      ramSlots.emplace(q->name, RamWrites{views->wrAutoinc, views->writeSlots});
      continue;
    }
    std::string error;
    std::optional<RamWrites> w = ramWrites(*q, io.settings(q->name), n, error);
    if (!w) throw fail("sim-unsupported", q->loc, error);
    ramSlots.emplace(q->name, std::move(*w));
  }
  for (const netlist::Queue* q : written) {
    if (views && q == views->writer) {
      // The buffer's one header: the reader's pointer and stride in its
      // entries, the writer's in its own; slots 0 lets each view's streams
      // use their blob's slot count.
      sim::QueueHeader h;
      h.rdPtr = views->rdPtr;
      h.rdAutoinc = views->rdAutoinc;
      h.wrPtr = views->wrPtr;
      h.wrAutoinc = views->wrAutoinc;
      h.slots = 0;
      for (const auto& buf : buffersOf(*q))
        if (!sim::writeQueueHeader(memOf(*q), buf.channel, buf.address, h))
          throw fail("sim-queue", q->dramLoc, "queue " + quote(q->name) + ": header at channel " + std::to_string(buf.channel) +
                                                  " address " + support::hexLiteral(buf.address) + " is outside DRAM");
      continue;
    }
    auto r = ramSlots.find(q->name);
    setHeaders(*q, buffersOf(*q), 0, false, r == ramSlots.end() ? 0 : r->second.autoinc);
  }
  // A gradient op's ram: the device's firmware loads the slot wr_ptr names
  // (0) into L1, the kernel adds every input into it and the firmware stores
  // it back, so the slot starts as what the runtime holds (zeroed by `zero`).
  for (const netlist::Queue* q : written) {
    if (!gradients.count(q->name)) continue;
    std::string error;
    if (!sim::writeTensorEntry(memOf(*q), buffersOf(*q), 0, io.current(q->name), 0, netlist::blockingOf(*q), q->df.value,
                               error))
      throw fail("sim-queue", q->loc, "gradient queue " + quote(q->name) + ": " + error);
  }

  // The cores: every op core (its kernel) and every core with a blob.
  sim::EpochRun run;
  std::map<CoreCoord, size_t> index;
  auto coreAt = [&](CoreCoord noc) -> sim::EpochCore& {
    auto [it, added] = index.emplace(noc, run.cores.size());
    if (added) {
      run.cores.emplace_back();
      run.cores.back().noc = noc;
    }
    return run.cores[it->second];
  };
  for (const auto& op : graph.ops) {
    auto kernel = art_.kernelOf.find(graph.name + "/" + op.name);
    if (kernel == art_.kernelOf.end())
      throw fail("sim-artifacts", op.loc,
                 "op " + quote(op.name) + " has no kernel in '" + (fs::path(art_.dir) / "manifest.yaml").string() + "'");
    netlist::Dim2 placed = op.placedGridSize();
    for (int64_t r = 0; r < placed.r; ++r)
      for (int64_t c = 0; c < placed.c; ++c) {
        CoreCoord noc = soc_.workerCore(static_cast<int>(op.gridLoc.value.r + r), static_cast<int>(op.gridLoc.value.c + c));
        if (noc.x < 0)
          throw fail("sim-artifacts", op.loc, "op " + quote(op.name) + " core [" + std::to_string(r) + ", " +
                                                  std::to_string(c) + "] is outside the worker grid");
        sim::EpochCore& core = coreAt(noc);
        core.kernelDir = kernel->second;
        core.name = op.name + "[" + std::to_string(r) + "," + std::to_string(c) + "]";
      }
  }
  const std::string blobs = blobsDir(art_.dir, epoch.id);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(blobs, ec)) {
    std::string file = entry.path().filename().string();
    unsigned e = 0, chip = 0;
    int y = 0, x = 0;
    char tail[8] = {};
    if (std::sscanf(file.c_str(), "pipegen_epoch%u_%u_%d_%d%7s", &e, &chip, &y, &x, tail) != 5 ||
        std::string(tail) != ".hex" || e != epoch.id || chip != 0)
      continue;
    coreAt(CoreCoord{x, y}).blobHexPath = entry.path().string();
  }
  if (ec) throw fail("sim-artifacts", {}, "cannot list '" + blobs + "': " + ec.message());
  std::sort(run.cores.begin(), run.cores.end(), [](const auto& a, const auto& b) {
    return std::tie(a.noc.y, a.noc.x) < std::tie(b.noc.y, b.noc.x);
  });
  run.options.epoch.epochId = epoch.id;
  run.options.epoch.inputCount = static_cast<uint32_t>(n);
  run.options.recordTimeline = recordTimeline;
  run.options.threads = std::max(1u, chipThreads);  // the cores' slices side by side (same results whatever -j)
  run.options.recordTrace = recordTrace;
  run.options.inject = inject;
  pushBinaries(graph, epoch, run.cores, static_cast<uint32_t>(n), where);

  sim::ChipRunResult result = sim::runEpoch(*chip_, run);
  totalCycles_ += result.cycles;
  epochsRun_ += 1;
  tilesMoved_ += result.streams.tilesMoved();
  if (trace)
    trace("sim " + where + ": " + sim::chipStopName(result.stop) + " after " + std::to_string(result.cycles) +
          " cycles, " + std::to_string(run.cores.size()) + " cores");
  if (onEpoch && result.ok()) onEpoch(epoch, result);
  if (!result.ok()) {
    std::string what = std::string("the simulated chip stopped: ") + sim::chipStopName(result.stop);
    if (!result.faultCategory.empty()) what += " (" + result.faultCategory + ")";
    if (!result.faultCore.empty()) what += " on core " + quote(result.faultCore);
    if (result.stop == sim::ChipStop::Done) {
      for (const auto& c : result.cores)
        if (c.kernel && !c.harts.ok()) what += "; core " + quote(c.name) + " kernel did not exit cleanly";
    }
    throw fail("sim-" + std::string(sim::chipStopName(result.stop)), {}, what + "\n" + result.message);
  }

  // Outputs: every slot the device wrote, in order, to the runtime.
  for (const netlist::Queue* q : written) {
    auto bufs = buffersOf(*q);
    formats::Blocking b = netlist::blockingOf(*q);
    const uint32_t entries = static_cast<uint32_t>(q->entries.value);
    const bool ram = q->type.value == netlist::IoType::Ram;
    uint32_t count = 0;
    for (size_t k = 0; k < bufs.size(); ++k) {
      sim::QueueHeader h = sim::readQueueHeader(memOf(*q), bufs[k].channel, bufs[k].address);
      uint32_t c = ram ? 1 : sim::wrapPointer(h.wrPtr, entries);
      if (k == 0) count = c;
      else if (c != count)
        throw fail("sim-queue", q->loc,
                   "queue " + quote(q->name) + ": cell 0 holds " + std::to_string(count) + " entries but cell " +
                       std::to_string(k) + " holds " + std::to_string(c));
    }
    if (gradients.count(q->name)) count = 1;  // one accumulated entry, whatever the input count
    auto rs = ramSlots.find(q->name);
    if (rs != ramSlots.end()) count = static_cast<uint32_t>(rs->second.slots.size());
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t slot = rs != ramSlots.end() ? rs->second.slots[i] : i % entries;
      Tensor e(1, b.t, b.rowTiles() * formats::kTileDim, b.colTiles() * formats::kTileDim);
      std::string error;
      // An untilized queue (one cell, netlist rule untilize-output) holds the entry row-major.
      const bool rows = untilized.count(q->name) && bufs.size() == 1;
      if (rows ? !sim::readUntilizedEntry(memOf(*q), bufs[0], slot, q->df.value, e, 0, error, b.tile)
               : !sim::readTensorEntry(memOf(*q), bufs, slot, b, q->df.value, e, 0, error))
        throw fail("sim-queue", q->loc, "queue " + quote(q->name) + " entry " + std::to_string(i) + ": " + error);
      io.write(q->name, std::move(e));
    }
  }
}

} // namespace tessera::loader
