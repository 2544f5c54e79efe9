// The `golden` target: runs an epoch on the host reference model. Ops run in
// dataflow order over whole tensors (all input_count entries at once); queue
// reads and writes go through the runtime's EpochIo like any other target.
#pragma once
#include "runtime/interpreter.hpp"

#include <map>
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

  // Time spent per op type (evalOp, input TMs excluded) and matmul work, for
  // loader --profile and scripts/bench-golden.sh.
  struct OpTypeProfile {
    int64_t calls = 0;
    double seconds = 0;
    double flops = 0; // matmul: 2*M*K*N per output matrix
  };
  const std::map<std::string, OpTypeProfile>& profile() const { return profile_; }
  unsigned threads() const { return threads_; }

private:
  // Op indices of a graph in an order where producers (direct, or through a
  // queue written in the same graph) come first. Computed once per graph.
  const std::vector<size_t>& order(const netlist::Graph& graph);

  const netlist::Netlist* nl_;
  netlist::Arch arch_;
  unsigned threads_;
  std::map<std::string, std::vector<size_t>> orders_;
  std::map<std::string, const netlist::FusedOp*> fusedOps_;
  std::map<std::string, std::vector<const netlist::Queue*>> consumers_; // op -> queues it feeds
  std::map<std::string, OpTypeProfile> profile_;
};

} // namespace tessera::loader
