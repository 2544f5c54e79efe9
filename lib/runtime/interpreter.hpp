// The program interpreter: var/staticvar/param, varinst, nested loops,
// execute (queue_settings resolved), allocate_queue/deallocate_queue. Targets
// run the epochs, one launch per temporal epoch instance; the host hooks let
// the loader push inputs and pop outputs around each launch.
#pragma once
#include "netlist/temporal_graphs.hpp"
#include "runtime/queues.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tessera::runtime {

// One launch of a temporal graph: the graphs a run of consecutive executes
// names (docs/runtime.md "Launches"), each with its own EpochIo (its
// input_count and resolved queue_settings), in execute order.
struct Launch {
  uint32_t temporalGraph = 0;
  std::vector<EpochIo*> graphs; // at least one; each graph once
};

class Target {
public:
  virtual ~Target() = default;
  virtual std::string name() const = 0;
  // Runs one epoch of io.graph(): reads inputs and writes outputs through io.
  virtual void execute(EpochIo& io) = 0;
  // Runs every graph of a launch at once. The default hands a one-graph
  // launch to execute() and refuses several graphs (`launch-unsupported`).
  virtual void launch(const Launch& launch);
};

// Called around every launch: beforeExecute for each of its graphs (in
// execute order) before the launch, afterExecute for each after it.
class HostHooks {
public:
  virtual ~HostHooks() = default;
  virtual void beforeExecute(const netlist::Graph& graph, QueueStore& store) {}
  virtual void afterExecute(const netlist::Graph& graph, QueueStore& store) {}
};

class Interpreter {
public:
  // `arch` decides the temporal graphs (docs/cluster.md); the first form
  // takes the netlist's first listed arch (grayskull when none).
  Interpreter(const netlist::Netlist& nl, QueueStore& store, Target& target, HostHooks& hooks, Arch arch);
  Interpreter(const netlist::Netlist& nl, QueueStore& store, Target& target, HostHooks& hooks);

  const netlist::TemporalGraphs& temporalGraphs() const { return temporal_; }

  // Runs one program. `params` gives values of the program's `param`
  // variables (names with their `$`); a missing one is a RuntimeError.
  // staticvars keep their values across calls of the same program.
  void run(const netlist::Program& program, const std::map<std::string, int64_t>& params);

  int64_t executeCount() const { return executes_; }
  int64_t launchCount() const { return launches_; }
  // Optional: called with a one-line description of each execute.
  std::function<void(const std::string&)> trace;

  // Guards against runaway programs (a RuntimeError past any of them).
  // Counted over the interpreter's lifetime / per run; tests lower them.
  int64_t maxExecutes = 10'000'000;   // executes, all runs together
  int64_t maxSteps = 200'000'000;     // instructions of one run (loops without executes)
  int maxLoopDepth = 64;              // nested loops

private:
  friend class ProgramRun; // one call of run(), defined in interpreter.cpp
  const netlist::Netlist* nl_;
  QueueStore* store_;
  Target* target_;
  HostHooks* hooks_;
  netlist::TemporalGraphs temporal_;
  std::map<std::string, std::map<std::string, int64_t>> staticVars_; // program -> vars
  int64_t executes_ = 0;
  int64_t launches_ = 0;
};

} // namespace tessera::runtime
