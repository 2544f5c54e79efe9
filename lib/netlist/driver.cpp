#include "netlist/driver.hpp"

#include "device/soc_descriptor.hpp"
#include "netlist/json_export.hpp"
#include "netlist/multichip.hpp"
#include "netlist/parser.hpp"
#include "netlist/stats.hpp"
#include "netlist/target.hpp"
#include "netlist/validator.hpp"
#include "support/file_io.hpp"
#include "support/tool_output.hpp"

#include <map>
#include <tuple>
#include <set>
#include <memory>
#include <ostream>
#include <sstream>

namespace tessera::netlist {

namespace {

// --all-archs: the netlist against every arch it lists. A problem found for
// several archs is reported once, with a note naming the archs it applies to.
// False when the --cluster file is invalid for some arch (its errors are printed).
bool validateForEachArch(const Netlist& nl, DeviceCache& devices, DiagnosticEngine& diags) {
  struct Found {
    const Diagnostic* diag;
    std::vector<std::string> archs;
  };
  std::vector<DiagnosticEngine> perArch;
  std::vector<std::string> names;
  std::set<Arch> seen;
  for (const auto& a : nl.devices.arch) {
    if (!seen.insert(a.value).second) continue;
    const SocDescriptor& device = devices.forArch(a.value);
    const ClusterDescriptor* cluster = devices.clusterFor(a.value, device, chipsNamed(nl));
    if (!cluster) return false;
    perArch.emplace_back();
    validateNetlist(nl, ValidationTarget{a.value, &device, cluster}, perArch.back());
    names.push_back(std::string(archName(a.value)) + " (" + device.name + ")");
  }
  // First-seen order is kept; the index finds repeats without a quadratic scan.
  std::vector<Found> merged;
  std::map<std::tuple<std::string, uint32_t, uint32_t, std::string>, size_t> index;
  for (size_t i = 0; i < perArch.size(); ++i)
    for (const Diagnostic& d : perArch[i].diagnostics()) {
      auto [it, fresh] = index.emplace(std::tuple(d.rule, d.loc.line, d.loc.col, d.message), merged.size());
      if (fresh) merged.push_back({&d, {names[i]}});
      else merged[it->second].archs.push_back(names[i]);
    }
  for (const Found& f : merged) {
    auto b = f.diag->severity == Severity::Error ? diags.error(f.diag->rule, f.diag->loc, f.diag->message)
                                                  : diags.warning(f.diag->rule, f.diag->loc, f.diag->message);
    for (const DiagNote& n : f.diag->notes) b.note(n.loc, n.message);
    if (f.archs.size() < perArch.size()) {
      std::string list;
      for (const auto& a : f.archs) list += (list.empty() ? "" : ", ") + a;
      b.note("found when checking against " + list);
    }
  }
  return true;
}

} // namespace

int runCheck(const CheckOptions& opts, std::ostream& out, std::ostream& err) {
  PrintOptions print{opts.maxErrors, opts.warningsAsErrors, opts.noWarnings};
  if (!opts.output.empty() && opts.inputs.size() != 1) {
    toolError(err, "netlist-check") << "-o needs exactly one input netlist\n";
    return 2;
  }
  if (opts.emitJson && opts.inputs.size() != 1) {
    toolError(err, "netlist-check") << "--emit-json needs exactly one input netlist\n";
    return 2;
  }
  if (!opts.depfile.empty() && opts.output.empty()) {
    toolError(err, "netlist-check") << "--depfile needs -o\n";
    return 2;
  }
  if (!opts.output.empty() && !opts.emitJson && !opts.stats) {
    toolError(err, "netlist-check") << "-o needs --emit-json or --stats\n";
    return 2;
  }
  std::optional<Arch> requested;
  if (!parseArchOption(opts.arch, "netlist-check", err, requested)) return 2;
  DeviceCache devices;
  if (!opts.device.empty())
    if (int rc = devices.loadExplicit(opts.device, "netlist-check", err, print)) return rc;
  if (!opts.cluster.empty())
    if (int rc = devices.loadCluster(opts.cluster, "netlist-check", err, print)) return rc;

  int status = 0;
  std::string result;
  for (const std::string& path : opts.inputs) {
    auto text = readFile(path);
    if (!text) {
      toolError(err, path) << "cannot read netlist: " << text.error() << "\n";
      status = 1;
      continue;
    }
    SourceBuffer source(path, std::move(*text));
    DiagnosticEngine diags;
    std::optional<Netlist> nl = parseNetlist(source, diags);
    bool targeted = false; // false: no arch (reported) or an invalid --cluster (printed)
    std::string checkedArch;
    if (nl) {
      if (opts.allArchs) targeted = validateForEachArch(*nl, devices, diags);
      else if (auto target = chooseTarget(*nl, requested, devices, diags)) {
        const DiagnosticEngine parsed = opts.anyArch ? diags : DiagnosticEngine{};
        validateNetlist(*nl, *target, diags);
        targeted = true;
        checkedArch = archName(target->arch);
        if (opts.anyArch && diags.errorCount() > 0)
          if (auto other = firstAcceptingArch(*nl, target->arch, devices, parsed)) {
            toolNote(err, path) << archFallbackNote(target->arch, diags, other->target.arch, "checked against") << "\n";
            diags = std::move(other->diags);
            checkedArch = archName(other->target.arch);
          }
      }
    }
    size_t errors = printDiagnostics(err, source, diags, print);
    if (nl && !targeted && errors == 0) // the cluster's own errors were printed where it was first parsed
      toolError(err, path) << "not checked: the --cluster file '" << opts.cluster << "' is invalid for this target\n";
    if (errors > 0 || !nl || !targeted) {
      status = 1;
      continue;
    }
    if (opts.printArch) result += checkedArch + "\n";
    if (opts.stats) result += (opts.inputs.size() > 1 ? "== " + path + "\n" : "") + formatStats(*nl);
    if (opts.emitJson) result += netlistToJson(*nl).dump(2) + "\n";
  }
  if (status != 0) return status; // no partial outputs
  if (opts.output.empty()) {
    out << result;
    return 0;
  }
  if (auto written = writeFileAtomic(opts.output, result); !written) {
    toolError(err, opts.output) << "cannot write output: " << written.error() << "\n";
    return 1;
  }
  if (!opts.depfile.empty()) {
    std::vector<std::string> prerequisites = opts.inputs;
    prerequisites.push_back(devices.explicitFile());
    prerequisites.push_back(devices.clusterFile());
    if (auto written = writeDepfile(opts.depfile, {opts.output}, prerequisites); !written) {
      toolError(err, opts.depfile) << "cannot write depfile: " << written.error() << "\n";
      return 1;
    }
  }
  return 0;
}

} // namespace tessera::netlist
