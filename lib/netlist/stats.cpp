// `netlist-check --stats`. Only printed for valid netlists, but written to
// survive any model: absent fields count as 0 and all sizes use saturating
// 64-bit arithmetic, so no input can overflow or crash the summary.
#include "netlist/stats.hpp"

#include "netlist/shape.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tessera::netlist {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
uint64_t satMul(uint64_t a, uint64_t b) {
  unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return p > kMax ? kMax : static_cast<uint64_t>(p);
}
uint64_t satAdd(uint64_t a, uint64_t b) { return a > kMax - b ? kMax : a + b; }

// Negative sizes only occur in invalid netlists; they count as nothing.
uint64_t nonNeg(int64_t v) { return v < 0 ? 0 : static_cast<uint64_t>(v); }
uint64_t area(const Field<Dim2>& f) { return f.present() ? satMul(nonNeg(f.value.r), nonNeg(f.value.c)) : 0; }

std::string num(uint64_t v) { return std::to_string(v); }

// Bytes in the largest binary unit that keeps the number >= 1, one decimal.
std::string human(uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(units)) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

// A plain-text table indented by two, two spaces between columns. `align`
// has one letter per column: 'l' for text, 'r' for numbers.
class Table {
public:
  Table(std::string align, std::vector<std::string> header) : align_(std::move(align)) {
    rows_.push_back(std::move(header));
  }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const {
    std::vector<size_t> width;
    for (const auto& row : rows_)
      for (size_t i = 0; i < row.size(); ++i) {
        if (width.size() <= i) width.push_back(0);
        width[i] = std::max(width[i], row[i].size());
      }
    std::string out;
    for (const auto& row : rows_) {
      std::string line = " ";
      for (size_t i = 0; i < row.size(); ++i) {
        std::string pad(width[i] - row[i].size(), ' ');
        line += " ";
        line += i < align_.size() && align_[i] == 'r' ? pad + row[i] : row[i] + pad;
        if (i + 1 < row.size()) line += " ";
      }
      while (!line.empty() && line.back() == ' ') line.pop_back(); // no trailing blanks
      out += line + "\n";
    }
    return out;
  }

private:
  std::string align_;
  std::vector<std::vector<std::string>> rows_;
};

std::string summary(const Netlist& nl) {
  std::string archs;
  for (const auto& a : nl.devices.arch) archs += (archs.empty() ? "" : ", ") + std::string(archName(a.value));
  size_t byType[2] = {0, 0}, byLoc[2] = {0, 0};
  for (const Queue& q : nl.queues) {
    if (q.type.present()) ++byType[q.type.value == IoType::Ram];
    if (q.location.present()) ++byLoc[q.location.value == IoLocation::Host];
  }
  size_t ops = 0;
  for (const Graph& g : nl.graphs) ops += g.ops.size();
  // "key: value" lines with the values aligned in one column.
  std::string out;
  size_t w = 0;
  std::vector<std::pair<std::string, std::string>> lines = {
      {"archs:", archs.empty() ? "-" : archs},
      {"queues:", num(nl.queues.size()) + " (queue " + num(byType[0]) + ", ram " + num(byType[1]) + "; dram " +
                      num(byLoc[0]) + ", host " + num(byLoc[1]) + ")"},
      {"graphs:", num(nl.graphs.size())},
      {"ops:", num(ops)},
      {"fused ops:", num(nl.fusedOps.size())},
      {"programs:", num(nl.programs.size())},
  };
  for (const auto& [k, v] : lines) w = std::max(w, k.size());
  for (const auto& [k, v] : lines) out += k + std::string(w - k.size() + 1, ' ') + v + "\n";
  return out;
}

std::string opsByType(const Netlist& nl) {
  std::map<std::string, uint64_t> counts; // map: names come out sorted
  for (const Graph& g : nl.graphs)
    for (const Op& op : g.ops) ++counts[op.type.present() ? op.type.value : "?"];
  std::vector<std::pair<std::string, uint64_t>> sorted(counts.begin(), counts.end());
  // Most frequent first; ties by name (stable over the sorted map order).
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  Table t("lr", {"type", "count"});
  for (const auto& [type, n] : sorted) t.add({type, num(n)});
  return "\nops by type:\n" + t.str();
}

std::string graphs(const Netlist& nl) {
  Table t("lrrll", {"graph", "ops", "cores", "bbox (r,c)", "size"});
  for (const Graph& g : nl.graphs) {
    uint64_t cores = 0;
    int64_t r0 = 0, c0 = 0, r1 = 0, c1 = 0; // inclusive corners of the placed grids
    bool any = false;
    for (const Op& op : g.ops) {
      cores = satAdd(cores, area(op.gridSize));
      if (!op.gridLoc.present() || !op.gridSize.present()) continue;
      Dim2 size = op.placedGridSize();
      if (size.r <= 0 || size.c <= 0) continue;
      // Clamp so the corner arithmetic cannot overflow on absurd inputs.
      auto clamp = [](int64_t v) { return std::clamp<int64_t>(v, -(int64_t{1} << 40), int64_t{1} << 40); };
      int64_t top = clamp(op.gridLoc.value.r), left = clamp(op.gridLoc.value.c);
      int64_t bottom = top + clamp(size.r) - 1, right = left + clamp(size.c) - 1;
      if (!any) r0 = top, c0 = left, r1 = bottom, c1 = right;
      r0 = std::min(r0, top), c0 = std::min(c0, left), r1 = std::max(r1, bottom), c1 = std::max(c1, right);
      any = true;
    }
    std::string box = "-", size = "-";
    if (any) {
      box = "(" + std::to_string(r0) + "," + std::to_string(c0) + ")-(" + std::to_string(r1) + "," +
            std::to_string(c1) + ")";
      size = std::to_string(r1 - r0 + 1) + "x" + std::to_string(c1 - c0 + 1);
    }
    t.add({g.name, num(g.ops.size()), num(cores), box, size});
  }
  return "\ngraphs:\n" + t.str();
}

std::string queueBytes(const Netlist& nl) {
  struct Usage {
    uint64_t queues = 0, buffers = 0, bytes = 0;
  };
  // (target device, channel): channels of different chips are different memories.
  std::map<std::pair<int64_t, int64_t>, Usage> dram;
  Usage host, dramTotal;
  for (const Queue& q : nl.queues) {
    if (!q.location.present()) continue;
    uint64_t per = queueBufferBytes(q);
    int64_t device = q.targetDevice.present() ? q.targetDevice.value : 0;
    if (q.location.value == IoLocation::Host) {
      host.queues += 1;
      host.buffers += q.host.size();
      host.bytes = satAdd(host.bytes, satMul(per, q.host.size()));
      continue;
    }
    std::set<int64_t> seen; // a queue counts once per channel it touches
    for (const AllocAddress& a : q.dram) {
      Usage& u = dram[{device, a.channel}];
      if (seen.insert(a.channel).second) u.queues += 1;
      u.buffers += 1;
      u.bytes = satAdd(u.bytes, per);
      dramTotal.buffers += 1;
      dramTotal.bytes = satAdd(dramTotal.bytes, per);
    }
    dramTotal.queues += 1;
  }
  Table t("lrrrrr", {"device", "channel", "queues", "buffers", "bytes", "size"});
  for (const auto& [key, u] : dram)
    t.add({std::to_string(key.first), std::to_string(key.second), num(u.queues), num(u.buffers), num(u.bytes),
           human(u.bytes)});
  t.add({"total", "", num(dramTotal.queues), num(dramTotal.buffers), num(dramTotal.bytes), human(dramTotal.bytes)});
  std::string out = "\nqueue bytes per DRAM channel (entries*t*mblock*ublock tiles + 32-byte header per buffer):\n";
  out += t.str();
  out += "\nhost queues: " + num(host.queues) + ", buffers " + num(host.buffers) + ", bytes " + num(host.bytes) +
         " (" + human(host.bytes) + ")\n";
  return out;
}

} // namespace

std::string formatStats(const Netlist& netlist) {
  return summary(netlist) + opsByType(netlist) + graphs(netlist) + queueBytes(netlist);
}

} // namespace tessera::netlist
