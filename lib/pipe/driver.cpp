// net2pipe the tool: validate the netlist exactly as netlist-check does,
// build every temporal epoch, write each epoch's pipegen.yaml and then the
// index (epochs.yaml, last), and a depfile.
#include "pipe/net2pipe.hpp"

#include "netlist/driver.hpp"
#include "netlist/parser.hpp"
#include "netlist/target.hpp"
#include "pipe/pipegen_yaml_writer.hpp"
#include "support/file_io.hpp"
#include "support/tool_output.hpp"
#include "support/text_format.hpp"

#include <cstdio>
#include <filesystem>
#include <ostream>

namespace tessera::pipe {

using namespace netlist;

namespace {

const char* const kTool = "net2pipe";

std::string cores(const std::vector<CoreCoord>& cs) {
  std::string s = "[";
  for (size_t i = 0; i < cs.size(); ++i) s += (i ? ", [" : "[") + std::to_string(cs[i].r) + ", " + std::to_string(cs[i].c) + "]";
  return s + "]";
}

std::string epochDir(uint32_t e) { return "temporal_epoch_" + std::to_string(e); }

} // namespace

std::string epochsIndexYaml(const Compilation& c, const std::string& netlistName, const std::string& arch,
                            const std::string& device) {
  std::string s;
  s += "# net2pipe (Tessera) temporal epochs of " + netlistName + "; do not edit.\n";
  s += "# Format: docs/net2pipe.md; schema: schemas/net2pipe-epochs.schema.json.\n";
  s += "version: 1\n";
  s += "netlist: " + support::yamlScalar(netlistName) + "\n";
  s += "arch: " + arch + "\n";
  s += "device: " + support::yamlScalar(device) + "\n";
  // Several chips only: single-chip indexes keep their bytes.
  if (c.multiChip) s += "cluster: " + support::yamlScalar(c.cluster) + "\n";
  s += "epochs:\n";
  for (const EpochOutput& eo : c.epochs) {
    const TemporalEpoch& e = eo.epoch;
    const Graph& g = e.firstGraph();
    std::string names, quoted;
    for (const Graph* eg : e.graphs) {
      names += (names.empty() ? "" : ", ") + support::yamlScalar(eg->name);
      quoted += (quoted.empty() ? "'" : ", '") + eg->name + "'";
    }
    s += "  # temporal epoch " + std::to_string(e.id) + ": graph" + (e.graphs.size() > 1 ? "s " : " ") + quoted +
         (e.executions.empty() ? ", executed by no program" : "") + "\n";
    s += "  - epoch: " + std::to_string(e.id) + "\n";
    s += "    graphs: [" + names + "]\n";
    if (c.multiChip) {
      std::string chips;
      for (uint32_t chip : e.chips) chips += (chips.empty() ? "" : ", ") + std::to_string(chip);
      s += "    chips: [" + chips + "]\n";
    }
    s += "    pipegen: " + epochDir(e.id) + "/overlay/pipegen.yaml\n";
    s += "    input_count: " + std::to_string(g.inputCount.present() ? g.inputCount.value : 1) + "\n";
    std::string pro, epi;
    for (const auto& [q, st] : e.settings) {
      if (st.prologue) pro += (pro.empty() ? "" : ", ") + support::yamlScalar(q);
      if (st.epilogue) epi += (epi.empty() ? "" : ", ") + support::yamlScalar(q);
    }
    s += "    prologue: [" + pro + "]\n";
    s += "    epilogue: [" + epi + "]\n";
    s += "    buffers: " + std::to_string(eo.yaml.buffers.size()) + "\n";
    s += "    pipes: " + std::to_string(eo.yaml.pipes.size()) + "\n";
    if (e.executions.empty()) {
      s += "    executions: []\n";
    } else {
      s += "    executions:\n";
      for (const Execution& x : e.executions)
        s += "      - {program: " + support::yamlScalar(x.program) + ", line: " + std::to_string(x.loc.line) + "}\n";
    }
  }
  s += "queues:\n";
  std::string current;
  for (const QueueBufferInfo& b : c.queueBuffers) {
    if (b.queue != current) {
      current = b.queue;
      s += "  - name: " + support::yamlScalar(b.queue) + "\n";
      if (c.multiChip) s += "    chip: " + std::to_string(b.chip) + "\n";
      s += "    buffers:\n";
    }
    s += "      # queue '" + b.queue + "' r = " + std::to_string(b.cellR) + ", c = " + std::to_string(b.cellC) + "\n";
    s += "      - uniqid: " + std::to_string(b.uniqid) + "\n";
    s += "        cell: [" + std::to_string(b.cellR) + ", " + std::to_string(b.cellC) + "]\n";
    s += std::string("        ") + (b.host ? "host" : "dram") + ": [" + std::to_string(b.channel) + ", " + support::hexLiteral(b.address) + "]\n";
    auto accesses = [&](const char* key, const std::vector<QueueAccess>& list) {
      if (list.empty()) {
        s += std::string("        ") + key + ": []\n";
        return;
      }
      s += std::string("        ") + key + ":\n";
      for (const QueueAccess& a : list) {
        s += "          - {epoch: " + std::to_string(a.epoch) + ", op: " + support::yamlScalar(a.op);
        if (a.input >= 0) s += ", input: " + std::to_string(a.input);
        if (a.gradient) s += ", gradient: true";
        if (a.relay) s += ", relay: true";
        s += ", cores: " + cores(a.cores) + "}\n";
      }
    };
    accesses("readers", b.readers);
    accesses("writers", b.writers);
  }
  return s;
}

int runNet2Pipe(const Net2PipeOptions& opts, std::ostream& out, std::ostream& err) {
  PrintOptions print{opts.maxErrors, false, opts.noWarnings};
  int exitCode = 0;
  std::optional<CheckedNetlist> checked =
      loadCheckedNetlist(opts.input, opts.arch, opts.device, kTool, print, err, exitCode, opts.cluster);
  if (!checked) return exitCode;
  const SourceBuffer& source = *checked->source;
  const Netlist& nl = checked->netlist;
  const ValidationTarget& target = checked->target;

  Compilation comp;
  DiagnosticEngine buildDiags;
  const bool ok = compileNetlist(nl, target, buildDiags, comp);
  if (printDiagnostics(err, source, buildDiags, print) > 0 || !ok) return 1;

  // Every epoch's file first, the index last: a reader that finds the index
  // finds every file it names.
  std::filesystem::path outDir(opts.outDir);
  for (const EpochOutput& eo : comp.epochs) {
    std::filesystem::path dir = outDir / epochDir(eo.epoch.id) / "overlay";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      toolError(err, dir.string()) << "cannot create directory: " << ec.message() << "\n";
      return 1;
    }
    const std::string path = (dir / "pipegen.yaml").string();
    if (auto written = writeFileAtomic(path, writePipegenYaml(eo.yaml)); !written) {
      toolError(err, path) << "cannot write: " << written.error() << "\n";
      return 1;
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(outDir, ec);
  const std::string index = (outDir / "epochs.yaml").string();
  const std::string name = std::filesystem::path(opts.input).filename().string();
  if (auto written = writeFileAtomic(index, epochsIndexYaml(comp, name, std::string(archName(target.arch)), target.device->name)); !written) {
    toolError(err, index) << "cannot write: " << written.error() << "\n";
    return 1;
  }
  if (!opts.depfile.empty()) {
    const DeviceCache& devices = *checked->devices;
    if (auto written = writeDepfile(opts.depfile, {index}, {opts.input, devices.explicitFile(), devices.clusterFile()}); !written) {
      toolError(err, opts.depfile) << "cannot write depfile: " << written.error() << "\n";
      return 1;
    }
  }
  (void)out;
  return 0;
}

} // namespace tessera::pipe
