// Host speed of the one-core simulator per op family (hidden tag [.bench];
// scripts/bench-sim-ops.sh runs it and docs/performance.md records it). Each
// op runs a few hundred to a thousand tiles through the harness (operand
// capacities twice the kernel's minimum). The time is OneCoreHarness::run
// alone (not compiling, generating inputs or the reference): the figures use
// its CPU time, since the machine is shared (wall time is printed too); the
// median of SIMGOLDEN_BENCH_REPS runs (default 5). SIMGOLDEN_BENCH_ONLY=text
// keeps the ops whose label contains it (for profiling). Every run is also
// checked against the reference, so the figures are for correct runs.
#include "matrix_cases.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace simgolden;

TEST_CASE("sim ops benchmark: tiles per second per op family", "[.bench]") {
  struct Bench {
    std::string family;
    Case c;
  };
  const std::string big = "t: 1, mblock: [4, 4], ublock: [2, 2]";  // 64 tiles per entry
  auto sized = [&](OneOp o) {
    o.block = big;
    o.inBlock.clear();
    return o;
  };
  std::vector<Bench> benches;
  benches.push_back({"datacopy", {"datacopy Float16_b", sized(unary("datacopy", "Float16_b", "Float16_b")), Expect::Exact}});
  benches.push_back({"datacopy", {"datacopy Bfp8_b", sized(unary("datacopy", "Bfp8_b", "Float16_b")), Expect::Exact}});
  benches.push_back({"binary", {"add Float16_b", sized(binary("add", "Float16_b", "Float16_b")), Expect::Exact}});
  benches.push_back({"binary", {"multiply Float16_b HiFi4", sized(binary("multiply", "Float16_b", "Float16_b")), Expect::Exact}});
  benches.push_back({"binary", {"add Float32", sized(binary("add", "Float32", "Float32")), Expect::Exact}});
  benches.push_back({"unary", {"exp Float16_b", sized(unary("exp", "Float16_b", "Float16_b")), Expect::Exact, {-3, 3}}});
  benches.push_back({"unary", {"gelu Float16_b", sized(unary("gelu", "Float16_b", "Float16_b")), Expect::Exact, {-3, 3}}});
  benches.push_back({"unary", {"sqrt Float16_b", sized(unary("sqrt", "Float16_b", "Float16_b")), Expect::Exact, {0, 4}}});
  // 16 output tiles of K = 8 tiles: 128 tile products per entry.
  benches.push_back({"matmul", {"matmul m_k 4 u_kt 2 Float16_b HiFi4", matmul(4, 2, "Float16_b", "Float16_b", "HiFi4"), Expect::Close}});
  OneOp lofi = matmul(4, 2, "Bfp8_b", "Float16_b", "LoFi");
  lofi.intermedDf = "Float16_b";
  benches.push_back({"matmul", {"matmul m_k 4 u_kt 2 Bfp8_b LoFi", lofi, Expect::Close}});
  benches.push_back({"matmul", {"matmul m_k 1 u_kt 8 Float16_b HiFi2", matmul(1, 8, "Float16_b", "Float16_b", "HiFi2"), Expect::Close}});
  benches.push_back({"reduce", {"reduce c sum 8 tiles Float16_b", reduceRc("c", "sum", "Float16_b", "Float16_b", 4, 2), Expect::Close}});
  benches.push_back({"reduce", {"reduce r max 8 tiles Float16_b", reduceRc("r", "max", "Float16_b", "Float16_b", 4, 2), Expect::Exact}});
  OneOp sp;
  sp.type = "splice";
  sp.inDf = {"Float16_b", "Float16_b"};
  sp.inBlock = {"t: 1, mblock: [4, 6], ublock: [2, 2]", "t: 1, mblock: [4, 2], ublock: [2, 2]"};
  sp.block = big;
  sp.attrs = "input0: [1, 1, 2], input1: [0, 1, 1]";
  benches.push_back({"splice", {"splice ublock Float16_b", sp, Expect::Exact}});

  const int reps = std::max(1, std::getenv("SIMGOLDEN_BENCH_REPS") ? std::atoi(std::getenv("SIMGOLDEN_BENCH_REPS")) : 5);
  // SIMGOLDEN_BENCH_ONLY=text: only the ops whose label contains it (for profiling).
  const std::string only = std::getenv("SIMGOLDEN_BENCH_ONLY") ? std::getenv("SIMGOLDEN_BENCH_ONLY") : "";
  std::erase_if(benches, [&](const Bench& b) { return b.c.label.find(only) == std::string::npos; });
  Session s;
  for (const Bench& b : benches) {
    Request r;
    r.label = b.c.label;
    r.netlistText = netlistOf(b.c.op);
    r.expect = b.c.expect;
    r.range = b.c.range;
    r.entries = b.family == "matmul" || b.family == "reduce" ? 16 : 8;
    r.capacityScale = 2;
    s.add(std::move(r));
  }
  s.compile();
  std::printf("%-9s %-36s %5s %8s %8s %8s %11s %11s %8s %6s\n", "family", "op", "out", "unpacked", "cpu ms",
              "wall ms", "out tiles/s", "unpacked/s", "cyc/out", "MIPS");
  for (size_t i = 0; i < s.size(); ++i) {
    std::vector<double> cpu, wall;
    Outcome o;
    for (int rep = 0; rep < reps; ++rep) {
      o = s.run(i);
      INFO(summaryLine(s.request(i), o) << "\n" << o.report);
      REQUIRE(o.pass);
      cpu.push_back(o.simCpuSeconds);
      wall.push_back(o.simSeconds);
    }
    std::sort(cpu.begin(), cpu.end());
    std::sort(wall.begin(), wall.end());
    const double t = cpu[cpu.size() / 2];
    std::printf("%-9s %-36s %5lld %8llu %8.2f %8.2f %11.0f %11.0f %8.0f %6.0f\n", benches[i].family.c_str(),
                s.request(i).label.c_str(), static_cast<long long>(o.outTiles),
                static_cast<unsigned long long>(o.tilesUnpacked), t * 1e3, wall[wall.size() / 2] * 1e3,
                static_cast<double>(o.outTiles) / t, static_cast<double>(o.tilesUnpacked) / t,
                static_cast<double>(o.cycles) / static_cast<double>(o.outTiles),
                static_cast<double>(o.riscInstructions) / t / 1e6);
  }
}
