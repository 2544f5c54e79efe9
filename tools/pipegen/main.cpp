// pipegen: the streams and phases of every core for a temporal epoch
// (pipegen.yaml in, blob.yaml out), or for several epochs in parallel. Thin
// driver: flags only; the work is in lib/pipegen.
#include "support/tool_output.hpp"
#include "pipegen/pipegen.hpp"
#include "device/device_cache.hpp"
#include "support/cli.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  tessera::pipegen::PipegenOptions opts;
  CLI::App app{"pipegen: streams, phases and L1 buffers per core from a pipegen.yaml", "pipegen"};
  app.add_option("pipegen_yaml", opts.inputs,
                 "pipegen.yaml of a temporal epoch (net2pipe output); with several, each blob.yaml is written "
                 "beside its pipegen.yaml")
      ->required()
      ->type_name("<pipegen.yaml>");
  app.add_option("-o,--output", opts.output, "blob.yaml to write (one input)")->type_name("<blob.yaml>");
  app.add_option("-j,--jobs", opts.jobs, "Inputs lowered in parallel (default: the number of CPUs)")
      ->type_name("<N>")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("--arch", opts.arch, "Target arch (bundled descriptor): grayskull (default), wormhole, wormhole_b0, "
                                      "blackhole")
      ->type_name("<arch>");
  app.add_option("--device", opts.device, "SoC descriptor: a YAML file or the name of a bundled one (overrides --arch)")
      ->type_name("<soc-descriptor>");
  app.add_option("--cluster", opts.cluster,
                 "Cluster descriptor (BUDA's format) the epoch's chips belong to; default: the arch's topology for "
                 "the highest chip_id (docs/cluster.md)")
      ->type_name("<cluster.yaml>");
  uint32_t epoch = 0;
  auto* epochOpt = app.add_option("--epoch", epoch, "Temporal epoch (default: from temporal_epoch_<E> in the input "
                                                    "path, else 0)")
                       ->type_name("<E>");
  app.add_option("--depfile", opts.depfile, "Write a make depfile for the output")->type_name("<file>");
  app.add_option("--max-errors", opts.maxErrors, "Stop printing after this many errors (0: no limit)")
      ->default_val(20)
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--no-warnings,-w", opts.noWarnings, "Do not print warnings");
  app.add_flag("--chunk-lists,!--no-chunk-lists", opts.chunkLists,
               "Merge strided reads into one phase with a chunk list, src_chunk_offsets (default); "
               "--no-chunk-lists writes one phase per chunk");
  app.add_flag("--release-windows,!--no-release-windows", opts.releaseWindows,
               "Windowed packers release finished tiles early (src_freed_tiles) and get rings of their reorder window "
               "(default); --no-release-windows keeps whole periods in the ring (more L1)");
  app.set_version_flag("--version", tessera::versionString("pipegen"));
  app.footer("Exit status: 0 blob.yaml written, 1 invalid input, resource error or write failure, 2 usage error.\n"
             "Bundled devices: " + tessera::bundledDeviceList());
  if (auto code = tessera::parseToolArgs(app, argc, argv, "pipegen")) return *code;
  if (epochOpt->count()) opts.epoch = epoch;
  return tessera::runGuarded("pipegen", [&] { return tessera::pipegen::runPipegen(opts, std::cout, std::cerr); });
}
