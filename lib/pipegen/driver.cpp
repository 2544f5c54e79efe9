// pipegen, the tool: read pipegen.yaml, lower it for the device, write
// blob.yaml atomically (and a depfile).
#include "pipegen/blob_yaml_writer.hpp"
#include "pipegen/pipegen.hpp"
#include "pipegen/pipegen_yaml_reader.hpp"

#include "netlist/driver.hpp"
#include "netlist/target.hpp"
#include "support/file_io.hpp"

#include <filesystem>
#include <ostream>

namespace tessera::pipegen {

namespace {
const char* const kTool = "pipegen";
}

int runPipegen(const PipegenOptions& opts, std::ostream& out, std::ostream& err) {
  PrintOptions print{opts.maxErrors, false, opts.noWarnings};
  std::optional<Arch> arch;
  if (!netlist::parseArchOption(opts.arch, kTool, err, arch)) return 2;
  netlist::DeviceCache devices;
  if (!opts.device.empty())
    if (int rc = devices.loadExplicit(opts.device, kTool, err, print)) return rc;
  const SocDescriptor& soc = devices.explicitOr(arch.value_or(Arch::Grayskull));

  std::string readError;
  auto text = readFile(opts.input, readError);
  if (!text) {
    err << opts.input << ": error: cannot read pipegen.yaml: " << readError << "\n";
    return 1;
  }
  uint32_t epoch = opts.epoch ? *opts.epoch : epochFromPath(opts.input).value_or(0);
  SourceBuffer source(opts.input, std::move(*text));
  DiagnosticEngine diags;
  auto doc = readPipegenYaml(source, diags, epoch);
  std::optional<Generated> gen;
  GenerateOptions gopts;
  gopts.chunkLists = opts.chunkLists;
  gopts.releaseWindows = opts.releaseWindows;
  if (doc) gen = generateBlob(*doc, soc, diags, gopts);
  if (printDiagnostics(err, source, diags, print) > 0 || !gen) return 1;

  BlobYamlHeader header;
  header.graphName = gen->graphName;
  header.epoch = epoch;
  header.device = soc.name;
  header.source = std::filesystem::path(opts.input).filename().string();
  std::string writeError;
  if (!writeFileAtomic(opts.output, writeBlobYaml(gen->blob, gen->comments, &header), writeError)) {
    err << opts.output << ": error: cannot write: " << writeError << "\n";
    return 1;
  }
  if (!opts.depfile.empty()) {
    std::string deps = escapeMakeWord(opts.output) + ": " + escapeMakeWord(opts.input);
    if (!devices.explicitFile().empty()) deps += " " + escapeMakeWord(devices.explicitFile());
    if (!writeFileAtomic(opts.depfile, deps + "\n", writeError)) {
      err << opts.depfile << ": error: cannot write depfile: " << writeError << "\n";
      return 1;
    }
  }
  (void)out;
  return 0;
}

} // namespace tessera::pipegen
