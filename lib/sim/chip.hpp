// The simulated chip: the worker grid of a soc descriptor (each worker a
// TensixCore with its coprocessor, created on first use so unused workers
// cost no L1), the DRAM channels, host memory behind the PCIe core, the stream engine and the NOCs' cycle
// model, and the epoch loop that interleaves them:
//
//   round r = cycles [r*S, (r+1)*S), S = sliceCycles:
//     every core with running harts runs one scheduler slice;
//     the stream engine moves tiles up to (r+1)*S.
//
// The run ends when every hart has finished and every stream has run all its
// phases (done), on a fault (a hart's, or a stream's: bad blob, L1 overflow,
// DRAM address), at the cycle limit, or as a hang: `hangRounds` rounds in a
// row in which no hart made progress, no tile moved and nothing was in flight.
// The hang report names every waiting stream (core, stream id, phase, what it
// waits for) and every waiting thread (pc, what it polls or stalls on).
// docs/device-model.md, "Streams, NOC and DRAM".
#pragma once
#include "device/device_contract.h"
#include "device/soc_descriptor.hpp"
#include "sim/coprocessor.hpp"
#include "sim/coprocessor_port_adapter.hpp"
#include "sim/dram.hpp"
#include "sim/ethernet.hpp"
#include "sim/noc.hpp"
#include "sim/stream_engine.hpp"
#include "sim/tensix_core.hpp"
#include "support/parallel.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessera::sim {

class FaultInjector;

struct ChipRunOptions {
  uint64_t sliceCycles = 256;                // scheduler slice of every core (and the stream engine's window)
  uint64_t maxCycles = uint64_t{1} << 34;    // stop (CycleLimit) past this cycle
  uint32_t hangRounds = 16;                  // rounds without progress that make a hang
  contract::EpochInfo epoch{};               // written to every used core's L1
  // Called for every used core after the firmware wrote its operand table
  // and epoch info, before the harts start: lets the loader add what a blob
  // cannot say (e.g. an untilized output's flags and row stride).
  std::function<void(CoreCoord, TensixCore&)> afterFirmware;
  // Cores whose harts start late: the cycle their binaries arrived from DRAM
  // (epoch commands, sim::runEpoch), rounded up to a slice. Others start at 0.
  std::map<CoreCoord, uint64_t> startCycles;
  // Record every kernel core's per-input timeline (CoreEpochReport::timeline; loader --perf-check).
  bool recordTimeline = false;
  // Threads that run the cores' slices of a round side by side (1: the
  // calling thread only). Cores touch only their own state in a slice; what
  // they hand to the stream engine is applied after, in core order, so
  // results and cycles do not depend on it.
  unsigned threads = 1;
  // Record the units' busy spans and the streams' transfers (loader --trace, sim/trace.hpp).
  bool recordTrace = false;
  // Injected faults (loader run --inject; sim/fault_injection.hpp). Not owned; nullptr: none.
  FaultInjector* inject = nullptr;
};

enum class ChipStop : uint8_t { Done, Fault, Hang, CycleLimit };
const char* chipStopName(ChipStop stop);  // "done", "fault", "hang", "cycle-limit"

struct CoreEpochReport {
  CoreCoord noc;
  std::string name;
  bool kernel = false;        // at least one thread had a program
  bool blob = false;          // an overlay blob was found in L1
  uint32_t streams = 0;       // streams its blob configured
  uint64_t cycles = 0;        // last cycle its harts or its streams were busy
  CoreRunResult harts;        // the harts' result (Done) or snapshot (other stops)
  CopCounters cop;            // the coprocessor's unit activity this epoch (the performance report)
  CoreTimeline timeline;      // ChipRunOptions::recordTimeline (events) or recordTrace (busy spans) only
};

struct ChipRunResult {
  ChipId chip = 0;               // Chip::id()
  ChipStop stop = ChipStop::Done;
  uint64_t cycles = 0;           // epoch cycles: the last core's
  uint64_t prologueCycles = 0;   // DRAM time of the firmware's prologue loads (before cycle 0)
  uint64_t binariesCycles = 0;   // the last core's binaries arrival (epoch commands; 0 when loaded directly)
  uint64_t binariesReadBytes = 0; // binaries the firmware read from the cores' caches in DRAM
  uint32_t inputCount = 0;       // the epoch info's input count (inputs each kernel processed)
  std::string faultCategory;     // Fault: the hart's or stream engine's category, or "bad-blob", "load"
  std::string faultCore;         // Fault: the core's name
  std::vector<CoreEpochReport> cores;  // used cores, by NOC (y, then x)
  std::vector<std::string> waitingStreams;  // Hang/CycleLimit: one line per unfinished stream
  StreamCounters streams;
  std::string message;           // summary; for hangs and limits every waiting stream and thread
  std::vector<EthLinkCounters> ethLinks;  // per ethernet channel, its sending side (empty: no ethernet)
  std::vector<TransferSpan> transfers;     // ChipRunOptions::recordTrace only
  bool ok() const;               // Done and every exit code 0
};

// The "waiting streams:" and "waiting threads:" lines of a hang or cycle
// limit report (empty when nothing waits), each line starting with `indent`.
std::string waitingText(const ChipRunResult& result, const std::string& indent);

class Chip {
public:
  explicit Chip(const SocDescriptor& soc);
  Chip(const SocDescriptor& soc, const DataMovementModel& model);
  ~Chip();
  Chip(const Chip&) = delete;
  Chip& operator=(const Chip&) = delete;

  const SocDescriptor& soc() const { return soc_; }
  Arch arch() const { return soc_.arch; }
  Dram& dram() { return dram_; }
  const Dram& dram() const { return dram_; }
  // Host (system) memory, reached from the NOC through the PCIe core
  // (`loc: host` queues; dram.hpp). Kept across epochs, like DRAM.
  Dram& hostMemory() { return host_; }
  const Dram& hostMemory() const { return host_; }
  StreamEngine& streams() { return *engine_; }
  const DataMovementModel& model() const { return model_; }

  // Which chip of a cluster this is: stream names carry it and every blob
  // must say it (0 for a chip on its own).
  ChipId id() const { return id_; }
  void setId(ChipId id) { id_ = id; }
  // Joins the chip to a cluster (sim::Cluster): its ethernet cores and what
  // their links reach; streams naming another chip then go over them.
  void setEthernet(const EthPorts& ports);

  // The worker at NOC coordinate `noc`, created on first use (named "x-y"),
  // or the ethernet core there (named "eth<channel>@x-y": an L1 of the
  // descriptor's eth_l1_size, streams, no harts and no coprocessor);
  // nullptr when `noc` is neither.
  TensixCore* core(CoreCoord noc);
  bool isEthernetCore(CoreCoord noc) const;
  const TensixCore* findCore(CoreCoord noc) const;  // nullptr when not created
  Coprocessor* coprocessor(CoreCoord noc);
  // Reports say "core '<name>'".
  void setCoreName(CoreCoord noc, const std::string& name);

  // Starts setting up a new epoch: every created core gets resetForEpoch()
  // (L1 kept), its coprocessor reset and its overlay region zeroed; the
  // stream engine forgets the previous epoch. DRAM is kept.
  void beginEpoch();
  // Loads unpack.elf, math.elf and pack.elf from `dir` onto the core.
  bool loadKernelDir(CoreCoord noc, const std::string& dir, std::string& error);
  // Places an encoded blob (.hex text or words) into the core's overlay region.
  bool loadBlobHex(CoreCoord noc, const std::string& hexText, std::string& error);
  bool loadBlobWords(CoreCoord noc, std::span<const uint32_t> words, std::string& error);

  // Runs the epoch set up since beginEpoch(): firmware start on every core
  // with a blob or a program (decode the blob from L1, operand table, epoch
  // info, stream configuration), the prologue, the rounds, the epilogue.
  ChipRunResult runEpoch(const ChipRunOptions& options = {});

  // runEpoch in steps, for sim::Cluster (runEpoch is exactly these in a loop):
  // startRun does the firmware's epoch start and the prologue (false: a
  // fault, finishRun reports it); runRound runs cycles [now, until) (every
  // running core one slice, then the streams); finishRun makes the report.
  struct Round {
    bool progress = false;      // a hart or a stream moved
    bool hartsRunning = false;  // a core's harts have not finished (or not started)
    bool fault = false;
    bool done = false;          // every hart finished and every stream done
    // Nothing moved (no hart woke, no stream moved) and every running hart
    // sleeps until something changes from outside (RunOptions::sleepWhileWaiting):
    // the next event is the stream engine's next wake time or `hartWake`.
    bool asleep = false;
    std::optional<uint64_t> hartWake;  // the earliest start of a core still reading its binaries
  };
  bool startRun(const ChipRunOptions& options);
  Round runRound(uint64_t now, uint64_t until);
  ChipRunResult finishRun(ChipStop stop, uint64_t now);
  // After a Round that was `asleep`: the next round's start, a slice-aligned
  // cycle >= now (the next event, or now when there is none), and every
  // core moved there. Skipping those rounds changes nothing: they would
  // only have polled.
  uint64_t skipIdle(const Round& round, uint64_t now);
  bool streamsBusy() const { return engine_->busy(); }

private:
  struct Worker;
  struct Run;
  Worker* worker(CoreCoord noc);
  void fail(const std::string& category, const std::string& coreName, const std::string& message);
  void reportCores(CoreStop snapshotStop);

  SocDescriptor soc_;
  DataMovementModel model_;
  Dram dram_;
  Dram host_;
  std::unique_ptr<StreamEngine> engine_;
  std::vector<std::unique_ptr<Worker>> workers_;  // by y * gridX + x
  ChipId id_ = 0;
  std::unique_ptr<Run> run_;  // the epoch being run (startRun .. finishRun)
  std::unique_ptr<WorkerPool> pool_;  // ChipRunOptions::threads > 1, kept across epochs
};

}  // namespace tessera::sim
