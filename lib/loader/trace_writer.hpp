// loader --trace FILE and --report FILE.html: what every epoch run on the
// simulated chip recorded (ChipRunOptions::recordTrace: the units' busy spans
// in each core's sim::CoreTimeline, the streams' transfers), kept run by run
// and laid end to end on one time axis:
//   - Chrome trace-event JSON (the format Perfetto and chrome://tracing
//     open): pid = chip, tid = a core's unit (unpack, math, pack), its
//     per-input windows or one of its streams; "X" spans with ts/dur in
//     microseconds at the arch's AI clock (perf_check.hpp aiclkMhz), "M"
//     events naming the tracks, the epoch runs on track 0 of each chip.
//     schemas/trace.schema.json, docs/loader.md "Trace".
//   - the HTML report (report_html.cpp): per epoch the placement grid, the
//     timeline and the perf-check table. docs/loader.md "Report".
// Everything is kept in run order, so the same run gives the same bytes.
#pragma once
#include "device/arch.hpp"
#include "device/soc_descriptor.hpp"
#include "loader/perf_check.hpp"
#include "sim/chip.hpp"
#include "sim/cluster.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::loader {

class PerfReport;

class TraceLog {
public:
  TraceLog(Arch arch, const SocDescriptor& soc);
  // One run of temporal epoch `epoch` (graph `graph`) on one chip.
  void add(uint32_t epoch, const std::string& graph, const sim::ChipRunResult& run);
  // One run of a several-chip temporal epoch: every chip from the same start.
  void addCluster(uint32_t epoch, const std::string& graph, const sim::ClusterRunResult& run);
  bool empty() const { return runs_.empty(); }

  // The trace-event JSON, one event per line.
  std::string traceJson(const std::string& netlist) const;
  // The self-contained HTML page (report_html.cpp); `perf` gives each
  // epoch's bottleneck op, `perfCheck` is loader --perf-check's text (may be empty).
  std::string reportHtml(const std::string& netlist, const PerfReport& perf, const std::string& perfCheck) const;

  struct Core {
    CoreCoord noc;
    std::string name, op;  // "<op>[r,c]" and the op (the name itself when it has no '[')
    bool kernel = false;
    uint64_t cycles = 0;   // its last busy cycle
    uint64_t unpack = 0, math = 0, pack = 0;  // the units' busy cycles (coprocessor counters)
    std::array<std::vector<sim::UnitSpan>, 3> busy;
    std::vector<InputWindow> inputs;  // per input (empty: the timeline does not divide into inputs)
  };
  struct Run {
    uint32_t epoch = 0;
    std::string graph;
    ChipId chip = 0;
    uint64_t start = 0;        // on the trace's axis: the run's prologue starts here
    uint64_t prologue = 0;     // cycles before the epoch's cycle 0
    uint64_t cycles = 0;
    uint32_t inputs = 0;
    std::vector<Core> cores;
    std::vector<sim::TransferSpan> transfers;
  };
  const std::vector<Run>& runs() const { return runs_; }
  double mhz() const { return mhz_; }

private:
  void addChip(uint32_t epoch, const std::string& graph, const sim::ChipRunResult& run, uint64_t start);
  Arch arch_;
  SocDescriptor soc_;
  double mhz_ = 1000;
  uint64_t now_ = 0;  // where the next run starts on the axis
  std::vector<Run> runs_;
};

} // namespace tessera::loader
