// net2hlks: one kernel (hlks.cpp + hlk_args.h) per op of a BUDA netlist, and
// the manifest naming them. Thin driver: flags only; the work is in lib/hlk.
#include "device/device_cache.hpp"
#include "support/cli.hpp"
#include "hlk/driver.hpp"
#include "support/tool_output.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  tessera::hlk::Net2HlksOptions opts;
  CLI::App app{"net2hlks: generate the compute kernels of a BUDA netlist's ops", "net2hlks"};
  app.add_option("netlist", opts.input, "Netlist YAML file")->required()->type_name("<netlist.yaml>");
  app.add_option("-o,--out-dir", opts.outDir, "Output directory: kernels/<kernel>/{hlks.cpp,hlk_args.h} and manifest.yaml")
      ->required()
      ->type_name("<dir>");
  app.add_option("--arch", opts.arch, "Target arch (bundled descriptor): grayskull, wormhole, wormhole_b0, blackhole; "
                                      "default: the first arch the netlist lists")
      ->type_name("<arch>");
  app.add_option("--device", opts.device, "SoC descriptor: a YAML file or the name of a bundled one (overrides --arch)")
      ->type_name("<soc-descriptor>");
  app.add_option("--depfile", opts.depfile, "Write a make depfile for <dir>/manifest.yaml")->type_name("<file>");
  app.add_option("--graph", opts.selection.graph, "Generate only the ops of this graph")->type_name("<graph>");
  app.add_option("--op", opts.selection.op, "Generate only this op")->type_name("<op>");
  app.add_option("--max-errors", opts.maxErrors, "Stop printing after this many errors (0: no limit)")
      ->default_val(20)
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--no-warnings,-w", opts.noWarnings, "Do not print warnings");
  app.set_version_flag("--version", tessera::versionString("net2hlks"));
  app.footer("Exit status: 0 kernels written, 1 invalid netlist, unsupported op or write failure, 2 usage error.\n"
             "Bundled devices: " + tessera::bundledDeviceList());
  if (auto code = tessera::parseToolArgs(app, argc, argv, "net2hlks")) return *code;
  return tessera::runGuarded("net2hlks", [&] { return tessera::hlk::runNet2Hlks(opts, std::cout, std::cerr); });
}
