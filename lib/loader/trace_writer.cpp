#include "loader/trace_writer.hpp"

#include "blob/blob_model.hpp"
#include "sim/stream_engine.hpp"
#include "sim/tensix_core.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace tessera::loader {

namespace {

using nlohmann::ordered_json;

// Track ids within a chip: 0 the epoch runs, then 100 per core (by NOC
// y, x): +1..3 its units, +4 its input windows, +10 + stream id its streams.
constexpr int kCoreTracks = 100;
constexpr int kInputsTrack = 4;
constexpr int kStreamTrack = 10;

const char* const kUnitNames[3] = {"unpack", "math", "pack"};

} // namespace

TraceLog::TraceLog(Arch arch, const SocDescriptor& soc) : arch_(arch), soc_(soc), mhz_(aiclkMhz(arch)) {}

void TraceLog::addChip(uint32_t epoch, const std::string& graph, const sim::ChipRunResult& r, uint64_t start) {
  Run run;
  run.epoch = epoch;
  run.graph = graph;
  run.chip = r.chip;
  run.start = start;
  run.prologue = r.prologueCycles;
  run.cycles = r.cycles;
  run.inputs = r.inputCount;
  for (const sim::CoreEpochReport& c : r.cores) {
    Core core;
    core.noc = c.noc;
    core.name = c.name;
    core.op = c.name.substr(0, c.name.rfind('['));
    core.kernel = c.kernel;
    core.cycles = c.cycles;
    core.unpack = c.cop.unpack.cycles;
    core.math = c.cop.math.cycles;
    core.pack = c.cop.pack.cycles;
    core.busy = c.timeline.busy;
    uint64_t outPer = 0, in0Per = 0;
    if (c.kernel) core.inputs = inputWindows(c.timeline, r.inputCount, outPer, in0Per);
    run.cores.push_back(std::move(core));
  }
  run.transfers = r.transfers;
  runs_.push_back(std::move(run));
}

void TraceLog::add(uint32_t epoch, const std::string& graph, const sim::ChipRunResult& run) {
  addChip(epoch, graph, run, now_);
  now_ += run.prologueCycles + run.cycles;
}

void TraceLog::addCluster(uint32_t epoch, const std::string& graph, const sim::ClusterRunResult& run) {
  uint64_t longest = 0;
  for (const sim::ChipRunResult& chip : run.chips) {
    addChip(epoch, graph, chip, now_);
    longest = std::max(longest, chip.prologueCycles + chip.cycles);
  }
  now_ += longest;
}

std::string TraceLog::traceJson(const std::string& netlist) const {
  // Microseconds at the AI clock, to the nanosecond.
  auto us = [&](uint64_t cycles) { return std::round(static_cast<double>(cycles) * 1000.0 / mhz_) / 1000.0; };
  std::vector<ordered_json> meta, events;
  std::map<ChipId, std::map<int, std::string>> tracks;  // per chip, tid -> name (named once, sorted)
  auto span = [&](const std::string& name, const char* cat, ChipId pid, int tid, uint64_t from, uint64_t to,
                  ordered_json args) {
    ordered_json e;
    e["name"] = name;
    e["cat"] = cat;
    e["ph"] = "X";
    e["ts"] = us(from);
    e["dur"] = std::round((us(to) - us(from)) * 1000.0) / 1000.0;
    e["pid"] = pid;
    e["tid"] = tid;
    e["args"] = std::move(args);
    events.push_back(std::move(e));
  };
  auto coreTrack = [&](CoreCoord noc) { return kCoreTracks * (1 + noc.y * soc_.gridX + noc.x); };
  for (const Run& run : runs_) {
    tracks[run.chip][0] = "epochs";
    const uint64_t zero = run.start + run.prologue;  // the epoch's cycle 0
    const std::string epochName = "epoch " + std::to_string(run.epoch) + " " + run.graph;
    {
      ordered_json boundary;
      boundary["name"] = epochName;
      boundary["cat"] = "epoch";
      boundary["ph"] = "i";
      boundary["s"] = "p";
      boundary["ts"] = us(run.start);
      boundary["pid"] = run.chip;
      boundary["tid"] = 0;
      events.push_back(std::move(boundary));
    }
    if (run.prologue > 0)
      span("prologue", "epoch", run.chip, 0, run.start, zero,
           {{"epoch", run.epoch}, {"graph", run.graph}, {"cycles", run.prologue}});
    span(epochName, "epoch", run.chip, 0, zero, zero + run.cycles,
         {{"epoch", run.epoch}, {"graph", run.graph}, {"inputs", run.inputs}, {"cycles", run.cycles}});
    for (const Core& c : run.cores) {
      const int base = coreTrack(c.noc);
      for (int t = 0; t < 3; ++t) {
        if (c.busy[t].empty()) continue;
        tracks[run.chip][base + 1 + t] = "core " + toString(c.noc) + " " + kUnitNames[t];
        for (const sim::UnitSpan& s : c.busy[t])
          span(c.op, kUnitNames[t], run.chip, base + 1 + t, zero + s.start, zero + s.end,
               {{"core", c.name},
                {"epoch", run.epoch},
                {"start", s.start},
                {"end", s.end},
                {"busy", s.busy},
                {"instructions", s.instructions}});
      }
      if (!c.inputs.empty()) tracks[run.chip][base + kInputsTrack] = "core " + toString(c.noc) + " inputs";
      for (size_t i = 0; i < c.inputs.size(); ++i) {
        const InputWindow& w = c.inputs[i];
        const uint64_t len = w.lastPack - w.firstUnpack;
        ordered_json args = {{"core", c.name}, {"epoch", run.epoch}, {"start", w.firstUnpack}, {"end", w.lastPack}};
        args["math_busy"] = w.mathAtLast - w.mathAtFirst;
        args["math_utilization"] =
            len ? std::round(1e4 * static_cast<double>(w.mathAtLast - w.mathAtFirst) / static_cast<double>(len)) / 100
                : 0.0;
        span(c.op + " input " + std::to_string(i), "input", run.chip, base + kInputsTrack, zero + w.firstUnpack,
             zero + w.lastPack, std::move(args));
      }
    }
    for (const sim::TransferSpan& t : run.transfers) {
      const int tid = coreTrack(t.core) + kStreamTrack + static_cast<int>(t.stream);
      tracks[run.chip][tid] = "core " + toString(t.core) + " stream " + std::to_string(t.stream);
      blob::StreamName name{run.chip, static_cast<uint32_t>(t.core.y), static_cast<uint32_t>(t.core.x), t.stream};
      span(sim::transferKindName(t.kind), "stream", run.chip, tid, zero + t.start, zero + t.end,
           {{"stream", sim::streamNameText(name)},
            {"epoch", run.epoch},
            {"start", t.start},
            {"end", t.end},
            {"tiles", t.tiles},
            {"bytes", t.bytes}});
    }
  }
  for (const auto& [chip, named] : tracks) {
    ordered_json p;
    p["name"] = "process_name";
    p["ph"] = "M";
    p["pid"] = chip;
    p["tid"] = 0;
    p["args"] = {{"name", "chip " + std::to_string(chip) + " (" + std::string(archName(arch_)) + ", " +
                              std::to_string(static_cast<int>(mhz_)) + " MHz)"}};
    meta.push_back(std::move(p));
    for (const auto& [tid, name] : named) {
      ordered_json t;
      t["name"] = "thread_name";
      t["ph"] = "M";
      t["pid"] = chip;
      t["tid"] = tid;
      t["args"] = {{"name", name}};
      meta.push_back(t);
      t["name"] = "thread_sort_index";
      t["args"] = {{"sort_index", tid}};
      meta.push_back(std::move(t));
    }
  }
  std::string out = "{\"traceEvents\": [\n";
  bool first = true;
  for (const auto* list : {&meta, &events})
    for (const ordered_json& e : *list) {
      if (!first) out += ",\n";
      first = false;
      out += e.dump();
    }
  ordered_json other;
  other["netlist"] = netlist;
  other["arch"] = std::string(archName(arch_));
  other["aiclk_mhz"] = mhz_;
  other["cycles"] = now_;
  out += "\n],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": " + other.dump() + "\n}\n";
  return out;
}

} // namespace tessera::loader
