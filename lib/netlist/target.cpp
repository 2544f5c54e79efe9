#include "netlist/target.hpp"

#include "netlist/driver.hpp"
#include "netlist/multichip.hpp"
#include "netlist/parser.hpp"
#include "support/file_io.hpp"

#include <algorithm>

namespace tessera::netlist {

int DeviceCache::loadExplicit(const std::string& spec, const std::string& tool, std::ostream& err,
                              const PrintOptions& print) {
  std::string readError;
  if (auto text = readFile(spec, readError)) {
    SourceBuffer buf(spec, std::move(*text));
    DiagnosticEngine diags;
    explicit_ = parseSocDescriptor(buf, diags);
    if (printDiagnostics(err, buf, diags, print) > 0) explicit_.reset();
    if (!explicit_) return 1;
    explicitFile_ = spec;
    return 0;
  }
  if (auto bundled = findBundledDescriptor(spec)) {
    explicit_ = std::move(bundled);
    return 0;
  }
  err << tool << ": error: --device '" << spec << "': " << readError << ", and it is not a bundled device ("
      << bundledDeviceList() << ")\n";
  return 2;
}

const SocDescriptor& DeviceCache::forArch(Arch arch) {
  auto it = byArch_.find(arch);
  if (it == byArch_.end())
    it = byArch_.emplace(arch, std::make_unique<SocDescriptor>(loadBundledDescriptor(defaultDescriptorName(arch)))).first;
  return *it->second;
}

int DeviceCache::loadCluster(const std::string& path, const std::string& tool, std::ostream& err,
                             const PrintOptions& print) {
  std::string readError;
  auto text = readFile(path, readError);
  if (!text) {
    err << tool << ": error: --cluster '" << path << "': " << readError << "\n";
    return 2;
  }
  clusterSource_ = std::make_unique<SourceBuffer>(path, std::move(*text));
  clusterFile_ = path;
  clusterErr_ = &err;
  clusterPrint_ = print;
  explicitClusters_.clear();
  return 0;
}

const ClusterDescriptor* DeviceCache::clusterFor(Arch arch, const SocDescriptor& device, uint32_t chips) {
  if (clusterSource_) {
    // Which channels a link may use depends on the chip: parse per channel count.
    size_t channels = device.ethCores.size();
    auto it = explicitClusters_.find(channels);
    if (it == explicitClusters_.end()) {
      DiagnosticEngine diags;
      auto parsed = parseClusterDescriptor(*clusterSource_, static_cast<uint32_t>(channels), diags);
      if (printDiagnostics(*clusterErr_, *clusterSource_, diags, clusterPrint_) > 0) parsed.reset();
      it = explicitClusters_.emplace(channels, parsed ? std::make_unique<ClusterDescriptor>(std::move(*parsed)) : nullptr).first;
    }
    return it->second.get();
  }
  chips = std::min(chips, maxDefaultChips(arch)); // beyond: target-device names the chips that do exist
  auto key = std::pair{arch, chips};
  auto it = defaultClusters_.find(key);
  if (it == defaultClusters_.end()) {
    std::string why;
    auto c = defaultCluster(arch, chips, why);
    it = defaultClusters_.emplace(key, std::make_unique<ClusterDescriptor>(c ? std::move(*c) : singleChipCluster())).first;
  }
  return it->second.get();
}

bool parseArchOption(const std::string& text, const std::string& tool, std::ostream& err, std::optional<Arch>& arch) {
  if (text.empty()) return true;
  arch = parseArch(text);
  if (arch) return true;
  err << tool << ": error: unknown --arch '" << text << "' (expected grayskull, wormhole, wormhole_b0 or blackhole)\n";
  return false;
}

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
  std::string readError;
  std::optional<std::string> text = readFile(path, readError);
  if (!text) {
    err << path << ": error: cannot read netlist: " << readError << "\n";
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
