#include "loader/perf_check.hpp"

#include "formats/formats.hpp"
#include "netlist/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace tessera::loader {

using netlist::PerfMetric;
using netlist::PerfMetricKind;

double aiclkMhz(Arch arch) {
  switch (arch) {
  case Arch::Grayskull: return 1200.0;
  case Arch::Blackhole: return 1350.0;
  default: return 1000.0;
  }
}

namespace {

// The first event whose running tile count reaches `tiles`.
const sim::TimelineEvent* reaching(const std::vector<sim::TimelineEvent>& events, uint64_t tiles) {
  auto it = std::lower_bound(events.begin(), events.end(), tiles,
                             [](const sim::TimelineEvent& e, uint64_t t) { return e.tiles < t; });
  return it == events.end() ? nullptr : &*it;
}

std::string fmt(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

const netlist::Op* findOp(const netlist::Netlist& nl, const std::string& graph, const std::string& op) {
  for (const auto& g : nl.graphs)
    if (g.name == graph)
      for (const auto& o : g.ops)
        if (o.name == op) return &o;
  return nullptr;
}

} // namespace

std::vector<InputWindow> inputWindows(const sim::CoreTimeline& tl, uint64_t n, uint64_t& outTilesPerInput,
                                      uint64_t& in0TilesPerInput) {
  std::vector<InputWindow> windows;
  outTilesPerInput = in0TilesPerInput = 0;
  const uint64_t outTotal = tl.outputPushes.empty() ? 0 : tl.outputPushes.back().tiles;
  const uint64_t inTotal = tl.input0Pops.empty() ? 0 : tl.input0Pops.back().tiles;
  // Every input makes the same number of output tiles (and takes the same of operand 0).
  if (n == 0 || outTotal == 0 || outTotal % n != 0 || !tl.firstUnpack) return windows;
  outTilesPerInput = outTotal / n;
  in0TilesPerInput = inTotal % n == 0 ? inTotal / n : 0;
  for (uint64_t i = 0; i < n; ++i) {
    const sim::TimelineEvent* last = reaching(tl.outputPushes, (i + 1) * outTilesPerInput);
    InputWindow w;
    w.firstUnpack = *tl.firstUnpack;
    if (i > 0) {
      if (const sim::TimelineEvent* pop = in0TilesPerInput ? reaching(tl.input0Pops, i * in0TilesPerInput) : nullptr) {
        w.firstUnpack = pop->cycle;
        w.mathAtFirst = pop->mathBusy;
      } else {  // no operand-0 pops to go by: the previous input's last pack
        w.firstUnpack = windows.back().lastPack;
        w.mathAtFirst = windows.back().mathAtLast;
      }
    }
    w.lastPack = last->cycle;
    w.mathAtLast = last->mathBusy;
    windows.push_back(w);
  }
  return windows;
}

PerfChecker::PerfChecker(const netlist::Netlist& nl, Arch arch) : nl_(nl), arch_(arch) {}

void PerfChecker::add(uint32_t epoch, const std::string& graph, const sim::ChipRunResult& result) {
  if (!nl_.perfCheck) return;
  bool wanted = false;
  for (const auto& c : nl_.perfCheck->configs) wanted |= c.graph == graph;
  if (!wanted) return;
  Run run;
  run.epoch = epoch;
  run.graph = graph;
  run.inputs = result.inputCount;
  const uint64_t n = result.inputCount;
  for (const sim::CoreEpochReport& core : result.cores) {
    if (!core.kernel) continue;
    CoreInputs ci;
    ci.name = core.name;
    ci.op = core.name.substr(0, core.name.find('['));
    ci.x = core.noc.x;
    ci.y = core.noc.y;
    for (const InputWindow& w : inputWindows(core.timeline, n, ci.outTilesPerInput, ci.in0TilesPerInput)) {
      ci.firstUnpack.push_back(w.firstUnpack);
      ci.lastPack.push_back(w.lastPack);
      ci.mathAtFirst.push_back(w.mathAtFirst);
      ci.mathAtLast.push_back(w.mathAtLast);
    }
    run.cores.push_back(std::move(ci));
  }
  runs_.push_back(std::move(run));
}

std::string PerfChecker::report(bool& passed) const {
  passed = true;
  std::string out;
  if (!nl_.perfCheck || nl_.perfCheck->configs.empty()) {
    out += "perf-check: the netlist has no performance-check targets\n";
    return out;
  }
  int checks = 0, passes = 0;
  const double clk = aiclkMhz(arch_);
  // One result line: the metric, what it was measured on, observed vs expected.
  auto line = [&](const PerfMetric& m, const std::string& what, std::optional<double> observed, const std::string& why) {
    std::string text = "  " + std::string(netlist::perfMetricName(m.kind));
    if (!what.empty()) text += " " + what;
    if (m.expected == 0 && !m.minBound) {  // BUDA takes the target from the command line then
      out += text + ": " + (observed ? fmt(*observed) : "n/a") + ", no target (expected 0): not checked\n";
      return;
    }
    ++checks;
    bool ok = false;
    if (observed) ok = m.minBound ? *observed >= m.expected : std::fabs(*observed - m.expected) < m.rtol * m.expected;
    text += ": " + (observed ? fmt(*observed) : "n/a (" + why + ")");
    text += m.minBound ? ", min bound " + fmt(m.expected) : ", expected " + fmt(m.expected) + " rtol " + fmt(m.rtol);
    if (observed && !m.minBound && m.expected > 0) text += " (" + fmt(*observed / m.expected) + "x)";
    text += ok ? ": PASS\n" : ": FAIL\n";
    out += text;
    passes += ok;
    passed &= ok;
  };
  for (const netlist::PerfCheckConfig& c : nl_.perfCheck->configs) {
    bool hostOnly = true;
    for (const PerfMetric& m : c.metrics) hostOnly &= m.kind == PerfMetricKind::BackendSamplesPerSecond;
    if (hostOnly) {
      out += "perf-check " + netlist::quote(c.name) + ": host-side metrics only (backend-samples-per-second): not measured by the simulator\n";
      continue;
    }
    if (c.graph.empty()) {
      out += "perf-check " + netlist::quote(c.name) + ": names no graph (graph-name): not checked\n";
      continue;
    }
    std::vector<const Run*> runs;
    for (const Run& r : runs_)
      if (r.graph == c.graph) runs.push_back(&r);
    if (runs.empty()) {
      out += "perf-check " + netlist::quote(c.name) + " (graph " + netlist::quote(c.graph) + "): the graph never ran: FAIL\n";
      ++checks;
      passed = false;
      continue;
    }
    for (size_t k = 0; k < runs.size(); ++k) {
      const Run& r = *runs[k];
      out += "perf-check " + netlist::quote(c.name) + " (graph " + netlist::quote(c.graph) + ", program " +
             netlist::quote(c.program) + "): temporal epoch " + std::to_string(r.epoch) + ", run " +
             std::to_string(k + 1) + " of " + std::to_string(runs.size()) + ", " + std::to_string(r.inputs) +
             (r.inputs == 1 ? " input" : " inputs") + "\n";
      // Graph level: the latest last pack of each input over the cores.
      std::vector<uint64_t> lastPack(r.inputs, 0);
      bool measured = r.inputs > 0;
      for (const CoreInputs& ci : r.cores)
        for (size_t i = 0; i < ci.lastPack.size(); ++i) lastPack[i] = std::max(lastPack[i], ci.lastPack[i]);
      std::optional<double> cpt;
      std::string why = "needs 2 inputs or more";
      if (measured && r.inputs > 1) {
        if (lastPack.back() > lastPack.front())
          cpt = static_cast<double>(lastPack.back() - lastPack.front()) / static_cast<double>(r.inputs - 1);
        else
          why = "no per-input timeline";
      }
      for (const PerfMetric& m : c.metrics) {
        if (m.kind == PerfMetricKind::CyclesPerTensor) line(m, "", cpt, why);
        else if (m.kind == PerfMetricKind::TensorsPerSecond)
          line(m, "", cpt ? std::optional<double>(clk * 1e6 / *cpt) : std::nullopt, why);
      }
      // Core level: the target cores and every core of the target ops.
      std::vector<const CoreInputs*> targets;
      for (const CoreInputs& ci : r.cores) {
        bool t = false;
        for (const auto& [op, loc] : c.targetOps) t |= ci.op == op;
        for (const auto& [x, y] : c.targetCores) t |= ci.x == x && ci.y == y;
        if (t) targets.push_back(&ci);
      }
      for (const PerfMetric& m : c.metrics) {
        if (netlist::perfMetricIsGraphLevel(m.kind) || m.kind == PerfMetricKind::BackendSamplesPerSecond) continue;
        for (const CoreInputs* ci : targets) {
          const size_t n = ci->lastPack.size();
          const std::string noTimeline = "no per-input timeline for this core";
          const netlist::Op* op = findOp(nl_, r.graph, ci->op);
          auto perInput = [&](auto value) {
            if (c.targetInputs.empty()) line(m, ci->name, std::nullopt, "no target-inputs");
            for (int64_t i : c.targetInputs) {
              const std::string what = ci->name + " input " + std::to_string(i);
              if (static_cast<size_t>(i) >= n) {
                line(m, what, std::nullopt, n ? "the epoch ran " + std::to_string(n) + " inputs" : noTimeline);
                continue;
              }
              line(m, what, value(static_cast<size_t>(i)), "");
            }
          };
          const bool many = n > 1;
          switch (m.kind) {
          case PerfMetricKind::MathUtilization:
            perInput([&](size_t i) -> std::optional<double> {
              const uint64_t span = ci->lastPack[i] - ci->firstUnpack[i];
              if (span == 0) return std::nullopt;
              return 100.0 * static_cast<double>(ci->mathAtLast[i] - ci->mathAtFirst[i]) / static_cast<double>(span);
            });
            break;
          case PerfMetricKind::ExecutionCycles:
            perInput([&](size_t i) -> std::optional<double> {
              return static_cast<double>(ci->lastPack[i] - ci->firstUnpack[i]);
            });
            break;
          case PerfMetricKind::AverageMathUtilization:
          case PerfMetricKind::TotalRuntime: {
            std::optional<double> v;
            if (n > 0 && ci->lastPack.back() > ci->firstUnpack.front()) {
              const double span = static_cast<double>(ci->lastPack.back() - ci->firstUnpack.front());
              v = m.kind == PerfMetricKind::TotalRuntime
                      ? span
                      : 100.0 * static_cast<double>(ci->mathAtLast.back() - ci->mathAtFirst.front()) / span;
            }
            line(m, ci->name, v, noTimeline);
            break;
          }
          case PerfMetricKind::OutputBw:
          case PerfMetricKind::Input0Bw: {
            const bool output = m.kind == PerfMetricKind::OutputBw;
            std::optional<double> v;
            const uint64_t tiles = output ? ci->outTilesPerInput : ci->in0TilesPerInput;
            const auto& ts = output ? ci->lastPack : ci->firstUnpack;
            std::optional<formats::DataFormat> df;
            if (op) df = output ? std::optional(op->outDf.value)
                                : (op->inDf.empty() ? std::nullopt : std::optional(op->inDf.front().value));
            if (many && df && tiles > 0 && ts.back() > ts.front()) {
              const double bytes = static_cast<double>(tiles * formats::tileBytes(*df) * (n - 1));
              const double ns = static_cast<double>(ts.back() - ts.front()) / (clk / 1000.0);
              v = bytes / ns;
            }
            line(m, ci->name, v, many ? noTimeline : "needs 2 inputs or more");
            break;
          }
          default: break;
          }
        }
        if (targets.empty()) line(m, "", std::nullopt, "no core runs a target op or is a target core");
      }
    }
  }
  out += "perf-check: " + std::to_string(passes) + " of " + std::to_string(checks) + " checks passed\n";
  return out;
}

} // namespace tessera::loader
