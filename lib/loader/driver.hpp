// The loader job as a library call: parse and validate a netlist, run its
// programs on a target, feed host queues, write and compare outputs. The
// tool's main only parses flags (tools/loader/main.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tessera::loader {

struct LoaderOptions {
  // "" (the plain form: run prebuilt artifacts or golden), "run" (build the
  // artifacts, run on the chip, check against the reference model) or
  // "deploy" (run and check a build directory `run` made).
  std::string command;
  std::string netlist;
  std::string target = "golden";      // golden | sim
  std::string buildDir;                // sim: the stage tools' output directory (docs/loader.md)
  std::string arch;                    // empty: the first arch the netlist lists that accepts it
  std::string cluster;                 // cluster descriptor; empty: the arch's default for the netlist's chips
                                       // (`run` passes it to net2pipe, pipegen and blobgen)
  std::vector<std::string> programs;   // empty: every program, in netlist order
  std::vector<std::string> params;     // "name=value"; name with or without its `$`
  uint64_t seed = 0;
  // Test driver whose defaults fill what the netlist's test-config leaves out
  // (lib/netlist/test_driver.hpp); empty: the rule on the netlist's path
  // (deploy: the driver `run` recorded in the build directory).
  std::string defaults;
  std::string inputsDir;               // <queue>.npy per host-fed queue; empty: test-config stimulus
  std::string outputsDir;              // <queue>.npy per op-fed queue
  std::string expectedDir;             // compare op-fed queues with <queue>.npy found here
  bool trace = false;                  // one line per execute on stdout (--trace with or without a file)
  bool profile = false;                // golden: time per op type, matmul GFLOP/s; sim: epochs, cycles, CPU (stdout)
  bool perfCheck = false;              // sim: the netlist's performance-check targets, PASS/FAIL (perf_check.hpp)
  std::string perfReport;              // sim: write the performance report JSON here (and print its table)
  std::string traceFile;               // sim: Chrome trace-event JSON of every epoch run (trace_writer.hpp)
  std::string reportFile;              // sim: the HTML report: placement grids, timelines, perf checks
  std::string inject;                  // sim, one chip: inject a fault, "KIND[:SEED]" (sim/fault_injection.hpp)
  bool allowDualViewRace = false;      // sim: run a dual-view race (ram_writes.hpp) instead of refusing it
  bool progress = false;               // a progress line per execute on stderr (always shown on a terminal after 1 s)
  unsigned threads = 0;                // golden: entries evaluated at once; run: also stage tools at once
                                       // (0: one per hardware thread)
  size_t maxErrors = 20;
  // sim on several chips: spread the chips over the MPI ranks this process is
  // one of (mpirun -np K loader ... --mpi; docs/loader.md, "MPI"). Every rank
  // runs the programs; rank 0 alone prints, writes files and checks.
  bool mpi = false;
  // run: building the artifacts (lib/loader/artifact_build.hpp)
  std::string toolsDir;                 // empty: the stage tools beside the loader, then PATH
  bool verbose = false;                 // print each stage command
  std::vector<std::string> pipegenArgs;
  std::string hlkcCacheDir;
  std::string pipesFrom; // run: another net2pipe's pipegen.yaml files instead of ours (foreign_pipes.hpp)
};

// Returns the exit code: 0 success, 1 the netlist, its inputs or a comparison
// failed, 2 usage error (bad flag values, unknown program or param).
int runLoader(const LoaderOptions& options, std::ostream& out, std::ostream& err);

} // namespace tessera::loader
