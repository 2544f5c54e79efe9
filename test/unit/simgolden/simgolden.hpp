// The sim-vs-golden matrix (docs/testing.md, "Simulator against the
// reference model"): one op of a netlist is turned into its kernel by lib/hlk
// (exactly what net2hlks writes), compiled by lib/hlkc (content-hash cache in
// the build tree), run on one simulated Tensix core by lib/sim's
// OneCoreHarness with random inputs in the tile orders of the kernel's
// operand contract, and its output is compared with lib/golden evaluating the
// same op on the same (already quantized) inputs, with lib/compare.
//
// The golden model is an independent implementation of the op's numerics, so
// a disagreement beyond the tolerance is a bug on one side (or a documented
// modelling difference, docs/device-model.md).
#pragma once
#include "compare/compare.hpp"
#include "formats/tensor.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace simgolden {

using tessera::formats::Tensor;

// Random input values: uniform in [lo, hi], rounded to the input's in_df.
// Integer formats draw integers in [lo, hi].
struct Range {
  float lo = -1.0f, hi = 1.0f;
};

enum class Expect {
  Exact,  // every value bit for bit (NaN matches NaN)
  Close,  // within the tolerance (the corpus's AllCloseHw unless given)
};

// The tolerance most corpus netlists use (comparison-config: AllCloseHw,
// atol 0.01, rtol 0.15, check_pct 0.9, check_pcc 0.99).
tessera::compare::Config corpusTolerance();

struct Request {
  std::string label;          // names the case in reports
  std::string netlistText;    // the netlist (YAML)
  std::string sourceName = "case.yaml";
  std::string op = "op";      // the op to run; empty: the first fused_op
  std::string arch;           // empty: wormhole_b0 when the netlist lists it, else its first arch
  int entries = 0;            // EpochInfo.inputCount; 0: min(graph input_count, 2)
  Range range;                // every input, unless inputRanges has one for it
  std::vector<Range> inputRanges;
  bool netlistStimulus = false;  // take `range` from the netlist's Uniform stimulus-config bounds when it has them
  Expect expect = Expect::Close;
  std::optional<tessera::compare::Config> tolerance;  // Close: default the netlist's comparison-config, else corpusTolerance()
  uint32_t seed = 1;
  int capacityScale = 1;      // operand capacities = min_tiles x this (benchmarks use more)
};

struct Outcome {
  bool pass = false;
  std::string report;             // what went wrong, or the figures of a pass
  tessera::compare::Result cmp;   // against the expectation's config
  int64_t values = 0;             // values compared
  int64_t bitDiffs = 0;           // values not bit-identical to the reference
  double maxAbsDiff = 0;
  int64_t outTiles = 0;           // output tiles drained
  uint64_t cycles = 0;            // core cycles of the run
  double simSeconds = 0;          // host wall time of the simulated run (harness.run only)
  double simCpuSeconds = 0;       // the same run's CPU time (this thread)
  uint64_t riscInstructions = 0;  // RV32 instructions retired by the three harts
  uint64_t tilesUnpacked = 0;     // coprocessor counters
  uint64_t matmulTiles = 0;
  uint64_t sfpuTiles = 0;
};

// A batch of requests: every kernel is generated first, then compiled by one
// hlkc run per arch (in parallel, through the cache), then each request runs.
class Session {
public:
  Session();
  ~Session();
  // Adds a request; returns its index.
  size_t add(Request request);
  // Generates and compiles every kernel. A request whose netlist or kernel
  // fails is reported by run() (with the reason), not here.
  void compile();
  // Runs request i (compile() first) and compares it with the reference.
  Outcome run(size_t i);
  const Request& request(size_t i) const;
  size_t size() const;
  // The kernel directory of request i (after compile()), e.g. for reports.
  std::string kernelDir(size_t i) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One-op netlist builder for the matrix: queues in0.. (HOST) feed op `op`,
// whose output goes to queue `out`.
struct OneOp {
  std::string arch = "wormhole_b0";
  std::string type;
  std::vector<std::string> inDf;      // one per input
  std::vector<std::string> inBlock;   // queue blocking per input, e.g. "t: 1, mblock: [2, 2], ublock: [1, 2]"; empty: the op's
  std::vector<std::string> inTms;     // per input: "" or e.g. "[transpose]"
  std::string outDf = "Float16_b", accDf = "Float16_b", intermedDf = "";  // intermed empty: out_df
  std::string fidelity = "HiFi4";
  std::string block = "t: 1, mblock: [2, 2], ublock: [2, 2]";  // the op's t, mblock, ublock
  std::string ublockOrder = "r";
  std::string attrs;                  // the attributes map's contents, e.g. "m_k: 2, u_kt: 2"
  int inputCount = 1;
};
std::string netlistOf(const OneOp& spec);

// SIMGOLDEN_VERBOSE: 1 (or any value but 0) prints one line per case, 2 also
// each case's report (first mismatches, kernel directory). 0 when unset.
int verbose();
// "label: PASS exact (4096 values)" / "... max|d| 0.0039, 12 values differ, pcc 0.99998"
std::string summaryLine(const Request& r, const Outcome& o);

} // namespace simgolden
