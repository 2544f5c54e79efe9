// pipegen, the tool: read pipegen.yaml, lower it for the device, write
// blob.yaml atomically (and a depfile); several epochs' inputs run on a
// worker pool, each written beside its input.
#include "pipegen/blob_yaml_writer.hpp"
#include "pipegen/pipegen.hpp"
#include "pipegen/pipegen_yaml_reader.hpp"

#include "device/device_cache.hpp"
#include "support/file_io.hpp"
#include "support/tool_output.hpp"
#include "support/parallel.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <ostream>

namespace tessera::pipegen {

namespace {
const char* const kTool = "pipegen";

// One pipegen.yaml to one blob.yaml; messages to `err`. Returns the exit code.
// The cluster an epoch's chips belong to: the --cluster file (parsed up
// front), else the arch's default for the chips the file names. Inputs are
// lowered in parallel: the cache is shared under a lock.
struct Clusters {
  DeviceCache& devices;
  const SocDescriptor& soc;
  std::mutex lock;
  const ClusterDescriptor* forChips(uint32_t chips) {
    std::lock_guard<std::mutex> guard(lock);
    return devices.clusterFor(soc.arch, soc, chips);
  }
};

int lowerOne(const PipegenOptions& opts, const SocDescriptor& soc, Clusters& clusters, const std::string& deviceFile,
             const std::string& input, const std::string& output, std::ostream& err) {
  PrintOptions print{opts.maxErrors, false, opts.noWarnings};
  auto text = readFile(input);
  if (!text) {
    toolError(err, input) << "cannot read pipegen.yaml: " << text.error() << "\n";
    return 1;
  }
  uint32_t epoch = opts.epoch ? *opts.epoch : epochFromPath(input).value_or(0);
  SourceBuffer source(input, std::move(*text));
  DiagnosticEngine diags;
  auto doc = readPipegenYaml(source, diags, epoch);
  std::optional<Generated> gen;
  GenerateOptions gopts;
  gopts.chunkLists = opts.chunkLists;
  gopts.releaseWindows = opts.releaseWindows;
  if (doc) {
    // The netlist's chips when net2pipe says (cluster_chips), else the file's.
    uint32_t chips = std::max<uint32_t>(1, doc->clusterChips);
    for (const pipe::Buffer& b : doc->buffers) chips = std::max(chips, b.chipId < UINT32_MAX ? b.chipId + 1 : b.chipId);
    gopts.cluster = clusters.forChips(chips);
    gen = generateBlob(*doc, soc, diags, gopts);
  }
  if (printDiagnostics(err, source, diags, print) > 0 || !gen) return 1;

  BlobYamlHeader header;
  header.graphName = gen->graphName;
  header.epoch = epoch;
  header.device = soc.name;
  header.source = std::filesystem::path(input).filename().string();
  if (auto written = writeFileAtomic(output, writeBlobYaml(gen->blob, gen->comments, &header)); !written) {
    toolError(err, output) << "cannot write: " << written.error() << "\n";
    return 1;
  }
  if (!opts.depfile.empty()) {
    if (auto written = writeDepfile(opts.depfile, {output}, {input, deviceFile, opts.cluster}); !written) {
      toolError(err, opts.depfile) << "cannot write depfile: " << written.error() << "\n";
      return 1;
    }
  }
  return 0;
}
}  // namespace

int runPipegen(const PipegenOptions& opts, std::ostream& out, std::ostream& err) {
  if (opts.inputs.empty()) {
    toolError(err, kTool) << "no input pipegen.yaml\n";
    return 2;
  }
  const bool several = opts.inputs.size() > 1;
  if (several && (!opts.output.empty() || opts.epoch || !opts.depfile.empty())) {
    toolError(err, kTool) << "-o, --epoch and --depfile take one input; with several, each blob.yaml is "
                    "written beside its pipegen.yaml and the epoch comes from its path\n";
    return 2;
  }
  if (!several && opts.output.empty()) {
    toolError(err, kTool) << "-o <blob.yaml> is required with one input\n";
    return 2;
  }
  std::vector<std::string> outputs;
  std::map<std::string, size_t> byOutput;
  for (size_t i = 0; i < opts.inputs.size(); ++i) {
    outputs.push_back(several ? (std::filesystem::path(opts.inputs[i]).parent_path() / "blob.yaml").lexically_normal().string()
                              : opts.output);
    if (auto [it, added] = byOutput.emplace(outputs.back(), i); !added) {
      toolError(err, kTool) << opts.inputs[it->second] << " and " << opts.inputs[i] << " are in one directory: "
          << "both would write " << outputs.back() << "\n";
      return 2;
    }
  }
  PrintOptions print{opts.maxErrors, false, opts.noWarnings};
  std::optional<Arch> arch;
  if (!parseArchOption(opts.arch, kTool, err, arch)) return 2;
  DeviceCache devices;
  if (!opts.device.empty())
    if (int rc = devices.loadExplicit(opts.device, kTool, err, print)) return rc;
  const SocDescriptor& soc = devices.explicitOr(arch.value_or(Arch::Grayskull));
  if (!opts.cluster.empty()) {
    if (int rc = devices.loadCluster(opts.cluster, kTool, err, print)) return rc;
    // Parsed (and its errors printed) now, before the inputs run in parallel.
    if (!devices.clusterFor(soc.arch, soc, 1)) return 1;
  }
  Clusters clusters{devices, soc, {}};

  return runPerInput(opts.inputs.size(), opts.jobs ? opts.jobs : defaultJobs(), out, err,
                     [&](size_t i, std::ostream&, std::ostream& e) {
                       return lowerOne(opts, soc, clusters, devices.explicitFile(), opts.inputs[i], outputs[i], e);
                     });
}

} // namespace tessera::pipegen
