// The simulated chip's performance report (loader --perf-report): per
// temporal epoch and per op, the cycles of the cycle model, summed over every
// run of the epoch:
//   - per op (its cores, each named "<op>[r,c]" by the sim target): the
//     unpack, math and pack units' busy cycles (the coprocessor's counters) of
//     its busiest core, and the cycle its last core finished;
//   - per epoch: the epoch's cycles, the firmware's prologue DRAM time, the
//     bytes the streams moved over the NOC and to/from DRAM, the bottleneck op
//     (the one whose busiest unit has the most busy cycles: in a pipelined
//     epoch it sets the pace) and core utilisation (busy cycles of each used
//     core's busiest unit over used cores x epoch cycles).
// Printed as a table and written as JSON (schemas/perf-report.schema.json,
// docs/loader.md "Performance report").
#pragma once
#include "sim/binaries_cache.hpp"
#include "sim/chip.hpp"
#include "sim/cluster.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera::loader {

struct OpPerf {
  int cores = 0;
  uint64_t finishCycles = 0;           // the op's last core's last busy cycle (summed over runs)
  uint64_t unpack = 0, math = 0, pack = 0; // busy cycles of the op's busiest core per unit (summed over runs)
  uint64_t tilesPacked = 0, matmulTiles = 0, sfpuTiles = 0; // all cores, all runs
  uint64_t busiest() const { return std::max({unpack, math, pack}); }
  const char* boundBy() const; // "unpack", "math" or "pack": the busiest unit
};

// One direction of one ethernet link, over the runs of an epoch.
struct LinkPerf {
  uint64_t tiles = 0, bytes = 0, busyCycles = 0;
};

// One chip of a several-chip epoch, over its runs.
struct ChipPerf {
  uint64_t cycles = 0, prologueCycles = 0;
  int coresUsed = 0;
  uint64_t nocBytes = 0, dramReadBytes = 0, dramWriteBytes = 0, ethBytes = 0;
  std::map<std::pair<uint32_t, EthEndpoint>, LinkPerf> links;  // (this chip's channel, the other end)
};

struct EpochPerf {
  uint32_t epoch = 0;
  std::string graph;
  int64_t runs = 0;
  uint64_t cycles = 0, prologueCycles = 0;
  uint64_t binariesCycles = 0; // the last core's binaries arrival from its DRAM cache (harts start then)
  uint64_t nocBytes = 0, dramReadBytes = 0, dramWriteBytes = 0;
  int coresUsed = 0;    // cores running a kernel
  int workerCores = 0;  // the grid's
  uint64_t busySum = 0; // over runs and used cores: the core's busiest unit's cycles
  std::map<std::string, OpPerf> ops;
  std::map<ChipId, ChipPerf> chips;  // several chips only
  double utilisation() const;
  // The op with the most busy cycles on one unit (ties: the first by name); empty without ops.
  std::string bottleneck() const;
};

class PerfReport {
public:
  // One run of temporal epoch `epoch` (graph `graph`) on a grid of `workerCores`.
  void add(uint32_t epoch, const std::string& graph, const sim::ChipRunResult& run, int workerCores);
  // One run of a several-chip temporal epoch: the epoch's figures over all
  // chips (cycles: the latest chip's; cores: every chip's), and per chip its
  // own with each link direction's tiles, bytes and busy cycles.
  void addCluster(uint32_t epoch, const std::string& graph, const sim::ClusterRunResult& run, int workerCoresPerChip);
  // The run's binaries cache counters (written as "binaries").
  void setBinaries(const sim::BinariesCounters& counters) { binaries_ = counters; }
  bool empty() const { return epochs_.empty(); }
  const std::map<uint32_t, EpochPerf>& epochs() const { return epochs_; }
  std::string table() const;
  nlohmann::json json(const std::string& netlist, const std::string& arch) const;

private:
  std::map<uint32_t, EpochPerf> epochs_;
  std::optional<sim::BinariesCounters> binaries_;
};

} // namespace tessera::loader
