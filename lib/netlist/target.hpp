// Which device a netlist is checked (and compiled) against: --device, else
// --arch, else the netlist's first arch; and which cluster of such chips:
// --cluster, else the arch's default topology for the highest target_device.
// Shared by every tool that reads netlists, so they pick the same target and
// report the same problems.
#pragma once
#include "device/cluster.hpp"
#include "device/soc_descriptor.hpp"
#include "netlist/model.hpp"
#include "netlist/validator.hpp"
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

namespace tessera::netlist {

// Descriptors are loaded once per run and shared by every input.
class DeviceCache {
public:
  // An explicit --device: a file path, else a bundled name. Returns the exit
  // code for a failure (1: a malformed descriptor, 2: no such file or
  // device; `tool` names the tool in the message), 0 when loaded.
  int loadExplicit(const std::string& spec, const std::string& tool, std::ostream& err, const PrintOptions& print);

  const SocDescriptor* explicitDevice() const { return explicit_ ? &*explicit_ : nullptr; }
  // The --device file read by loadExplicit (empty for a bundled name): a depfile prerequisite.
  const std::string& explicitFile() const { return explicitFile_; }
  // The bundled default descriptor of `arch`.
  const SocDescriptor& forArch(Arch arch);
  // The explicit device when loaded, else the bundled one of `arch`: what a
  // stage without a netlist (pipegen, blobgen) targets.
  const SocDescriptor& explicitOr(Arch arch) { return explicit_ ? *explicit_ : forArch(arch); }

  // An explicit --cluster file: read now (2: it cannot be read, `tool` names
  // the tool in the message), parsed for each target device's ethernet
  // channels when first asked; its diagnostics then go to `err`.
  int loadCluster(const std::string& path, const std::string& tool, std::ostream& err, const PrintOptions& print);
  // The --cluster file read by loadCluster (empty: none): a depfile prerequisite.
  const std::string& clusterFile() const { return clusterFile_; }
  // The cluster a netlist on `device` (of `arch`) targets: the --cluster file
  // parsed against the device's ethernet channels (null when it is invalid:
  // its errors are printed, once), else the arch's default topology for
  // `chips` chips (docs/cluster.md; the largest default when `chips` has none).
  const ClusterDescriptor* clusterFor(Arch arch, const SocDescriptor& device, uint32_t chips);

private:
  std::optional<SocDescriptor> explicit_;
  std::string explicitFile_;
  std::map<Arch, std::unique_ptr<SocDescriptor>> byArch_;
  std::unique_ptr<SourceBuffer> clusterSource_;
  std::string clusterFile_;
  std::ostream* clusterErr_ = nullptr;
  PrintOptions clusterPrint_;
  std::map<size_t, std::unique_ptr<ClusterDescriptor>> explicitClusters_; // by ethernet channels; null: invalid
  std::map<std::pair<Arch, uint32_t>, std::unique_ptr<ClusterDescriptor>> defaultClusters_;
};

// Parses an --arch value into `arch` (left unset for empty text). An unknown
// name prints "<tool>: error: unknown --arch ..." and returns false: a usage
// error, exit code 2.
bool parseArchOption(const std::string& text, const std::string& tool, std::ostream& err, std::optional<Arch>& arch);

// "grayskull, wormhole_b0": the archs devices.arch lists ("none" when empty).
std::string listedArchs(const Netlist& nl);

// Picks the device and cluster a netlist is checked against and reports
// (arch-not-listed) a target arch the netlist does not list. Nullopt when
// the netlist names no arch and none was requested (the parser has reported
// that already) or the --cluster file is invalid (DeviceCache printed why).
std::optional<ValidationTarget> chooseTarget(const Netlist& nl, std::optional<Arch> requested, DeviceCache& devices,
                                             DiagnosticEngine& diags);

// A netlist read, parsed and validated against its target exactly as
// netlist-check does: the start of every stage that reads a netlist.
struct CheckedNetlist {
  std::unique_ptr<DeviceCache> devices; // owns the target's descriptor and cluster
  std::unique_ptr<SourceBuffer> source; // later stages' diagnostics point into it
  Netlist netlist;
  ValidationTarget target;
};

// Reads `path`; `arch`, `device` and `cluster` are the tool's --arch,
// --device and --cluster values (empty: not given). Diagnostics are printed
// to `err`. On failure returns nullopt and sets exitCode: 1 the input is bad
// (the netlist, or the cluster file), 2 a usage error.
std::optional<CheckedNetlist> loadCheckedNetlist(const std::string& path, const std::string& arch,
                                                 const std::string& device, const std::string& tool,
                                                 const PrintOptions& print, std::ostream& err, int& exitCode,
                                                 const std::string& cluster = {});

} // namespace tessera::netlist
