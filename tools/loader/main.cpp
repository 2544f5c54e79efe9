// loader: run a netlist's programs on a target and write/compare its outputs.
// Thin driver: flags only; the work is in lib/loader.
#include "support/cli.hpp"
#include "loader/driver.hpp"
#include "netlist/driver.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  tessera::loader::LoaderOptions opts;
  CLI::App app{"loader: run a BUDA netlist's programs on a target", "loader"};
  app.add_option("netlist", opts.netlist, "Netlist YAML file")->required()->type_name("<netlist.yaml>");
  app.add_option("--target", opts.target,
                 "Where epochs run: golden (host reference model) or sim (the simulated chip, needs --build-dir)")
      ->default_val("golden")
      ->type_name("<target>");
  app.add_option("--build-dir", opts.buildDir,
                 "sim: directory with the stage tools' artifacts (scripts/build-artifacts.sh NETLIST DIR)")
      ->type_name("<dir>");
  app.add_option("--arch", opts.arch, "Target arch; default: the first arch the netlist lists")->type_name("<arch>");
  app.add_option("--program", opts.programs, "Run only this program (repeatable, in the order given); default: all, in order")
      ->type_name("<name>");
  app.add_option("--param", opts.params, "Value of a program param, e.g. --param p_loop_count=4 (repeatable)")
      ->type_name("<name=value>");
  app.add_option("--seed", opts.seed, "Seed of the test-config stimulus")->default_val(0);
  app.add_option("--inputs", opts.inputsDir, "Read host-fed queues from <dir>/<queue>.npy instead of the stimulus")
      ->type_name("<dir>");
  app.add_option("--outputs", opts.outputsDir, "Write every op-fed queue's entries to <dir>/<queue>.npy")
      ->type_name("<dir>");
  app.add_option("--expected", opts.expectedDir,
                 "Compare op-fed queues with <dir>/<queue>.npy using the netlist's comparison-config")
      ->type_name("<dir>");
  app.add_flag("--trace", opts.trace, "Print one line per executed epoch");
  app.add_option("-j,--threads", opts.threads,
                 "golden: threads evaluating an op's entries at once (0: one per hardware thread); results do not "
                 "depend on it")
      ->default_val(0)
      ->check(CLI::Range(0, 256));
  app.add_flag("--profile", opts.profile, "golden: print time per op type and matmul GFLOP/s; sim: epochs run and simulated cycles");
  app.add_option("--max-errors", opts.maxErrors, "Stop printing after this many errors (0: no limit)")
      ->default_val(20)
      ->check(CLI::Range(0, 1000000));
  app.set_version_flag("--version", tessera::netlist::versionString("loader"));
  app.footer("Exit status: 0 ran (and compared) successfully, 1 the netlist, an input or a comparison failed, "
             "2 usage error.");
  if (auto code = tessera::parseToolArgs(app, argc, argv, "loader")) return *code;
  return tessera::loader::runLoader(opts, std::cout, std::cerr);
}
