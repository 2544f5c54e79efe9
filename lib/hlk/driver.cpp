// net2hlks: validate the netlist exactly as netlist-check does, generate every
// selected op's kernel, share identical kernels, write the files and the
// manifest (last), and a depfile.
#include "hlk/driver.hpp"

#include "device/soc_descriptor.hpp"
#include "hlk/internal.hpp"
#include "netlist/driver.hpp"
#include "netlist/parser.hpp"
#include "netlist/target.hpp"
#include "netlist/validator.hpp"
#include "support/file_io.hpp"
#include "support/tool_output.hpp"
#include "support/hashing.hpp"

#include <filesystem>
#include <map>
#include <ostream>
#include <set>

namespace tessera::hlk {

using namespace netlist;

std::string contentHash(const KernelText& text) {
  support::Fnv1a64 h;
  auto feed = [&](const std::string& s) {
    h.update(s);
    h.updateByte(0xFF); // separator: no concatenation of two texts equals another pair
  };
  feed(text.argsHeader);
  feed(text.source);
  static const char* const kDigits = "0123456789abcdef";
  std::string s(16, '0');
  uint64_t v = h.value();
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = kDigits[v & 0xF];
  return s;
}

bool generateKernels(const Netlist& nl, const ValidationTarget& target, const Selection& selection,
                     DiagnosticEngine& diags, Generation& out) {
  std::map<std::string, KernelDir> byName; // dir -> kernel (sorted: deterministic)
  std::map<std::string, std::string> dirOfText; // args + source -> dir
  bool ok = true;
  for (const Graph& g : nl.graphs) {
    if (!selection.graph.empty() && g.name != selection.graph) continue;
    for (const Op& op : g.ops) {
      if (!selection.op.empty() && op.name != selection.op) continue;
      // Ethernet cores have no Tensix: the streams of the ethernet cores of
      // both chips move an ethernet_datacopy's tiles (net2pipe's relays).
      if (op.type.value == "ethernet_datacopy") {
        out.skipped.push_back(SkippedOp{g.name, op.name, op.type.value,
                                        "runs on ethernet cores, which have no Tensix: their streams move the data"});
        continue;
      }
      auto config = configureOp(nl, op, target, diags);
      if (!config) {
        ok = false;
        continue;
      }
      KernelText text = renderKernel(*config);
      std::string key = text.argsHeader + '\0' + text.source;
      std::string dir;
      if (auto it = dirOfText.find(key); it != dirOfText.end()) {
        dir = it->second;
      } else {
        std::string base = "kernels/" + std::string(familyName(config->family)) + "-" + contentHash(text);
        dir = base;
        // A hash collision between different texts: keep both, apart.
        for (int n = 2; byName.count(dir); ++n) dir = base + "-" + std::to_string(n);
        dirOfText.emplace(key, dir);
        byName[dir] = KernelDir{dir, config->family, std::move(text), {}};
      }
      byName[dir].users.push_back(g.name + "/" + op.name);
      OpKernel k;
      k.graph = g.name;
      k.op = op.name;
      k.type = op.type.value;
      if (config->family == Family::Fused) k.fusedOpId = op.attributes.fusedOpId.value;
      k.kernelDir = dir;
      k.family = config->family;
      k.inputCount = g.inputCount.present() ? g.inputCount.value : 1;
      k.gridSize = op.gridSize.value;
      k.operands = std::move(config->operands);
      out.ops.push_back(std::move(k));
    }
  }
  for (auto& [name, dir] : byName) out.kernels.push_back(std::move(dir));
  return ok;
}

namespace {

const char* const kTool = "net2hlks";

} // namespace

int runNet2Hlks(const Net2HlksOptions& opts, std::ostream& out, std::ostream& err) {
  PrintOptions print{opts.maxErrors, false, opts.noWarnings};
  int exitCode = 0;
  std::optional<CheckedNetlist> checked =
      loadCheckedNetlist(opts.input, opts.arch, opts.device, kTool, print, err, exitCode);
  if (!checked) return exitCode;
  const SourceBuffer& source = *checked->source;
  const Netlist& nl = checked->netlist;
  const ValidationTarget& target = checked->target;

  // The selection must name something.
  if (!opts.selection.graph.empty()) {
    bool found = false;
    for (const Graph& g : nl.graphs) found |= g.name == opts.selection.graph;
    if (!found) {
      toolError(err, kTool) << "--graph '" << opts.selection.graph << "': no such graph in " << opts.input << "\n";
      return 2;
    }
  }
  if (!opts.selection.op.empty()) {
    bool found = false;
    for (const Graph& g : nl.graphs)
      for (const Op& op : g.ops)
        found |= op.name == opts.selection.op && (opts.selection.graph.empty() || g.name == opts.selection.graph);
    if (!found) {
      toolError(err, kTool) << "--op '" << opts.selection.op << "': no such op in "
          << (opts.selection.graph.empty() ? opts.input : "graph '" + opts.selection.graph + "'") << "\n";
      return 2;
    }
  }

  Generation gen;
  gen.netlist = std::filesystem::path(opts.input).filename().string();
  gen.arch = std::string(archName(target.arch));
  gen.device = target.device->name;
  DiagnosticEngine genDiags;
  bool ok = generateKernels(nl, target, opts.selection, genDiags, gen);
  if (printDiagnostics(err, source, genDiags, print) > 0 || !ok) return 1;

  // Files: every kernel first, the manifest last (a reader that finds the
  // manifest finds every file it names).
  std::error_code ec;
  std::filesystem::path outDir(opts.outDir);
  for (const KernelDir& k : gen.kernels) {
    std::filesystem::path dir = outDir / k.dir;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      toolError(err, dir.string()) << "cannot create directory: " << ec.message() << "\n";
      return 1;
    }
    for (const auto& [name, content] :
         {std::pair<const char*, const std::string*>{"hlk_args.h", &k.text.argsHeader}, {"hlks.cpp", &k.text.source}}) {
      std::string path = (dir / name).string();
      if (auto written = writeIfChanged(path, *content); !written) {
        toolError(err, path) << "cannot write: " << written.error() << "\n";
        return 1;
      }
    }
  }
  std::string manifest = (outDir / "manifest.yaml").string();
  if (auto written = writeFileAtomic(manifest, manifestYaml(gen)); !written) {
    toolError(err, manifest) << "cannot write: " << written.error() << "\n";
    return 1;
  }
  if (!opts.depfile.empty()) {
    if (auto written = writeDepfile(opts.depfile, {manifest}, {opts.input, checked->devices->explicitFile()}); !written) {
      toolError(err, opts.depfile) << "cannot write depfile: " << written.error() << "\n";
      return 1;
    }
  }
  (void)out;
  return 0;
}

} // namespace tessera::hlk
