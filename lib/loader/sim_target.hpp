// The `sim` target: runs each epoch on the simulated chip (lib/sim) from the
// artifacts the stage tools wrote into a build directory (docs/loader.md,
// "The sim target"):
//
//   DIR/manifest.yaml, DIR/kernels/<k>/{unpack,math,pack}.elf   net2hlks + hlkc
//   DIR/epochs.yaml                                              net2pipe
//   DIR/temporal_epoch_<E>/blobs/pipegen_epoch<E>_0_<y>_<x>.hex  pipegen + blobgen
//
// The runtime's QueueStore stays the authority on queue contents and
// pointers. For every execute the target rebuilds the queue buffers the
// epoch touches (in device DRAM, or for `loc: host` in the chip's host memory,
// which the streams reach through the PCIe core): the entries the graph reads (io.read(queue, i), i <
// inputCount) go into slots 0.. of each cell, tilized, with header rd_ptr 0
// and wr_ptr the count; the queues the graph writes get empty headers. After
// the epoch it reads back every written slot (wr_ptr) and hands each entry to
// io.write, so the runtime moves its own pointers exactly as for golden.
#pragma once
#include "device/cluster.hpp"
#include "device/soc_descriptor.hpp"
#include "runtime/interpreter.hpp"
#include "sim/binaries_cache.hpp"
#include "sim/chip.hpp"
#include "sim/cluster.hpp"
#include "sim/epoch_runner.hpp"
#include "support/expected.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tessera::sim {
class Chip;
}

namespace tessera::loader {

// One temporal epoch of DIR/epochs.yaml.
struct SimEpochInfo {
  uint32_t id = 0;
  std::string graph;                // the first graph (the only one on a single chip)
  std::vector<std::string> graphs;  // every graph of the temporal epoch
  std::set<std::string> prologue, epilogue;
};

// What a build directory holds, read once (manifest.yaml and epochs.yaml).
struct SimArtifacts {
  std::string dir;
  std::string arch;    // epochs.yaml `arch`
  std::string netlist; // epochs.yaml `netlist`: the file name the artifacts were built from
  std::map<std::string, std::string> kernelOf; // "graph/op" -> kernel directory (absolute or relative to cwd)
  std::vector<SimEpochInfo> epochs;
};

// Reads DIR's index files and checks every file a run needs (ELFs of every
// kernel the manifest names, each epoch's blobs directory). A failure
// names the missing or unreadable file.
Expected<SimArtifacts> loadSimArtifacts(const std::string& dir);

class SimTarget : public runtime::Target {
public:
  // A cluster of more than one chip runs every launch on a sim::Cluster
  // (`jobs` threads); otherwise one chip, as before.
  SimTarget(const netlist::Netlist& nl, const SocDescriptor& soc, SimArtifacts artifacts,
            const std::optional<ClusterDescriptor>& cluster = std::nullopt, unsigned jobs = 1);
  ~SimTarget() override;
  std::string name() const override { return "sim"; }
  void execute(runtime::EpochIo& io) override;
  // Several chips: every graph of the launch at once, on every chip of the
  // cluster (sim_cluster_target.cpp). One chip: Target::launch.
  void launch(const runtime::Launch& launch) override;
  bool multiChip() const { return cluster_ != nullptr; }
  // Several chips spread over processes (loader --mpi; not owned): every
  // process runs the same launches, each simulates its own chips.
  void setTransport(sim::ClusterTransport* transport) {
    if (cluster_) cluster_->setTransport(transport);
  }

  // Cycles of every epoch run so far (loader --profile).
  uint64_t totalCycles() const { return totalCycles_; }
  int64_t epochsRun() const { return epochsRun_; }
  uint64_t tilesMoved() const { return tilesMoved_; } // over the NOC and to and from DRAM, all epochs
  // The binaries cache's counters: epoch commands, images pushed, cache hits.
  sim::BinariesCounters binariesCounters() const; // every chip's, added up
  // Optional: one line per epoch run (loader --trace).
  std::function<void(const std::string&)> trace;
  // Record every kernel core's per-input timeline (loader --perf-check; one chip only).
  bool recordTimeline = false;
  // Record the units' busy spans and the streams' transfers (loader --trace, --report).
  bool recordTrace = false;
  // Threads that run one chip's cores side by side (an explicit loader -j;
  // default 1: a round is a fraction of a millisecond, and on a busy machine
  // waiting for a descheduled thread every round costs more than it gains).
  unsigned chipThreads = 1;
  // Injected faults (loader --inject; one chip only). Not owned; nullptr: none.
  sim::FaultInjector* inject = nullptr;
  // Run a ram view read while an overlapping entry of another view of its
  // buffer is written (a race on silicon) instead of refusing it
  // (dual-view-race); `warn` gets the race's description (loader
  // --allow-dual-view-race).
  bool allowDualViewRace = false;
  std::function<void(const std::string&)> warn;
  // Optional: every epoch run that completed, with the chip's report (loader --perf-report).
  std::function<void(const SimEpochInfo&, const sim::ChipRunResult&)> onEpoch;
  // Several chips: every launch that completed, with every chip's report.
  std::function<void(const SimEpochInfo&, const sim::ClusterRunResult&)> onClusterEpoch;

private:
  using FailFn = std::function<runtime::RuntimeError(const std::string& rule, SourceLoc loc, const std::string& msg)>;
  // A queue's buffers (one per grid cell) on one chip or a cluster; `fail` makes the located error.
  static std::vector<sim::QueueBufferLoc> queueBuffers(const netlist::Queue& q, const FailFn& fail);
  const SimEpochInfo& epochFor(runtime::EpochIo& io) const;
  // The host's side of the epoch start (docs/device-model.md, "Binaries cache
  // and epoch commands"): every core's image made resident in its binaries
  // cache (parsed from the files once per run, pushed only on a miss), then
  // its epoch command; the cores then load from DRAM (fromEpochCommand).
  void pushBinaries(const netlist::Graph& graph, const SimEpochInfo& epoch, std::vector<sim::EpochCore>& cores,
                    uint32_t inputCount, const std::string& where);
  void pushBinaries(sim::Chip& chip, sim::BinariesHost& host, const netlist::Graph& graph, const SimEpochInfo& epoch,
                    std::vector<sim::EpochCore>& cores, uint32_t inputCount, const std::string& where);
  // No DRAM queue of the netlist may overlap the cache region (checked once).
  void checkReservedDram(const sim::BinariesLayout& layout);
  const SimEpochInfo& epochForLaunch(const std::vector<runtime::EpochIo*>& ios) const;
  void executeOnCluster(const std::vector<runtime::EpochIo*>& ios);

  const netlist::Netlist* nl_;
  SocDescriptor soc_;
  SimArtifacts art_;
  std::unique_ptr<sim::Chip> chip_;       // one chip
  std::unique_ptr<sim::Cluster> cluster_; // several
  unsigned jobs_ = 1;
  std::map<ChipId, sim::BinariesHost> clusterBinaries_;
  std::map<std::string, const netlist::Queue*> queues_;
  std::optional<sim::BinariesHost> binaries_;
  std::map<std::string, sim::BinariesImage> kernelFiles_; // kernel directory -> its three parsed ELFs
  std::map<std::string, std::vector<blob::HexSegment>> blobFiles_; // blob .hex path -> its segments
  uint64_t totalCycles_ = 0;
  int64_t epochsRun_ = 0;
  uint64_t tilesMoved_ = 0;
};

} // namespace tessera::loader
