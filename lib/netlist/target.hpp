// Which device a netlist is checked (and compiled) against: --device, else
// --arch, else the netlist's first arch. Shared by every tool that reads
// netlists, so they pick the same target and report the same problems.
#pragma once
#include "device/soc_descriptor.hpp"
#include "netlist/model.hpp"
#include "netlist/validator.hpp"
#include "support/diagnostics.hpp"

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

private:
  std::optional<SocDescriptor> explicit_;
  std::string explicitFile_;
  std::map<Arch, std::unique_ptr<SocDescriptor>> byArch_;
};

// Parses an --arch value into `arch` (left unset for empty text). An unknown
// name prints "<tool>: error: unknown --arch ..." and returns false: a usage
// error, exit code 2.
bool parseArchOption(const std::string& text, const std::string& tool, std::ostream& err, std::optional<Arch>& arch);

// "grayskull, wormhole_b0": the archs devices.arch lists ("none" when empty).
std::string listedArchs(const Netlist& nl);

// Picks the device a netlist is checked against and reports (arch-not-listed)
// a target arch the netlist does not list. Nullopt when the netlist names no
// arch and none was requested (the parser has reported that already).
std::optional<ValidationTarget> chooseTarget(const Netlist& nl, std::optional<Arch> requested, DeviceCache& devices,
                                             DiagnosticEngine& diags);

} // namespace tessera::netlist
