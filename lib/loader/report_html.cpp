// loader --report FILE.html: one self-contained page (inline CSS, SVG and a
// few lines of script; nothing fetched) drawn from the TraceLog:
//   - per temporal epoch (and chip): the placement grid of the worker cores
//     in NOC coordinates, each kernel core showing its op and utilisation
//     (its busiest unit's busy cycles over the epoch's cycles, over every run
//     of the epoch), coloured by it; the bottleneck op (PerfReport's rule)
//     marked with a star and a red outline;
//   - the timeline of the epoch's first run: per kernel core a row per unit
//     with its busy spans (a hover title gives the cycles);
//   - loader --perf-check's table.
// docs/loader.md, "Report".
#include "loader/perf_report.hpp"
#include "loader/trace_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace tessera::loader {

namespace {

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string num(double v, const char* format = "%.1f") {
  char b[48];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

// Light (idle) to dark orange (always busy).
std::string heat(double share) {
  const double light = 94.0 - 44.0 * std::clamp(share, 0.0, 1.0);
  return "hsl(28,90%," + num(light, "%.0f") + "%)";
}

const char* const kUnitNames[3] = {"unpack", "math", "pack"};
const char* const kUnitColours[3] = {"#4e79a7", "#e15759", "#59a14f"};

constexpr const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:17px;margin-top:32px;border-bottom:1px solid #ccc}
table.grid{border-collapse:collapse;margin:8px 0}
table.grid td,table.grid th{border:1px solid #bbb;width:84px;height:40px;text-align:center;font-size:11px;padding:1px;overflow:hidden}
table.grid th{background:#f3f3f3;height:16px;font-weight:normal;color:#666}
td.idle{background:#fafafa}
td.core .op{font-weight:600;display:block;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;max-width:84px}
td.bottleneck{outline:3px solid #c00;outline-offset:-3px}
td.hl,g.hl rect.bg{background:#ffe08a;fill:#ffe08a}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
svg.timeline text{font-size:10px;font-family:monospace}
pre{background:#f6f6f6;padding:8px;overflow:auto}
.summary b{font-weight:600}
)";

// Hovering a grid cell or a timeline row lights up the op's cells and rows.
// The last line says what the browser laid out (the report's test reads it).
constexpr const char* kScript = R"(
document.querySelectorAll('[data-op]').forEach(function(el){
  function mark(on){document.querySelectorAll('[data-op="'+el.dataset.op+'"]').forEach(function(o){o.classList.toggle('hl',on);});}
  el.addEventListener('mouseenter',function(){mark(true);});
  el.addEventListener('mouseleave',function(){mark(false);});
});
(function(){
  var shown=0,marked=0;
  document.querySelectorAll('td.core').forEach(function(td){
    var r=td.getBoundingClientRect();
    if(r.width>0&&r.height>0){shown++;if(td.classList.contains('bottleneck'))marked++;}
  });
  var p=document.getElementById('rendered');
  if(p)p.textContent='rendered: '+shown+' core cells, '+marked+' marked bottleneck, '+document.querySelectorAll('svg.timeline rect.busy').length+' timeline spans';
})();
)";

struct CoreAgg {
  std::string name, op;
  uint64_t busiest = 0;  // over the runs
};

} // namespace

std::string TraceLog::reportHtml(const std::string& netlist, const PerfReport& perf,
                                 const std::string& perfCheck) const {
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Tessera report: " + esc(netlist) +
       "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  h += "<h1>Tessera performance report: " + esc(netlist) + "</h1>\n";
  h += "<p class=\"summary\">" + esc(std::string(archName(arch_))) + " at " + num(mhz_, "%.0f") + " MHz; " +
       std::to_string(runs_.size()) + (runs_.size() == 1 ? " epoch run, " : " epoch runs, ") + std::to_string(now_) + " cycles (" + num(now_ / mhz_, "%.1f") +
       " &micro;s).</p>\n";

  // Epochs (and chips) in the order they first ran.
  std::vector<std::pair<uint32_t, ChipId>> order;
  std::map<std::pair<uint32_t, ChipId>, std::vector<const Run*>> runsOf;
  for (const Run& r : runs_) {
    auto key = std::make_pair(r.epoch, r.chip);
    if (!runsOf.count(key)) order.push_back(key);
    runsOf[key].push_back(&r);
  }
  std::set<int> xs, ys;
  for (const CoreCoord& w : soc_.workers) xs.insert(w.x), ys.insert(w.y);
  const std::set<CoreCoord> workers(soc_.workers.begin(), soc_.workers.end());

  for (const auto& key : order) {
    const std::vector<const Run*>& runs = runsOf[key];
    const Run& first = *runs.front();
    std::string bottleneck, boundBy;
    if (auto it = perf.epochs().find(key.first); it != perf.epochs().end()) {
      bottleneck = it->second.bottleneck();
      if (!bottleneck.empty()) boundBy = it->second.ops.at(bottleneck).boundBy();
    }
    uint64_t cycles = 0;
    std::map<CoreCoord, CoreAgg> cores;
    for (const Run* r : runs) {
      cycles += r->cycles;
      for (const Core& c : r->cores) {
        if (!c.kernel) continue;
        CoreAgg& a = cores[c.noc];
        a.name = c.name;
        a.op = c.op;
        a.busiest += std::max({c.unpack, c.math, c.pack});
      }
    }
    h += "<section class=\"epoch\" id=\"epoch-" + std::to_string(key.first) + "-chip-" + std::to_string(key.second) +
         "\">\n<h2>Epoch " + std::to_string(key.first) + ": " + esc(first.graph) +
         (key.second ? " (chip " + std::to_string(key.second) + ")" : "") + "</h2>\n";
    h += "<p class=\"summary\">" + std::to_string(runs.size()) + (runs.size() == 1 ? " run, " : " runs, ") +
         std::to_string(cycles) + " cycles, " + std::to_string(cores.size()) + " kernel cores";
    if (!bottleneck.empty())
      h += "; bottleneck: <b class=\"bottleneck-op\">&#9733; " + esc(bottleneck) + "</b> (" + boundBy + "-bound)";
    h += ".</p>\n";

    // The placement grid.
    h += "<table class=\"grid\">\n<tr><th>y \\ x</th>";
    for (int x : xs) h += "<th>" + std::to_string(x) + "</th>";
    h += "</tr>\n";
    for (int y : ys) {
      h += "<tr><th>" + std::to_string(y) + "</th>";
      for (int x : xs) {
        const CoreCoord noc{x, y};
        auto it = cores.find(noc);
        if (it == cores.end()) {
          h += workers.count(noc) ? "<td class=\"idle\"></td>" : "<td></td>";
          continue;
        }
        const CoreAgg& a = it->second;
        const double share = cycles ? static_cast<double>(a.busiest) / static_cast<double>(cycles) : 0.0;
        const bool isBottleneck = a.op == bottleneck;
        h += "<td class=\"core" + std::string(isBottleneck ? " bottleneck" : "") + "\" data-op=\"" + esc(a.op) +
             "\" title=\"" + esc(a.name) + " at " + toString(noc) + ": busiest unit " + std::to_string(a.busiest) +
             " of " + std::to_string(cycles) + " cycles\" style=\"background:" + heat(share) + "\"><span class=\"op\">" +
             (isBottleneck ? "&#9733; " : "") + esc(a.op) + "</span>" + num(100 * share, "%.0f") + "%</td>";
      }
      h += "</tr>\n";
    }
    h += "</table>\n<p class=\"legend\">utilisation: busiest unit's busy cycles / epoch cycles"
         "<span style=\"background:" + heat(0) + "\"></span>0%<span style=\"background:" + heat(0.5) +
         "\"></span>50%<span style=\"background:" + heat(1) + "\"></span>100%</p>\n";

    // The timeline of the first run.
    std::vector<const Core*> rows;
    for (const Core& c : first.cores)
      if (c.kernel) rows.push_back(&c);
    const double width = 960, label = 200, rowH = 11;
    const double scale = first.cycles ? width / static_cast<double>(first.cycles) : 0.0;
    const double height = rowH * 3 * rows.size() + 24;
    h += "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(label + width + 10, "%.0f") +
         "\" height=\"" + num(height, "%.0f") + "\">\n";
    h += "<text x=\"" + num(label, "%.0f") + "\" y=\"10\">run 1: cycle 0</text><text x=\"" + num(label + width, "%.0f") +
         "\" y=\"10\" text-anchor=\"end\">" + std::to_string(first.cycles) + "</text>\n";
    double y = 16;
    for (const Core* c : rows) {
      h += "<g data-op=\"" + esc(c->op) + "\">";
      for (int t = 0; t < 3; ++t, y += rowH) {
        h += "<rect class=\"bg\" x=\"0\" y=\"" + num(y, "%.0f") + "\" width=\"" + num(label + width, "%.0f") +
             "\" height=\"" + num(rowH, "%.0f") + "\" fill=\"" + (t == 1 ? "#f4f4f4" : "#fff") + "\"/>";
        // Long op names are cut to fit the label column (the hover title has all).
        std::string labelText = c->name.size() > 26 ? c->name.substr(0, 12) + "..." + c->name.substr(c->name.size() - 11) : c->name;
        h += "<text x=\"2\" y=\"" + num(y + rowH - 2, "%.0f") + "\"><title>" + esc(c->name) + "</title>" + esc(labelText) +
             " " + kUnitNames[t] + "</text>";
        // Spans closer than a pixel are drawn as one rectangle.
        double open = -1, close = -1;
        uint64_t busy = 0, from = 0, to = 0;
        auto flush = [&] {
          if (open < 0) return;
          h += "<rect class=\"busy\" x=\"" + num(label + open, "%.1f") + "\" y=\"" + num(y + 1, "%.0f") + "\" width=\"" +
               num(std::max(0.5, close - open), "%.1f") + "\" height=\"" + num(rowH - 2, "%.0f") + "\" fill=\"" +
               kUnitColours[t] + "\"><title>" + esc(c->op) + " " + kUnitNames[t] + ": cycles " + std::to_string(from) +
               "-" + std::to_string(to) + ", " + std::to_string(busy) + " busy</title></rect>";
        };
        for (const sim::UnitSpan& s : c->busy[t]) {
          const double a = static_cast<double>(s.start) * scale, b = static_cast<double>(s.end) * scale;
          if (open >= 0 && a <= close + 1.0) {
            close = std::max(close, b);
            busy += s.busy;
            to = s.end;
            continue;
          }
          flush();
          open = a, close = b, busy = s.busy, from = s.start, to = s.end;
        }
        flush();
      }
      h += "</g>\n";
    }
    h += "</svg>\n<p class=\"legend\">";
    for (int t = 0; t < 3; ++t) h += "<span style=\"background:" + std::string(kUnitColours[t]) + "\"></span>" + kUnitNames[t];
    h += "</p>\n</section>\n";
  }
  h += "<h2>Performance checks</h2>\n";
  h += perfCheck.empty() ? "<p>not measured (run with --perf-check)</p>\n"
                         : "<pre class=\"perf-check\">" + esc(perfCheck) + "</pre>\n";
  h += "<p id=\"rendered\" class=\"summary\"></p>\n";
  h += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return h;
}

} // namespace tessera::loader
