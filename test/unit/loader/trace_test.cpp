// loader --trace and --report on hand-made chip results: the merging of unit
// and stream spans (sim/trace.hpp), the time axis (cycles at the AI clock,
// runs end to end), the tracks and the report's grid, all worked out by hand.
#include "device/soc_descriptor.hpp"
#include "loader/perf_report.hpp"
#include "loader/trace_writer.hpp"

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

using namespace tessera;
using tessera::sim::TransferKind;

TEST_CASE("trace: a unit's instructions closer than the merge gap are one span") {
  std::vector<sim::UnitSpan> spans;
  sim::noteUnitBusy(spans, 100, 52);  // [100, 152)
  sim::noteUnitBusy(spans, 160, 52);  // 8 after: merged, [100, 212)
  sim::noteUnitBusy(spans, 212 + sim::kTraceMergeGap, 10);  // exactly the gap after: merged
  sim::noteUnitBusy(spans, 254 + sim::kTraceMergeGap + 1, 5);  // one more: a new span
  REQUIRE(spans.size() == 2);
  CHECK(spans[0].start == 100);
  CHECK(spans[0].end == 254);
  CHECK(spans[0].busy == 114);
  CHECK(spans[0].instructions == 3);
  CHECK(spans[1].start == 287);
  CHECK(spans[1].end == 292);
  CHECK(spans[1].busy == 5);
}

TEST_CASE("trace: a stream's tiles merge per stream and kind, ordered by start") {
  sim::TransferRecorder rec;
  // Stream 8 of 1-1 reads 3 tiles from DRAM, each 52 cycles of the channel after the last, arriving 300 later.
  for (int i = 0; i < 3; ++i) rec.note({1, 1}, 8, TransferKind::DramRead, 52 * i, 52 * i + 352, 2080);
  // Stream 24 of 1-1 sends one tile over the NOC, then another long after.
  rec.note({1, 1}, 24, TransferKind::Noc, 10, 90, 2080);
  rec.note({1, 1}, 24, TransferKind::Noc, 500, 580, 2080);
  const std::vector<sim::TransferSpan> spans = rec.take();
  REQUIRE(spans.size() == 3);
  CHECK(spans[0].stream == 8);
  CHECK(spans[0].start == 0);
  CHECK(spans[0].end == 456);
  CHECK(spans[0].tiles == 3);
  CHECK(spans[0].bytes == 6240);
  CHECK(spans[1].stream == 24);
  CHECK(spans[1].end == 90);
  CHECK(spans[2].start == 500);
  CHECK(rec.take().empty());
}

namespace {

sim::ChipRunResult run(uint64_t prologue, uint64_t cycles) {
  sim::ChipRunResult r;
  r.prologueCycles = prologue;
  r.cycles = cycles;
  r.inputCount = 1;
  sim::CoreEpochReport c;
  c.noc = {1, 1};
  c.name = "mm[0,0]";
  c.kernel = true;
  c.cycles = cycles;
  c.cop.math.cycles = 900;
  c.cop.unpack.cycles = 300;
  c.timeline.busy[1] = {{120, 1020, 900, 10}};
  c.timeline.firstUnpack = 0;
  c.timeline.outputPushes = {{1100, 1, 900}};
  r.cores = {c};
  r.transfers = {{{1, 1}, 8, TransferKind::DramRead, 0, 240, 1, 2080}};
  return r;
}

} // namespace

TEST_CASE("trace: spans in microseconds at the AI clock, runs end to end") {
  const SocDescriptor soc = loadBundledDescriptor(defaultDescriptorName(Arch::Grayskull));
  loader::TraceLog log(Arch::Grayskull, soc);
  log.add(0, "g", run(60, 1200));
  log.add(0, "g", run(0, 1200));
  const nlohmann::json j = nlohmann::json::parse(log.traceJson("n.yaml"));
  CHECK(j["otherData"]["aiclk_mhz"] == 1200.0);
  CHECK(j["otherData"]["cycles"] == 60 + 1200 + 1200);
  const int core = 100 * (1 + 1 * soc.gridX + 1);  // tracks of NOC 1-1
  std::vector<nlohmann::json> math, epochs, streams, inputs;
  std::map<int, std::string> names;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") names[e["tid"]] = e["args"]["name"];
    if (e["ph"] != "X") continue;
    if (e["cat"] == "math") math.push_back(e);
    if (e["cat"] == "epoch") epochs.push_back(e);
    if (e["cat"] == "stream") streams.push_back(e);
    if (e["cat"] == "input") inputs.push_back(e);
  }
  CHECK(names[0] == "epochs");
  CHECK(names[core + 2] == "core 1-1 math");
  CHECK(names[core + 4] == "core 1-1 inputs");
  CHECK(names[core + 10 + 8] == "core 1-1 stream 8");
  // Run 1: prologue [0, 60), the epoch from 60; run 2 from 1260. 1200 cycles = 1 us.
  REQUIRE(epochs.size() == 3);
  CHECK(epochs[0]["name"] == "prologue");
  CHECK(epochs[0]["dur"] == 0.05);
  CHECK(epochs[1]["ts"] == 0.05);
  CHECK(epochs[1]["dur"] == 1.0);
  CHECK(epochs[2]["ts"] == 1.05);
  // Math busy [120, 1020) of each run: 0.05 + 0.1 us; 900 cycles = 0.75 us.
  REQUIRE(math.size() == 2);
  CHECK(math[0]["name"] == "mm");
  CHECK(math[0]["tid"] == core + 2);
  CHECK(math[0]["ts"] == 0.15);
  CHECK(math[0]["dur"] == 0.75);
  CHECK(math[0]["args"]["busy"] == 900);
  CHECK(math[1]["ts"] == 1.15);
  // The input window [0, 1100) with 900 math cycles: 81.82%.
  REQUIRE(inputs.size() == 2);
  CHECK(inputs[0]["name"] == "mm input 0");
  CHECK(inputs[0]["args"]["math_utilization"] == 81.82);
  REQUIRE(streams.size() == 2);
  CHECK(streams[0]["name"] == "dram-read");
  CHECK(streams[0]["args"]["stream"] == "chip_0__y_1__x_1__stream_id_8");
  CHECK(streams[0]["dur"] == 0.2);
  // The same log writes the same bytes.
  CHECK(log.traceJson("n.yaml") == log.traceJson("n.yaml"));
}

TEST_CASE("report: the grid shows each op's utilisation and marks the bottleneck") {
  const SocDescriptor soc = loadBundledDescriptor(defaultDescriptorName(Arch::Grayskull));
  loader::TraceLog log(Arch::Grayskull, soc);
  loader::PerfReport perf;
  sim::ChipRunResult r = run(0, 1200);
  sim::CoreEpochReport other = r.cores[0];
  other.noc = {2, 1};
  other.name = "add<1>[0,0]";
  other.cop.math.cycles = 100;
  other.cop.unpack.cycles = 200;
  r.cores.push_back(other);
  log.add(0, "g", r);
  perf.add(0, "g", r, soc.workerCount());
  const std::string html = log.reportHtml("n.yaml", perf, "perf-check: 1 of 1 checks passed\n");
  // mm: busiest unit 900 of 1200 cycles = 75%; add<1>: 200 of 1200 = 17%, its name escaped.
  CHECK(html.find("<span class=\"op\">&#9733; mm</span>75%</td>") != std::string::npos);
  CHECK(html.find("<span class=\"op\">add&lt;1&gt;</span>17%</td>") != std::string::npos);
  CHECK(html.find("bottleneck: <b class=\"bottleneck-op\">&#9733; mm</b> (math-bound)") != std::string::npos);
  CHECK(html.find("<pre class=\"perf-check\">perf-check: 1 of 1 checks passed\n</pre>") != std::string::npos);
  // Nothing fetched: the only URL is the SVG namespace, once per timeline.
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = html.find(what); at != std::string::npos; at = html.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count("http") == 1);
  CHECK(count("http://www.w3.org/2000/svg") == 1);
}
