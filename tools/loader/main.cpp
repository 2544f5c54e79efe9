// loader: run a netlist's programs on a target and write/compare its outputs.
// Thin driver: flags only; the work is in lib/loader.
//
//   loader run NETLIST       build the artifacts, run on the simulated chip, check against golden
//   loader deploy BUILD_DIR  run and check what `loader run` built, without building
//   loader NETLIST           the plain form: golden, or prebuilt artifacts with --target sim
#include "support/cli.hpp"
#include "support/tool_output.hpp"
#include "loader/driver.hpp"
#include "device/device_cache.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

namespace {

using tessera::loader::LoaderOptions;

// The options every form takes. `targetHelp` states the form's default target.
void addRunOptions(CLI::App& app, LoaderOptions& opts, const std::string& targetHelp) {
  app.add_option("--target", opts.target, targetHelp)->type_name("<target>");
  app.add_option("--arch", opts.arch, "Target arch; default: the first arch the netlist lists")->type_name("<arch>");
  app.add_option("--cluster", opts.cluster,
                 "Cluster descriptor (BUDA's format); default: the arch's topology for the netlist's highest "
                 "target_device (docs/cluster.md)")
      ->type_name("<cluster.yaml>");
  app.add_option("--program", opts.programs, "Run only this program (repeatable, in the order given); default: all, in order")
      ->type_name("<name>")
      ->allow_extra_args(false); // one value per flag: a netlist after it stays the positional
  app.add_option("--param", opts.params, "Value of a program param, e.g. --param p_loop_count=4 (repeatable)")
      ->type_name("<name=value>")
      ->allow_extra_args(false);
  app.add_option("--seed", opts.seed, "Seed of the test-config stimulus (default 0)");
  app.add_option("--defaults", opts.defaults,
                 "Test driver whose stimulus/comparison defaults (and program params) fill what the netlist leaves "
                 "out (generic, test_tm, test_tm_randomize, test_op, test_graph, netlist_tests, test_inference, "
                 "test_netlist_program, test_dual_view_ram); default: the driver of the netlist's directory "
                 "(docs/stimulus.md)")
      ->type_name("<driver>");
  app.add_option("--inputs", opts.inputsDir, "Read host-fed queues from <dir>/<queue>.npy instead of the stimulus")
      ->type_name("<dir>");
  app.add_option("--outputs", opts.outputsDir, "Write every op-fed queue's entries to <dir>/<queue>.npy")
      ->type_name("<dir>");
  app.add_option("--expected", opts.expectedDir,
                 "Compare op-fed queues with <dir>/<queue>.npy using the netlist's comparison-config")
      ->type_name("<dir>");
  app.add_option_function<std::string>(
         "--trace",
         [&opts](const std::string& file) {
           opts.trace = true;
           opts.traceFile = file;
         },
         "Print one line per executed epoch; sim: with a file, also write every epoch run's unit busy spans, stream "
         "transfers and epoch boundaries there as Chrome trace-event JSON (Perfetto, chrome://tracing; "
         "schemas/trace.schema.json)")
      ->expected(0, 1)
      ->type_name("[<file.json>]");
  app.add_option("--report", opts.reportFile,
                 "sim: write a self-contained HTML page with each epoch's placement grid (utilisation, bottleneck), "
                 "timeline and the perf-check table")
      ->type_name("<file.html>");
  app.add_option("--inject", opts.inject,
                 "sim, one chip: inject one fault where SEED (default 1) picks: drop-credit, dram-bitflip, noc-stall or "
                 "hart-stop; the run must end in a named fault, a hang or a failed check (docs/loader.md)")
      ->type_name("<kind[:seed]>");
  app.add_flag("--allow-dual-view-race", opts.allowDualViewRace,
               "sim: run an execute that reads a ram view where its ops write an overlapping entry of another view of "
               "the same buffer (a race on silicon; what the read sees follows the simulated timing) with a warning "
               "instead of the dual-view-race error (docs/loader.md)");
  app.add_flag("--progress", opts.progress,
               "Print a progress line (executes, epochs on the chip, cycles, tiles moved) on stderr after each execute; on a "
               "terminal a line rewritten in place is shown anyway once a run lasts a second");
  app.add_option("-j,--threads", opts.threads,
                 "Threads: golden evaluates an op's entries in this many ranges at once, run starts this many stage "
                 "tools at once (default 0: one per hardware thread); results do not depend on it")
      ->check(CLI::Range(0, 256));
  app.add_flag("--mpi", opts.mpi,
               "sim on several chips: spread the chips over the ranks of `mpirun -np K` (chip c on rank c mod K); "
               "rank 0 prints and writes the files, outputs and cycles are those of the threaded run (docs/loader.md)");
  app.add_option("--perf-report", opts.perfReport,
                 "sim: print the performance report (cycles per epoch and op, bottleneck, utilisation) and write it "
                 "as JSON to this file (schemas/perf-report.schema.json)")
      ->type_name("<file>");
  app.add_flag("--perf-check", opts.perfCheck,
               "sim: measure the netlist's performance-check targets and print each beside its expected value, "
               "PASS/FAIL by its rtol (a FAIL fails the run)");
  app.add_flag("--profile", opts.profile, "golden: print time per op type and matmul GFLOP/s; sim: epochs run and simulated cycles");
  app.add_option("--max-errors", opts.maxErrors, "Stop printing after this many errors (0: no limit; default 20)")
      ->check(CLI::Range(0, 1000000));
}

} // namespace

int main(int argc, char** argv) {
  LoaderOptions opts;
  opts.target.clear(); // each form has its own default, set after parsing
  CLI::App app{"loader: run a BUDA netlist's programs on a target", "loader"};
  app.require_subcommand(0, 1);
  app.add_option("netlist", opts.netlist, "Netlist YAML file")->type_name("<netlist.yaml>");
  addRunOptions(app, opts, "golden (host reference model, the default) or sim (the simulated chip, needs --build-dir)");
  app.add_option("--build-dir", opts.buildDir, "sim: directory with the artifacts `loader run` built")->type_name("<dir>");

  CLI::App* run = app.add_subcommand(
      "run", "Build the netlist's artifacts with the stage tools (only what is missing or stale), run its programs on "
             "the simulated chip and check every op-fed queue against the reference model");
  run->add_option("netlist", opts.netlist, "Netlist YAML file")->required()->type_name("<netlist.yaml>");
  addRunOptions(*run, opts, "sim (the default: build and run on the simulated chip) or golden (reference model only)");
  run->add_option("--build-dir", opts.buildDir, "Where the artifacts go (default: tessera-build/<netlist name>)")
      ->type_name("<dir>");
  run->add_option("--tools-dir", opts.toolsDir,
                  "Directory of the stage tools (or a CMake build tree); default: beside this loader, then PATH")
      ->type_name("<dir>");
  run->add_option("--pipegen-arg", opts.pipegenArgs, "Pass this flag to pipegen (repeatable)")
      ->type_name("<arg>")
      ->allow_extra_args(false);
  run->add_option("--hlkc-cache-dir", opts.hlkcCacheDir, "hlkc's kernel cache (default: hlkc's own)")->type_name("<dir>");
  run->add_option("--pipes-from", opts.pipesFrom,
                  "sim: run the pipegen.yaml files another net2pipe wrote (BUDA's: temporal_epoch_<N>/pipegen.yaml, "
                  "or .../overlay/pipegen.yaml) through pipegen, blobgen and the chip instead of ours; each buffer's "
                  "data format is taken from the netlist (docs/loader.md)")
      ->type_name("<dir>");
  run->add_flag("-v,--verbose", opts.verbose, "Print each stage command before it runs (stderr)");

  CLI::App* deploy = app.add_subcommand(
      "deploy", "Run what `loader run` built in BUILD_DIR on the simulated chip, without building, and check it");
  deploy->add_option("build-dir", opts.buildDir, "Build directory of `loader run`")->required()->type_name("<dir>");
  addRunOptions(*deploy, opts, "sim (the only target of deploy)");

  app.set_version_flag("--version", tessera::versionString("loader"));
  app.footer("Exit status: 0 ran (and every check passed), 1 the netlist, a stage, an input or a check failed, "
             "2 usage error.");
  if (auto code = tessera::parseToolArgs(app, argc, argv, "loader")) return *code;
  if (run->parsed()) opts.command = "run";
  if (deploy->parsed()) opts.command = "deploy";
  if (opts.command.empty() && opts.netlist.empty()) {
    tessera::toolError(std::cerr, "loader") << "no netlist given (loader run <netlist.yaml>, or loader <netlist.yaml>)\n"
              << "Run with --help for usage.\n";
    return 2;
  }
  if (opts.target.empty()) opts.target = opts.command.empty() ? "golden" : "sim";
  return tessera::runGuarded("loader", [&] { return tessera::loader::runLoader(opts, std::cout, std::cerr); });
}
