// The netlist's `performance-check` section, typed (BUDA's perf-check, as
// tt-budabackend's verif runner reads it): named configs, each naming a graph
// and a program, optional target ops / cores / inputs, and metrics with an
// expected value and a relative tolerance (or a `min_bound`). The parser
// reports malformed entries at their line (rule `perf-check`); the validator
// checks the names against the netlist. docs/loader.md, "Performance checks".
#pragma once
#include "support/diagnostics.hpp"
#include "support/source.hpp"
#include "support/yaml.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::netlist {

struct Netlist;

// The metrics BUDA's perf check knows (graph level: the first two; core level: the rest).
enum class PerfMetricKind : uint8_t {
  TensorsPerSecond,        // tensors-per-second
  CyclesPerTensor,         // cycles-per-tensor
  MathUtilization,         // math-utilization (percent, per target core and input)
  ExecutionCycles,         // execution-cycles (first unpack to last pack, per target core and input)
  AverageMathUtilization,  // average-math-utilization (percent, per target core, over its inputs)
  TotalRuntime,            // total-runtime (per target core: first unpack of the first input to last pack of the last)
  Input0Bw,                // input0-bw (GB/s per target core)
  OutputBw,                // output-bw (GB/s per target core)
  BackendSamplesPerSecond, // backend-samples-per-second (host side: parsed, not measured by the simulator)
};
const char* perfMetricName(PerfMetricKind kind);
bool perfMetricIsGraphLevel(PerfMetricKind kind);
bool perfMetricLowerIsBetter(PerfMetricKind kind);

struct PerfMetric {
  PerfMetricKind kind = PerfMetricKind::CyclesPerTensor;
  SourceLoc loc;
  double expected = 0;   // `expected`, or the bound of `min_bound`
  double rtol = 0;       // `rtol` (0 when absent: only the exact value passes)
  bool minBound = false; // `min_bound`: passes at or above the bound
};

struct PerfCheckConfig {
  std::string name;  // the key (config-0, fwd_0, ...)
  SourceLoc loc;
  std::string graph, program;
  SourceLoc graphLoc, programLoc;
  std::vector<std::pair<std::string, SourceLoc>> targetOps;
  std::vector<std::pair<int, int>> targetCores;  // (x, y) as written "x-y"
  std::vector<int64_t> targetInputs;
  std::vector<PerfMetric> metrics;
};

struct PerfCheck {
  SourceLoc loc;
  std::vector<PerfCheckConfig> configs;
};

// Parses the section (key `k`, value `v`); malformed parts are reported and left out.
PerfCheck parsePerfCheck(const yaml::Node& k, const yaml::Node& v, DiagnosticEngine& diags);
// Graph, program and target-op names against the netlist.
void validatePerfCheck(const Netlist& nl, DiagnosticEngine& diags);

} // namespace tessera::netlist
