// The performance report's arithmetic on hand-made chip results: per-op
// figures from the op's busiest core, sums over runs, the bottleneck op and
// utilisation, worked out by hand below.
#include "loader/perf_report.hpp"

#include <catch2/catch.hpp>

using tessera::loader::PerfReport;
using tessera::sim::ChipRunResult;
using tessera::sim::CoreEpochReport;

namespace {

CoreEpochReport core(const std::string& name, bool kernel, uint64_t cycles, uint64_t unpack, uint64_t math,
                     uint64_t pack) {
  CoreEpochReport c;
  c.name = name;
  c.kernel = kernel;
  c.cycles = cycles;
  c.cop.unpack.cycles = unpack;
  c.cop.math.cycles = math;
  c.cop.pack.cycles = pack;
  c.cop.tilesPacked = 4;
  return c;
}

ChipRunResult oneRun() {
  ChipRunResult r;
  r.cycles = 1200;
  r.prologueCycles = 10;
  r.streams.nocBytes = 1000;
  r.streams.dramReadBytes = 2000;
  r.streams.dramWriteBytes = 500;
  r.cores = {core("A[0,0]", true, 1000, 100, 300, 50), core("A[0,1]", true, 1100, 120, 250, 60),
             core("B[0,0]", true, 1200, 400, 100, 80), core("relay", false, 900, 0, 0, 0)};
  return r;
}

} // namespace

TEST_CASE("perf report: per-op busiest core, sums over runs, bottleneck, utilisation") {
  PerfReport report;
  report.add(3, "g", oneRun(), 120);
  report.add(3, "g", oneRun(), 120);
  nlohmann::json j = report.json("n.yaml", "grayskull");
  REQUIRE(j["epochs"].size() == 1);
  const auto& e = j["epochs"][0];
  CHECK(e["epoch"] == 3);
  CHECK(e["runs"] == 2);
  CHECK(e["cycles"] == 2400);
  CHECK(e["prologue_cycles"] == 20);
  CHECK(e["cores_used"] == 3); // the relay core runs no kernel
  CHECK(e["worker_cores"] == 120);
  CHECK(e["noc_bytes"] == 2000);
  CHECK(e["dram_read_bytes"] == 4000);
  CHECK(e["dram_write_bytes"] == 1000);
  // A: busiest core per unit: unpack max(100, 120), math max(300, 250), pack max(50, 60); two runs.
  const auto& a = e["ops"][0];
  CHECK(a["op"] == "A");
  CHECK(a["cores"] == 2);
  CHECK(a["finish_cycles"] == 2200);
  CHECK(a["unpack_cycles"] == 240);
  CHECK(a["math_cycles"] == 600);
  CHECK(a["pack_cycles"] == 120);
  CHECK(a["bound"] == "math");
  CHECK(a["tiles_packed"] == 16);
  const auto& b = e["ops"][1];
  CHECK(b["op"] == "B");
  CHECK(b["unpack_cycles"] == 800);
  CHECK(b["bound"] == "unpack");
  // B's unpacker (800) is busier than any unit of A (600).
  CHECK(e["bottleneck"]["op"] == "B");
  CHECK(e["bottleneck"]["unit"] == "unpack");
  CHECK(e["bottleneck"]["busy_cycles"] == 800);
  // Busiest unit per used core per run: 300 + 250 + 400 = 950, two runs; over 3 cores x 2400 cycles.
  CHECK(e["utilisation"].get<double>() == Approx(1900.0 / 7200.0));
  CHECK(j["total_cycles"] == 2400);

  std::string table = report.table();
  CHECK(table.find("perf: temporal epoch 3 (graph 'g'): 2 runs, 2400 cycles (prologue 20), 3 of 120 cores, "
                   "utilisation 26.4%") != std::string::npos);
  CHECK(table.find("bottleneck: B (unpack, 800 busy cycles of 2400)") != std::string::npos);
  CHECK(table.find("perf: 2400 cycles in 1 temporal epoch\n") != std::string::npos);
}

TEST_CASE("perf report: an epoch without kernels has no bottleneck") {
  PerfReport report;
  ChipRunResult r;
  r.cycles = 50;
  r.cores = {core("relay", false, 50, 0, 0, 0)};
  report.add(0, "g", r, 120);
  nlohmann::json j = report.json("n.yaml", "grayskull");
  CHECK(j["epochs"][0]["cores_used"] == 0);
  CHECK(j["epochs"][0]["utilisation"] == 0.0);
  CHECK_FALSE(j["epochs"][0].contains("bottleneck"));
}
