// tensix-run's work, callable without a process: load one op's three ELFs
// onto one simulated core, feed and drain its operands (one_core_harness),
// run, write the outputs and print a summary. docs/tensix-run.md.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace tessera::sim {

struct TensixRunOptions {
  std::string spec;                   // YAML/JSON spec file (optional)
  std::string kernelDir;              // unpack.elf, math.elf, pack.elf; overrides the spec's
  std::string arch;                   // overrides the spec's; default grayskull
  std::vector<std::string> inputs;    // ID:FORMAT:CAPACITY[:FILE]
  std::vector<std::string> outputs;   // ID:FORMAT:CAPACITY[:FILE]
  std::vector<std::string> operands;  // ID:FORMAT:CAPACITY (intermediates)
  std::optional<uint32_t> inputCount;
  std::optional<uint64_t> maxCycles;
  bool debugLog = false;              // print each thread's debug log
  bool time = false;                  // print host time and interpreter speed (not deterministic)
};

// Returns the exit status: 0 the op ran to completion with exit codes 0 and
// every output written; 1 a file, the spec, loading or the run failed;
// 2 usage error (bad operand syntax, unknown arch, no kernel directory).
int runTensixRun(const TensixRunOptions& options, std::ostream& out, std::ostream& err);

} // namespace tessera::sim
