// net2pipe as a library: a validated netlist in, one pipegen.yaml model per
// temporal epoch and the epoch index out (docs/net2pipe.md); and the whole
// tool (flags in, exit code out) so tools/net2pipe/main.cpp stays thin.
#pragma once
#include "device/cluster.hpp"
#include "netlist/model.hpp"
#include "netlist/validator.hpp"
#include "pipe/epochs.hpp"
#include "pipe/pipegen_model.hpp"
#include "support/diagnostics.hpp"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tessera::pipe {

// Per-core and per-buffer limits net2pipe checks (docs/net2pipe.md "Resource
// checks").
struct Limits {
  uint64_t l1DataBytes = 0;           // L1 size - contract::kDataBufferBase
  uint64_t ethL1DataBytes = 0;        // eth_l1_size - kEthDataBufferBase (0: no ethernet)
  uint32_t streamsPerCore = 64;       // ArchParams::maxStreamsPerCore
  uint32_t mcastStreamsPerCore = 4;   // multicast senders per core (grayskull 3)
  uint32_t dramInputStreamsPerCore = 8;
  uint32_t dramOutputStreamsPerCore = 8;
  uint32_t dramReadersPerBuffer = 64; // pipes reading one DRAM buffer in one epoch
};
Limits limitsFor(const netlist::ValidationTarget& target);

// BUDA-style ids: 100000000000 + n * 1000000000; a scatter buffer's chunk at
// tile offset o is named uniqid + o.
constexpr uint64_t kIdBase = 100000000000ull;
constexpr uint64_t kIdStride = 1000000000ull;

// Where data buffers start in an ethernet core's L1: BUDA's erisc L1 map
// (firmware, command queue, tile headers and the overlay blob below it;
// DATA_BUFFER_SPACE_BASE of wormhole's eth_l1_address_map.h).
constexpr uint64_t kEthDataBufferBase = 0x28000;

// Who reads or writes one queue buffer (grid cell) in one epoch.
struct QueueAccess {
  uint32_t epoch = 0;
  std::string op;
  int input = -1;                // reader: the op input index; writer: -1
  bool gradient = false;         // writer: a gradient op accumulating in L1 (no pipe)
  std::vector<CoreCoord> cores;  // worker cores (logical grid coordinates), sorted
  // The access goes over ethernet: `cores` are the ethernet cores ([y, x]
  // NOC coordinates, on the queue's chip) of the relay chain reading or
  // writing the cell for the op on another chip.
  bool relay = false;
};

struct QueueBufferInfo {
  std::string queue;
  int64_t cellR = 0, cellC = 0;
  BufferId uniqid = 0;
  bool host = false;             // loc: host
  uint32_t chip = 0;             // the queue's target_device
  int64_t channel = 0;           // DRAM channel (host: host memory id)
  uint64_t address = 0;
  std::vector<QueueAccess> readers, writers;
};

struct EpochOutput {
  TemporalEpoch epoch;
  PipegenYaml yaml;
};

struct Compilation {
  std::vector<EpochOutput> epochs;
  std::vector<QueueBufferInfo> queueBuffers; // queues in netlist order, cells row-major
  Limits limits;
  std::string cluster;    // the cluster's name
  bool multiChip = false; // the cluster has more than one chip: epochs.yaml lists chips
};

// Builds every epoch of a valid netlist for `cluster` (every chip of it
// the target's SoC descriptor). Problems (unsupported features, resource
// limits, chips without a route) are reported on `diags` (rules `pipe-*`,
// and net2hlks' `hlk-*` for ops without a kernel); returns false when any
// epoch failed.
bool compileNetlist(const netlist::Netlist& nl, const netlist::ValidationTarget& target,
                    const ClusterDescriptor& cluster, DiagnosticEngine& diags, Compilation& out);
// The same on one chip (singleChipCluster()).
bool compileNetlist(const netlist::Netlist& nl, const netlist::ValidationTarget& target, DiagnosticEngine& diags,
                    Compilation& out);

// The epoch index, OUTDIR/epochs.yaml (docs/net2pipe.md, schemas/net2pipe-epochs.schema.json).
std::string epochsIndexYaml(const Compilation& c, const std::string& netlistName, const std::string& arch,
                            const std::string& device);

struct Net2PipeOptions {
  std::string input;   // the netlist
  std::string outDir;
  std::string arch;    // empty: the first arch the netlist lists
  std::string device;  // SoC descriptor file or bundled name; overrides arch
  std::string cluster; // cluster descriptor file; empty: the arch's default for the netlist's chips
  std::string depfile;
  size_t maxErrors = 20;
  bool noWarnings = false;
};

// The tool: returns the exit code (0 written, 1 invalid or unsupported
// netlist, a resource limit or a write failure, 2 usage error).
int runNet2Pipe(const Net2PipeOptions& options, std::ostream& out, std::ostream& err);

} // namespace tessera::pipe
