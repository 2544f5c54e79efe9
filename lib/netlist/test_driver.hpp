// Upstream test drivers and their defaults. BUDA runs every netlist with a
// test binary chosen by the directory it lives in; where the netlist's
// test-config is silent, that binary feeds and judges it by its own defaults
// (a stimulus and a comparison config). This is that table, the rule that
// picks a driver from a netlist's path, and the merge of a driver's defaults
// into a netlist's test-config. docs/stimulus.md ("Test drivers") cites the
// upstream source of every value.
#pragma once
#include "netlist/model.hpp"

#include <optional>
#include <string>
#include <vector>

namespace tessera::netlist {

struct TestDriver {
  std::string name;        // what `loader --defaults` takes
  std::string source;      // the upstream file the values come from
  // The driver's sections; nullopt: the driver has none, the loader's own
  // defaults apply (Uniform [-1, 1]; compare::Config{}).
  std::optional<StimulusConfig> stimulus;
  std::optional<ComparisonConfig> comparison;
};

// Every driver, in a fixed order (the first is `generic`).
const std::vector<TestDriver>& testDrivers();

// The driver named `name`, or null.
const TestDriver* findTestDriver(const std::string& name);

// The driver of a netlist at `path`: the deepest run of the path's directory
// components that names an upstream test directory (verif/tm_tests,
// verif/op_tests, verif/graph_tests, verif/data_movement,
// verif/template_netlist, verif/netlist_tests, loader/tests, perf_lib), else
// `generic`. Only the path's text is used (no file system access).
const TestDriver& testDriverForPath(const std::string& path);

// What the driver adds to a netlist's test-config.
struct AppliedDefaults {
  bool stimulus = false;   // the netlist had no stimulus-config and the driver has one
  bool comparison = false; // the same for comparison-config
  bool any() const { return stimulus || comparison; }
};

// Fills the sections `nl`'s test-config lacks with the driver's (a netlist
// without test-config gets one). Sections the netlist has are kept whole, as
// BUDA's read_configs_map_with_defaults keeps the netlist's `default` entry.
AppliedDefaults applyTestDriver(Netlist& nl, const TestDriver& driver);

} // namespace tessera::netlist
