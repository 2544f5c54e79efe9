// loader --perf-check: the netlist's performance-check targets
// (netlist/perf_check.hpp) measured on the simulated chip, the way
// tt-budabackend's perf postprocessor measures them on silicon, from each
// kernel core's per-input timeline (sim::CoreTimeline):
//   - per core and input i: first unpack (the first UNPACK for input 0, else
//     the pop that finished input i-1's operand-0 tiles) and last pack (the
//     push that completed input i's output tiles);
//   - graph level: the latest last pack over the epoch's cores per input;
//     cycles-per-tensor = (L[last] - L[first]) / (last - first),
//     tensors-per-second = AICLK / cycles-per-tensor;
//   - core level, per target core and input: math-utilization = math busy
//     cycles / (last pack - first unpack), execution-cycles; per core:
//     average-math-utilization, total-runtime, input0-bw and output-bw
//     (bytes per ns over the inputs after the first).
// A metric passes when |observed - expected| < rtol * expected (min_bound:
// observed >= bound). docs/loader.md, "Performance checks".
#pragma once
#include "device/arch.hpp"
#include "netlist/model.hpp"
#include "sim/chip.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera::loader {

// The AI clock the simulated cycles are converted at (MHz): grayskull 1200
// (e150), wormhole_b0 1000 (n150/n300), blackhole 1350 (p150).
double aiclkMhz(Arch arch);

// One input's window on one kernel core: its first unpack and last pack
// (see the file comment) and the math unit's busy cycles so far at each.
struct InputWindow {
  uint64_t firstUnpack = 0, lastPack = 0, mathAtFirst = 0, mathAtLast = 0;
};
// The windows of the `inputs` inputs of a core's timeline; empty when its
// output tiles do not divide evenly into them (or it never unpacked). Sets
// the output and operand-0 tiles per input (0 when they do not divide).
std::vector<InputWindow> inputWindows(const sim::CoreTimeline& tl, uint64_t inputs, uint64_t& outTilesPerInput,
                                      uint64_t& in0TilesPerInput);

class PerfChecker {
public:
  PerfChecker(const netlist::Netlist& nl, Arch arch);
  // One completed run of temporal epoch `epoch` whose graph is `graph`; kept
  // when a check names the graph.
  void add(uint32_t epoch, const std::string& graph, const sim::ChipRunResult& run);
  // One line per metric (and target core and input), PASS or FAIL; `passed`
  // is false when any fails.
  std::string report(bool& passed) const;

private:
  struct CoreInputs {
    std::string name, op;          // "<op>[r,c]" and the op
    int x = 0, y = 0;              // NOC coordinate
    std::vector<uint64_t> firstUnpack, lastPack, mathAtFirst, mathAtLast;  // per input (empty: not measured)
    uint64_t outTilesPerInput = 0, in0TilesPerInput = 0;
  };
  struct Run {
    uint32_t epoch = 0;
    std::string graph;
    uint32_t inputs = 0;
    std::vector<CoreInputs> cores;
  };
  const netlist::Netlist& nl_;
  Arch arch_;
  std::vector<Run> runs_;
};

} // namespace tessera::loader
