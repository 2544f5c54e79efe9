// net2pipe: the data movement of a BUDA netlist: one pipegen.yaml (buffers
// and pipes) per temporal epoch, and the epoch index. Thin driver: flags
// only; the work is in lib/pipe.
#include "device/device_cache.hpp"
#include "support/cli.hpp"
#include "support/tool_output.hpp"
#include "pipe/net2pipe.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  tessera::pipe::Net2PipeOptions opts;
  CLI::App app{"net2pipe: buffers and pipes of a BUDA netlist, one pipegen.yaml per temporal epoch", "net2pipe"};
  app.add_option("netlist", opts.input, "Netlist YAML file")->required()->type_name("<netlist.yaml>");
  app.add_option("-o,--out-dir", opts.outDir,
                 "Output directory: temporal_epoch_<E>/overlay/pipegen.yaml per epoch and epochs.yaml")
      ->required()
      ->type_name("<dir>");
  app.add_option("--arch", opts.arch, "Target arch (bundled descriptor): grayskull, wormhole, wormhole_b0, blackhole; "
                                      "default: the first arch the netlist lists")
      ->type_name("<arch>");
  app.add_option("--device", opts.device, "SoC descriptor: a YAML file or the name of a bundled one (overrides --arch)")
      ->type_name("<soc-descriptor>");
  app.add_option("--cluster", opts.cluster,
                 "Cluster descriptor (chips, ethernet links); default: the arch's default topology for the netlist's "
                 "highest target_device")
      ->type_name("<cluster.yaml>");
  app.add_option("--depfile", opts.depfile, "Write a make depfile for <dir>/epochs.yaml")->type_name("<file>");
  app.add_option("--max-errors", opts.maxErrors, "Stop printing after this many errors (0: no limit)")
      ->default_val(20)
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--no-warnings,-w", opts.noWarnings, "Do not print warnings");
  app.set_version_flag("--version", tessera::versionString("net2pipe"));
  app.footer("Exit status: 0 written, 1 invalid netlist, unsupported feature, resource limit or write failure, "
             "2 usage error.\nBundled devices: " + tessera::bundledDeviceList());
  if (auto code = tessera::parseToolArgs(app, argc, argv, "net2pipe")) return *code;
  return tessera::runGuarded("net2pipe", [&] { return tessera::pipe::runNet2Pipe(opts, std::cout, std::cerr); });
}
