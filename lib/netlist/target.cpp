#include "netlist/target.hpp"

#include "netlist/driver.hpp"
#include "netlist/multichip.hpp"
#include "netlist/parser.hpp"
#include "support/file_io.hpp"
#include "support/tool_output.hpp"

#include <algorithm>

namespace tessera::netlist {

std::string listedArchs(const Netlist& nl) {
  std::string s;
  for (const auto& a : nl.devices.arch) s += (s.empty() ? "" : ", ") + std::string(archName(a.value));
  return s.empty() ? "none" : s;
}

std::optional<ValidationTarget> chooseTarget(const Netlist& nl, std::optional<Arch> requested, DeviceCache& devices,
                                             DiagnosticEngine& diags) {
  const SocDescriptor* device = devices.explicitDevice();
  Arch arch;
  if (device) arch = device->arch;
  else if (requested) arch = *requested;
  else if (!nl.devices.arch.empty()) arch = nl.devices.arch.front().value;
  else return std::nullopt;
  if (!device) device = &devices.forArch(arch);
  bool listed = false;
  for (const auto& a : nl.devices.arch) listed |= a.value == arch;
  if (!listed && !nl.devices.arch.empty())
    diags.error("arch-not-listed", nl.devices.arch.front().loc,
                "netlist is not for arch '" + std::string(archName(arch)) + "': devices.arch lists " + listedArchs(nl))
        .note("the target comes from " + std::string(devices.explicitDevice() ? "--device" : "--arch"));
  const ClusterDescriptor* cluster = devices.clusterFor(arch, *device, chipsNamed(nl));
  if (!cluster) return std::nullopt;
  return ValidationTarget{arch, device, cluster};
}

std::optional<CheckedNetlist> loadCheckedNetlist(const std::string& path, const std::string& arch,
                                                 const std::string& device, const std::string& tool,
                                                 const PrintOptions& print, std::ostream& err, int& exitCode,
                                                 const std::string& cluster) {
  std::optional<Arch> requested;
  if (!parseArchOption(arch, tool, err, requested)) {
    exitCode = 2;
    return std::nullopt;
  }
  auto devices = std::make_unique<DeviceCache>();
  if (!device.empty())
    if (int rc = devices->loadExplicit(device, tool, err, print)) {
      exitCode = rc;
      return std::nullopt;
    }
  if (!cluster.empty())
    if (int rc = devices->loadCluster(cluster, tool, err, print)) {
      exitCode = rc;
      return std::nullopt;
    }
  exitCode = 1;
  auto text = readFile(path);
  if (!text) {
    toolError(err, path) << "cannot read netlist: " << text.error() << "\n";
    return std::nullopt;
  }
  auto source = std::make_unique<SourceBuffer>(path, std::move(*text));
  DiagnosticEngine diags;
  std::optional<Netlist> nl = parseNetlist(*source, diags);
  std::optional<ValidationTarget> target;
  if (nl) {
    target = chooseTarget(*nl, requested, *devices, diags);
    if (target) validateNetlist(*nl, *target, diags);
  }
  if (printDiagnostics(err, *source, diags, print) > 0 || !nl || !target) return std::nullopt;
  exitCode = 0;
  return CheckedNetlist{std::move(devices), std::move(source), std::move(*nl), *target};
}

} // namespace tessera::netlist
