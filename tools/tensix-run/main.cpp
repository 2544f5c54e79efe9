// tensix-run: run one op's three kernels on one simulated Tensix core.
// Thin driver: flags only; the work is in lib/sim (tensix_run_driver).
#include "support/cli.hpp"
#include "support/tool_output.hpp"
#include "sim/tensix_run_driver.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  tessera::sim::TensixRunOptions opts;
  CLI::App app{"tensix-run: run one op's kernels (unpack.elf, math.elf, pack.elf) on one simulated Tensix core",
               "tensix-run"};
  app.add_option("spec", opts.spec, "Run spec (YAML or JSON, docs/tensix-run.md)")->type_name("<spec.yaml>");
  app.add_option("--kernel-dir", opts.kernelDir, "Directory with unpack.elf, math.elf and pack.elf")
      ->type_name("<dir>");
  app.add_option("--arch", opts.arch, "L1 size of the core: grayskull (default) or wormhole_b0")->type_name("<arch>");
  app.add_option("--input", opts.inputs, "Input operand fed from a file of packed tiles (repeatable)")
      ->type_name("<id:format:capacity[:file]>");
  app.add_option("--output", opts.outputs, "Output operand whose pushed tiles go to a file (repeatable)")
      ->type_name("<id:format:capacity[:file]>");
  app.add_option("--operand", opts.operands, "Intermediate operand buffer (repeatable)")
      ->type_name("<id:format:capacity>");
  app.add_option("--input-count", opts.inputCount, "EpochInfo.inputCount the kernels read (default 0)");
  app.add_option("--max-cycles", opts.maxCycles, "Stop with an error after this many core cycles")
      ->check(CLI::PositiveNumber);
  app.add_flag("--debug-log", opts.debugLog, "Print what each thread wrote to the debug mailbox");
  app.add_flag("--time", opts.time, "Print host time and interpreter speed (MIPS)");
  app.set_version_flag("--version", tessera::versionString("tensix-run"));
  app.footer("Exit status: 0 the op ran to completion and its outputs were written, 1 a file, the spec, a kernel "
             "or the run failed (fault, hang, non-zero exit code), 2 usage error.");
  if (auto code = tessera::parseToolArgs(app, argc, argv, "tensix-run")) return *code;
  return tessera::runGuarded("tensix-run", [&] { return tessera::sim::runTensixRun(opts, std::cout, std::cerr); });
}
