// The SoC descriptors and cluster a run targets, loaded once per run from
// --device (a file or a bundled name), --arch and --cluster: the tool
// plumbing every stage shares, with or without a netlist (pipegen and
// blobgen have none).
#pragma once
#include "device/arch.hpp"
#include "device/cluster.hpp"
#include "device/soc_descriptor.hpp"
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

namespace tessera {

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

// "grayskull, wormhole_b0, ...": the bundled device names, for --help.
std::string bundledDeviceList();

} // namespace tessera
