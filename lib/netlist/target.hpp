// Which device a netlist is checked (and compiled) against: --device, else
// --arch, else the netlist's first arch; and which cluster of such chips:
// --cluster, else the arch's default topology for the highest target_device.
// Shared by every tool that reads netlists, so they pick the same target and
// report the same problems.
#pragma once
#include "device/device_cache.hpp"
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
