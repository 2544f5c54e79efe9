// netlist-check: parse and validate BUDA netlists against a target device.
// Thin driver: flags and output only; the work is in lib/netlist.
#include "device/device_cache.hpp"
#include "support/cli.hpp"
#include "netlist/driver.hpp"
#include "support/tool_output.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  tessera::netlist::CheckOptions opts;
  CLI::App app{"netlist-check: validate BUDA netlists against a target device", "netlist-check"};
  app.add_option("netlists", opts.inputs, "Netlist YAML files")->required()->type_name("<netlist.yaml>");
  app.add_option("--arch", opts.arch, "Target arch (bundled descriptor): grayskull, wormhole, wormhole_b0, blackhole; "
                                      "default: the first arch the netlist lists")
      ->type_name("<arch>");
  app.add_option("--device", opts.device, "SoC descriptor: a YAML file or the name of a bundled one")
      ->type_name("<soc-descriptor>");
  app.add_option("--cluster", opts.cluster,
                 "Cluster descriptor (chips, ethernet_connections, chips_with_mmio); default: the arch's default "
                 "topology for the netlist's highest target_device (docs/cluster.md)")
      ->type_name("<cluster.yaml>");
  auto* allArchs = app.add_flag("--all-archs", opts.allArchs,
                                "Check against every arch the netlist lists (bundled default descriptors)");
  allArchs->excludes(app.get_option("--arch"))->excludes(app.get_option("--device"));
  app.add_flag("--any-arch", opts.anyArch,
               "Valid when some arch the netlist lists accepts it: the first arch that does is checked and named "
               "in a note (what loader run does without --arch)")
      ->excludes(allArchs)
      ->excludes(app.get_option("--arch"))
      ->excludes(app.get_option("--device"));
  app.add_flag("--print-arch", opts.printArch,
               "Print the arch each netlist was checked against, one line per netlist in the order given (with "
               "--any-arch: the arch that accepted it)")
      ->excludes(allArchs);
  app.add_flag("--emit-json", opts.emitJson, "Print the normalized model as JSON (docs/netlist-json.md)");
  app.add_flag("--stats", opts.stats, "Print a summary: ops by type, cores per graph, queue bytes per DRAM channel");
  app.add_option("-o,--output", opts.output, "Write --emit-json/--stats output to this file instead of stdout")
      ->type_name("<file>");
  app.add_option("--depfile", opts.depfile, "Write a make depfile for -o")->type_name("<file>");
  app.add_option("--max-errors", opts.maxErrors, "Stop printing after this many errors per file (0: no limit)")
      ->default_val(20)
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--warnings-as-errors,-W", opts.warningsAsErrors, "Treat warnings as errors");
  app.add_flag("--no-warnings,-w", opts.noWarnings, "Do not print warnings");
  app.set_version_flag("--version", tessera::versionString("netlist-check"));
  app.footer("Exit status: 0 all netlists valid, 1 some netlist invalid or unreadable, 2 usage error.\n"
             "Bundled devices: " + tessera::bundledDeviceList());
  if (auto code = tessera::parseToolArgs(app, argc, argv, "netlist-check")) return *code;
  return tessera::runGuarded("netlist-check", [&] { return tessera::netlist::runCheck(opts, std::cout, std::cerr); });
}
