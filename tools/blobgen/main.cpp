// blobgen: one overlay blob (.hex) per worker core from an epoch's blob.yaml
// (or several epochs' in parallel), and --dump to print a blob back as text. Thin driver: flags only; the work
// is in lib/blob (docs/blobgen.md).
#include "blob/blobgen.hpp"
#include "support/cli.hpp"
#include "support/tool_output.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  tessera::blob::BlobgenOptions opts;
  CLI::App app{"blobgen: encode the overlay blob of every core of a blob.yaml (one .hex per core), "
               "or print a blob back as text (--dump)",
               "blobgen"};
  app.add_option("input", opts.inputs,
                 "blob.yaml of a temporal epoch, or several (their blobs all go to -o; names carry the epoch); "
                 "with --dump, a .hex blob")
      ->required()
      ->type_name("<file>");
  app.add_option("-j,--jobs", opts.jobs, "Inputs encoded in parallel (default: the number of CPUs)")
      ->type_name("<N>")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("-o,--out-dir", opts.outDir, "Output directory for pipegen_epoch<E>_<chip>_<y>_<x>.hex")
      ->type_name("<dir>");
  uint32_t epoch = 0;
  auto* epochOpt = app.add_option("--epoch", epoch,
                                  "Temporal epoch of the blobs (header word and file names); default: from a "
                                  "temporal_epoch_<E> directory in the input path, else 0")
                       ->type_name("<E>");
  app.add_option("--arch", opts.arch, "Target arch (bundled descriptor): grayskull (default), wormhole, "
                                      "wormhole_b0, blackhole")
      ->type_name("<arch>");
  app.add_option("--device", opts.device, "SoC descriptor: a YAML file or the name of a bundled one (overrides --arch)")
      ->type_name("<soc-descriptor>");
  app.add_option("--cluster", opts.cluster,
                 "Cluster descriptor (BUDA's format) the streams' chips belong to: checks their chips and that "
                 "ethernet phases name their link's other end (docs/cluster.md); default: no such checks")
      ->type_name("<cluster.yaml>");
  app.add_option("--depfile", opts.depfile, "Write a make depfile: every .hex depends on the blob.yaml (and --device)")
      ->type_name("<file>");
  app.add_flag("--dump", opts.dump, "Decode the .hex blob <file> and print it as YAML (stdout, or --output)");
  app.add_option("--output", opts.output, "With --dump: write the text to this file")->type_name("<file>");
  app.add_flag("--stats", opts.stats, "Print one summary line (blobs, streams, phases, largest blob)");
  app.add_option("--max-errors", opts.maxErrors, "Stop printing after this many errors (0: no limit)")
      ->default_val(20)
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--no-warnings,-w", opts.noWarnings, "Do not print warnings");
  app.set_version_flag("--version", tessera::versionString("blobgen"));
  app.footer("Exit status: 0 blobs written (or dumped), 1 invalid input or write failure, 2 usage error.\n"
             "Manual: docs/blobgen.md; the blob layout: docs/device-model.md, \"Overlay blobs and streams\".");
  if (auto code = tessera::parseToolArgs(app, argc, argv, "blobgen")) return *code;
  if (epochOpt->count() > 0) opts.epoch = epoch;
  return tessera::runGuarded("blobgen", [&] { return tessera::blob::runBlobgen(opts, std::cout, std::cerr); });
}
