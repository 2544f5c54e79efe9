#include "netlist/perf_check.hpp"

#include "netlist/model.hpp"
#include "netlist/text.hpp"

#include <cmath>
#include <set>

namespace tessera::netlist {

namespace {

struct MetricName {
  const char* name;
  PerfMetricKind kind;
};
constexpr MetricName kMetrics[] = {
    {"tensors-per-second", PerfMetricKind::TensorsPerSecond},
    {"cycles-per-tensor", PerfMetricKind::CyclesPerTensor},
    {"math-utilization", PerfMetricKind::MathUtilization},
    {"execution-cycles", PerfMetricKind::ExecutionCycles},
    {"average-math-utilization", PerfMetricKind::AverageMathUtilization},
    {"total-runtime", PerfMetricKind::TotalRuntime},
    {"input0-bw", PerfMetricKind::Input0Bw},
    {"output-bw", PerfMetricKind::OutputBw},
    {"backend-samples-per-second", PerfMetricKind::BackendSamplesPerSecond},
};

std::string describe(const yaml::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsScalar()) return quote(n.Scalar());
  if (n.IsSequence()) return "a list";
  return "a map";
}

class PerfParser {
public:
  explicit PerfParser(DiagnosticEngine& d) : d_(d) {}

  PerfCheck run(const yaml::Node& k, const yaml::Node& v) {
    PerfCheck pc;
    pc.loc = locOf(k);
    if (v.IsNull()) return pc;
    if (!v.IsMap()) {
      err(at(k, v), "performance-check: must be a map of named checks, got " + describe(v));
      return pc;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
      const yaml::Node& ck = it->first;
      if (!ck.IsScalar()) {
        err(locOf(ck), "performance-check: check names must be plain names, got " + describe(ck));
        continue;
      }
      if (auto c = config(ck, it->second)) pc.configs.push_back(std::move(*c));
    }
    return pc;
  }

private:
  DiagnosticEngine& d_;

  static SourceLoc at(const yaml::Node& k, const yaml::Node& v) {
    SourceLoc l = locOf(v);
    return l.valid() ? l : locOf(k);
  }
  void err(SourceLoc loc, const std::string& msg) { d_.error("perf-check", loc, msg); }

  std::optional<PerfCheckConfig> config(const yaml::Node& k, const yaml::Node& v) {
    PerfCheckConfig c;
    c.name = k.Scalar();
    c.loc = locOf(k);
    const std::string where = "performance-check " + quote(c.name);
    if (!v.IsMap()) {
      err(at(k, v), where + ": must be a map, got " + describe(v));
      return std::nullopt;
    }
    bool ok = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const yaml::Node& fk = it->first;
      const yaml::Node& fv = it->second;
      const std::string key = fk.IsScalar() ? fk.Scalar() : std::string();
      if (key == "graph-name" || key == "program-name") {
        if (!fv.IsScalar() || fv.Scalar().empty()) {
          err(at(fk, fv), where + ": '" + key + "' must be a name, got " + describe(fv));
          ok = false;
        } else if (key == "graph-name") {
          c.graph = fv.Scalar();
          c.graphLoc = locOf(fv);
        } else {
          c.program = fv.Scalar();
          c.programLoc = locOf(fv);
        }
      } else if (key == "target-ops") {
        if (!fv.IsSequence()) {
          err(at(fk, fv), where + ": 'target-ops' must be a list of op names, got " + describe(fv));
          ok = false;
          continue;
        }
        for (auto o = fv.begin(); o != fv.end(); ++o) {
          const yaml::Node& n = *o;
          if (n.IsScalar()) c.targetOps.emplace_back(n.Scalar(), locOf(n));
          else {
            err(at(fk, n), where + ": 'target-ops' entries must be op names, got " + describe(n));
            ok = false;
          }
        }
      } else if (key == "target-cores") {
        if (!fv.IsSequence()) {
          err(at(fk, fv), where + ": 'target-cores' must be a list of \"x-y\" cores, got " + describe(fv));
          ok = false;
          continue;
        }
        for (auto o = fv.begin(); o != fv.end(); ++o) {
          const yaml::Node& n = *o;
          const std::string s = n.IsScalar() ? n.Scalar() : std::string();
          const size_t dash = s.find('-');
          std::optional<int64_t> x, y;
          if (dash != std::string::npos) {
            x = parseInt64(s.substr(0, dash));
            y = parseInt64(s.substr(dash + 1));
          }
          if (!x || !y || *x < 0 || *y < 0 || *x > 255 || *y > 255) {
            err(at(fk, n), where + ": 'target-cores' entries must be cores \"x-y\", got " + describe(n));
            ok = false;
          } else {
            c.targetCores.emplace_back(static_cast<int>(*x), static_cast<int>(*y));
          }
        }
      } else if (key == "target-inputs") {
        if (!fv.IsSequence()) {
          err(at(fk, fv), where + ": 'target-inputs' must be a list of input indices, got " + describe(fv));
          ok = false;
          continue;
        }
        for (auto o = fv.begin(); o != fv.end(); ++o) {
          const yaml::Node& n = *o;
          std::optional<int64_t> i = n.IsScalar() ? parseInt64(n.Scalar()) : std::nullopt;
          if (!i || *i < 0) {
            err(at(fk, n), where + ": 'target-inputs' entries must be input indices (integers >= 0), got " + describe(n));
            ok = false;
          } else {
            c.targetInputs.push_back(*i);
          }
        }
      } else if (key == "test-group" || key == "test-name") {
        // BUDA's perf-infra labels for host checks: kept out of the model.
      } else {
        const MetricName* m = nullptr;
        for (const MetricName& mn : kMetrics)
          if (key == mn.name) m = &mn;
        if (!m) {
          d_.warning("unknown-field", locOf(fk), where + ": unknown field " + describe(fk) + " (ignored)");
          continue;
        }
        if (auto metric = parseMetric(fk, fv, m->kind, where)) c.metrics.push_back(*metric);
        else ok = false;
      }
    }
    if (!ok) return std::nullopt;
    if (c.metrics.empty()) {
      err(c.loc, where + ": no metric to check (tensors-per-second, cycles-per-tensor, math-utilization, ...)");
      return std::nullopt;
    }
    // Without graph-name the check matches no epoch (BUDA matches it against
    // every epoch's graph and program names): kept, and reported unchecked.
    return c;
  }

  std::optional<PerfMetric> parseMetric(const yaml::Node& k, const yaml::Node& v, PerfMetricKind kind,
                                        const std::string& where) {
    PerfMetric m;
    m.kind = kind;
    m.loc = locOf(k);
    const std::string what = where + ": " + perfMetricName(kind);
    if (!v.IsMap()) {
      err(at(k, v), what + ": must be a map with 'expected' and 'rtol' (or 'min_bound'), got " + describe(v));
      return std::nullopt;
    }
    bool haveExpected = false, haveBound = false, ok = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const yaml::Node& fk = it->first;
      const yaml::Node& fv = it->second;
      const std::string key = fk.IsScalar() ? fk.Scalar() : std::string();
      if (key != "expected" && key != "rtol" && key != "min_bound") {
        err(locOf(fk), what + ": unknown field " + describe(fk) + " (expected, rtol, min_bound)");
        ok = false;
        continue;
      }
      std::optional<double> r = fv.IsScalar() ? parseReal(fv.Scalar()) : std::nullopt;
      if (!r || !std::isfinite(*r) || *r < 0) {
        err(at(fk, fv), what + ": '" + key + "' must be a number >= 0, got " + describe(fv));
        ok = false;
        continue;
      }
      if (key == "rtol") m.rtol = *r;
      else {
        m.expected = *r;
        (key == "expected" ? haveExpected : haveBound) = true;
      }
    }
    if (!ok) return std::nullopt;
    if (haveExpected == haveBound) {
      err(m.loc, what + (haveExpected ? ": has both 'expected' and 'min_bound'" : ": needs 'expected' (or 'min_bound')"));
      return std::nullopt;
    }
    m.minBound = haveBound;
    return m;
  }
};

} // namespace

const char* perfMetricName(PerfMetricKind kind) {
  for (const MetricName& m : kMetrics)
    if (m.kind == kind) return m.name;
  return "?";
}

bool perfMetricIsGraphLevel(PerfMetricKind kind) {
  return kind == PerfMetricKind::TensorsPerSecond || kind == PerfMetricKind::CyclesPerTensor;
}

bool perfMetricLowerIsBetter(PerfMetricKind kind) {
  return kind == PerfMetricKind::CyclesPerTensor || kind == PerfMetricKind::ExecutionCycles ||
         kind == PerfMetricKind::TotalRuntime;
}

PerfCheck parsePerfCheck(const yaml::Node& k, const yaml::Node& v, DiagnosticEngine& diags) {
  return PerfParser(diags).run(k, v);
}

void validatePerfCheck(const Netlist& nl, DiagnosticEngine& diags) {
  if (!nl.perfCheck) return;
  for (const PerfCheckConfig& c : nl.perfCheck->configs) {
    const std::string where = "performance-check " + quote(c.name);
    const Graph* graph = nullptr;
    for (const Graph& g : nl.graphs)
      if (g.name == c.graph) graph = &g;
    if (!c.graph.empty() && !graph)
      diags.error("perf-check", c.graphLoc, where + ": graph " + quote(c.graph) + " is not a graph of the netlist");
    if (!c.program.empty()) {
      const Program* program = nullptr;
      for (const Program& p : nl.programs)
        if (p.name == c.program) program = &p;
      if (!program) {
        diags.error("perf-check", c.programLoc, where + ": program " + quote(c.program) + " is not a program of the netlist");
      } else if (graph) {
        bool executes = false;
        for (const Instruction& i : program->instructions)
          executes |= i.kind == InstrKind::Execute && i.graphName.value == c.graph;
        if (!executes)
          diags.error("perf-check", c.programLoc,
                      where + ": program " + quote(c.program) + " never executes graph " + quote(c.graph));
      }
    }
    if (graph)
      for (const auto& [op, loc] : c.targetOps) {
        bool found = false;
        for (const Op& o : graph->ops) found |= o.name == op;
        if (!found) diags.error("perf-check", loc, where + ": target op " + quote(op) + " is not an op of graph " + quote(c.graph));
      }
  }
}

} // namespace tessera::netlist
