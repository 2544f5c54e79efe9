#include "loader/perf_report.hpp"

#include <algorithm>
#include <cstdio>

namespace tessera::loader {

namespace {

// "softmax_exp[0,1]" -> "softmax_exp": the sim target names each op core so.
std::string opOfCore(const std::string& core) {
  auto bracket = core.rfind('[');
  return bracket == std::string::npos ? core : core.substr(0, bracket);
}

std::string percent(double share) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f%%", share * 100);
  return s;
}

std::string megabytes(uint64_t bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f MB", static_cast<double>(bytes) / 1e6);
  return s;
}

std::string pad(const std::string& s, size_t width, bool right) {
  std::string fill(s.size() < width ? width - s.size() : 0, ' ');
  return right ? fill + s : s + fill;
}

} // namespace

const char* OpPerf::boundBy() const {
  if (math >= unpack && math >= pack) return "math";
  return unpack >= pack ? "unpack" : "pack";
}

double EpochPerf::utilisation() const {
  const double capacity = static_cast<double>(cycles) * coresUsed;
  return capacity > 0 ? static_cast<double>(busySum) / capacity : 0.0;
}

std::string EpochPerf::bottleneck() const {
  std::string best;
  uint64_t most = 0;
  for (const auto& [name, op] : ops)
    if (best.empty() || op.busiest() > most) best = name, most = op.busiest();
  return best;
}

void PerfReport::add(uint32_t epoch, const std::string& graph, const sim::ChipRunResult& run, int workerCores) {
  EpochPerf& e = epochs_[epoch];
  e.epoch = epoch;
  e.graph = graph;
  e.workerCores = workerCores;
  ++e.runs;
  e.cycles += run.cycles;
  e.prologueCycles += run.prologueCycles;
  e.binariesCycles += run.binariesCycles;
  e.nocBytes += run.streams.nocBytes;
  e.dramReadBytes += run.streams.dramReadBytes;
  e.dramWriteBytes += run.streams.dramWriteBytes;
  // Per op, this run: the busiest core's unit cycles and the last finish.
  std::map<std::string, OpPerf> thisRun;
  int used = 0;
  for (const sim::CoreEpochReport& core : run.cores) {
    if (!core.kernel) continue; // a relay-only core: its streams count in the epoch's bytes
    ++used;
    OpPerf& op = thisRun[opOfCore(core.name)];
    ++op.cores;
    op.finishCycles = std::max(op.finishCycles, core.cycles);
    op.unpack = std::max(op.unpack, core.cop.unpack.cycles);
    op.math = std::max(op.math, core.cop.math.cycles);
    op.pack = std::max(op.pack, core.cop.pack.cycles);
    op.tilesPacked += core.cop.tilesPacked;
    op.matmulTiles += core.cop.matmulTiles;
    op.sfpuTiles += core.cop.sfpuTiles;
    e.busySum += std::max({core.cop.unpack.cycles, core.cop.math.cycles, core.cop.pack.cycles});
  }
  e.coresUsed = used;
  for (const auto& [name, r] : thisRun) {
    OpPerf& op = e.ops[name];
    op.cores = r.cores;
    op.finishCycles += r.finishCycles;
    op.unpack += r.unpack;
    op.math += r.math;
    op.pack += r.pack;
    op.tilesPacked += r.tilesPacked;
    op.matmulTiles += r.matmulTiles;
    op.sfpuTiles += r.sfpuTiles;
  }
}

void PerfReport::addCluster(uint32_t epoch, const std::string& graph, const sim::ClusterRunResult& run,
                            int workerCoresPerChip) {
  // The epoch's figures: every chip's cores as one grid, the cluster's cycles.
  sim::ChipRunResult all;
  all.cycles = run.cycles;
  for (const sim::ChipRunResult& r : run.chips) {
    all.prologueCycles = std::max(all.prologueCycles, r.prologueCycles);
    all.binariesCycles = std::max(all.binariesCycles, r.binariesCycles);
    all.streams.nocBytes += r.streams.nocBytes;
    all.streams.dramReadBytes += r.streams.dramReadBytes;
    all.streams.dramWriteBytes += r.streams.dramWriteBytes;
    all.cores.insert(all.cores.end(), r.cores.begin(), r.cores.end());
  }
  add(epoch, graph, all, workerCoresPerChip * static_cast<int>(run.chips.size()));
  EpochPerf& e = epochs_[epoch];
  for (const sim::ChipRunResult& r : run.chips) {
    ChipPerf& c = e.chips[r.chip];
    c.cycles += r.cycles;
    c.prologueCycles += r.prologueCycles;
    c.coresUsed = static_cast<int>(std::count_if(r.cores.begin(), r.cores.end(), [](const auto& k) { return k.kernel; }));
    c.nocBytes += r.streams.nocBytes;
    c.dramReadBytes += r.streams.dramReadBytes;
    c.dramWriteBytes += r.streams.dramWriteBytes;
    c.ethBytes += r.streams.ethBytes;
  }
  for (const sim::EthLinkReport& l : run.links) {
    LinkPerf& p = e.chips[l.from.chip].links[{l.from.chan, l.to}];
    p.tiles += l.tiles;
    p.bytes += l.bytes;
    p.busyCycles += l.busyCycles;
  }
}

std::string PerfReport::table() const {
  std::string s;
  uint64_t total = 0;
  for (const auto& [id, e] : epochs_) {
    total += e.cycles;
    s += "perf: temporal epoch " + std::to_string(id) + " (graph '" + e.graph + "'): " + std::to_string(e.runs) +
         (e.runs == 1 ? " run, " : " runs, ") + std::to_string(e.cycles) + " cycles (prologue " +
         std::to_string(e.prologueCycles) + "), " + std::to_string(e.coresUsed) + " of " +
         std::to_string(e.workerCores) + " cores, utilisation " + percent(e.utilisation()) + "; NOC " +
         megabytes(e.nocBytes) + ", DRAM read " + megabytes(e.dramReadBytes) + ", written " +
         megabytes(e.dramWriteBytes) + "\n";
    size_t width = 2;
    for (const auto& [name, op] : e.ops) width = std::max(width, name.size());
    s += "  " + pad("op", width, false) + "  cores  " + pad("finish", 10, true) + "  " + pad("unpack", 10, true) + "  " +
         pad("math", 10, true) + "  " + pad("pack", 10, true) + "  bound\n";
    for (const auto& [name, op] : e.ops)
      s += "  " + pad(name, width, false) + "  " + pad(std::to_string(op.cores), 5, true) + "  " +
           pad(std::to_string(op.finishCycles), 10, true) + "  " + pad(std::to_string(op.unpack), 10, true) + "  " +
           pad(std::to_string(op.math), 10, true) + "  " + pad(std::to_string(op.pack), 10, true) + "  " +
           op.boundBy() + "\n";
    if (std::string b = e.bottleneck(); !b.empty()) {
      const OpPerf& op = e.ops.at(b);
      s += "  bottleneck: " + b + " (" + op.boundBy() + ", " + std::to_string(op.busiest()) + " busy cycles of " +
           std::to_string(e.cycles) + ")\n";
    }
    for (const auto& [chip, cp] : e.chips) {
      s += "  chip " + std::to_string(chip) + ": " + std::to_string(cp.cycles) + " cycles, " +
           std::to_string(cp.coresUsed) + " cores; NOC " + megabytes(cp.nocBytes) + ", DRAM read " +
           megabytes(cp.dramReadBytes) + ", written " + megabytes(cp.dramWriteBytes) + ", ethernet out " +
           megabytes(cp.ethBytes) + "\n";
      for (const auto& [key, l] : cp.links)
        s += "    link channel " + std::to_string(key.first) + " -> chip " + std::to_string(key.second.chip) +
             " channel " + std::to_string(key.second.chan) + ": " + std::to_string(l.tiles) + " tiles, " +
             megabytes(l.bytes) + ", busy " + std::to_string(l.busyCycles) + " cycles (" +
             percent(e.cycles ? static_cast<double>(l.busyCycles) / static_cast<double>(e.cycles) : 0.0) + ")\n";
    }
  }
  s += "perf: " + std::to_string(total) + " cycles in " + std::to_string(epochs_.size()) +
       (epochs_.size() == 1 ? " temporal epoch\n" : " temporal epochs\n");
  return s;
}

nlohmann::json PerfReport::json(const std::string& netlist, const std::string& arch) const {
  nlohmann::json epochs = nlohmann::json::array();
  uint64_t total = 0;
  for (const auto& [id, e] : epochs_) {
    total += e.cycles;
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& [name, op] : e.ops)
      ops.push_back({{"op", name},
                     {"cores", op.cores},
                     {"finish_cycles", op.finishCycles},
                     {"unpack_cycles", op.unpack},
                     {"math_cycles", op.math},
                     {"pack_cycles", op.pack},
                     {"bound", op.boundBy()},
                     {"tiles_packed", op.tilesPacked},
                     {"matmul_tiles", op.matmulTiles},
                     {"sfpu_tiles", op.sfpuTiles}});
    nlohmann::json entry = {{"epoch", id},
                            {"graph", e.graph},
                            {"runs", e.runs},
                            {"cycles", e.cycles},
                            {"prologue_cycles", e.prologueCycles},
                            {"binaries_cycles", e.binariesCycles},
                            {"cores_used", e.coresUsed},
                            {"worker_cores", e.workerCores},
                            {"utilisation", e.utilisation()},
                            {"noc_bytes", e.nocBytes},
                            {"dram_read_bytes", e.dramReadBytes},
                            {"dram_write_bytes", e.dramWriteBytes},
                            {"ops", ops}};
    if (std::string b = e.bottleneck(); !b.empty())
      entry["bottleneck"] = {{"op", b}, {"unit", e.ops.at(b).boundBy()}, {"busy_cycles", e.ops.at(b).busiest()}};
    if (!e.chips.empty()) {
      nlohmann::json chips = nlohmann::json::array();
      for (const auto& [chip, cp] : e.chips) {
        nlohmann::json links = nlohmann::json::array();
        for (const auto& [key, l] : cp.links)
          links.push_back({{"channel", key.first},
                           {"peer_chip", key.second.chip},
                           {"peer_channel", key.second.chan},
                           {"tiles", l.tiles},
                           {"bytes", l.bytes},
                           {"busy_cycles", l.busyCycles},
                           {"utilisation", e.cycles ? std::min(1.0, static_cast<double>(l.busyCycles) / static_cast<double>(e.cycles)) : 0.0}});
        chips.push_back({{"chip", chip},
                         {"cycles", cp.cycles},
                         {"prologue_cycles", cp.prologueCycles},
                         {"cores_used", cp.coresUsed},
                         {"noc_bytes", cp.nocBytes},
                         {"dram_read_bytes", cp.dramReadBytes},
                         {"dram_write_bytes", cp.dramWriteBytes},
                         {"eth_bytes", cp.ethBytes},
                         {"links", links}});
      }
      entry["chips"] = std::move(chips);
    }
    epochs.push_back(std::move(entry));
  }
  nlohmann::json out = {{"version", 1}, {"netlist", netlist}, {"arch", arch}, {"total_cycles", total}, {"epochs", epochs}};
  if (binaries_)
    out["binaries"] = {{"epoch_commands", binaries_->commands},
                       {"images_pushed", binaries_->pushes},
                       {"pushed_bytes", binaries_->pushedBytes},
                       {"cache_hits", binaries_->hits},
                       {"evictions", binaries_->evictions}};
  return out;
}

} // namespace tessera::loader
