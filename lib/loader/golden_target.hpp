// The `golden` target: runs an epoch on the host reference model. Ops run in
// dataflow order over whole tensors (all input_count entries at once); queue
// reads and writes go through the runtime's EpochIo like any other target.
// A launch of several graphs (one temporal epoch over several chips) runs
// all their ops in one dataflow order: an op may read an op of another graph
// of the launch, and a queue written in the launch is read after its writer.
#pragma once
#include "runtime/interpreter.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tessera::loader {

class GoldenTarget : public runtime::Target {
public:
  // threads: how many entries (w) an op evaluates at once (0: one per
  // hardware thread). Results do not depend on it.
  GoldenTarget(const netlist::Netlist& nl, netlist::Arch arch, unsigned threads = 1);
  std::string name() const override { return "golden"; }
  void execute(runtime::EpochIo& io) override;
  void launch(const runtime::Launch& launch) override;

  // Time spent per op type (evalOp, input TMs excluded) and matmul work, for
  // loader --profile and scripts/bench-golden.sh.
  struct OpTypeProfile {
    int64_t calls = 0;
    double seconds = 0;
    double flops = 0; // matmul: 2*M*K*N per output matrix
  };
  const std::map<std::string, OpTypeProfile>& profile() const { return profile_; }
  unsigned threads() const { return threads_; }
  // Gradient matmuls whose kernels add their partial sums into the gradient
  // block in place (hlk::gradientPartialsInPlace): rounded as they do.
  void setPartialsInPlace(std::set<std::string> ops) { partialsInPlace_ = std::move(ops); }

private:
  // One op of a launch: its graph's index in the launch and its index in the graph.
  struct OpRef {
    size_t graph = 0, op = 0;
    friend bool operator==(const OpRef&, const OpRef&) = default;
  };
  // The ops of a launch's graphs in an order where producers (an op input, or
  // a queue written in the same launch) come first; with one graph the
  // order the single-graph target always used. Computed once per graph list.
  const std::vector<OpRef>& order(const std::vector<const netlist::Graph*>& graphs);
  // The op of the launch an input of op `at` names: one of its own graph,
  // else one of another graph of the launch.
  std::optional<OpRef> producer(const std::vector<const netlist::Graph*>& graphs, OpRef at, const std::string& input);
  void run(const std::vector<runtime::EpochIo*>& ios);

  const netlist::Netlist* nl_;
  netlist::Arch arch_;
  unsigned threads_;
  std::map<std::vector<std::string>, std::vector<OpRef>> orders_;
  std::map<std::string, std::map<std::string, size_t>> opIndex_; // graph -> op name -> index
  std::map<std::string, const netlist::FusedOp*> fusedOps_;
  std::map<std::string, std::vector<const netlist::Queue*>> consumers_; // op -> queues it feeds
  std::map<std::string, OpTypeProfile> profile_;
  std::set<std::string> partialsInPlace_;
  std::map<std::string, std::string> opGraph_; // op name -> its graph (the first, for repeated names)
  std::set<std::string> queueNames_;
};

} // namespace tessera::loader
