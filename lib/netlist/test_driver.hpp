// Upstream test drivers and their defaults. BUDA runs every netlist with a
// test binary chosen by the directory it lives in; where the netlist's
// test-config is silent, that binary feeds and judges it by its own defaults
// (a stimulus and a comparison config). This is that table, the rule that
// picks a driver from a netlist's path, and the merge of a driver's defaults
// into a netlist's test-config. docs/stimulus.md ("Test drivers") cites the
// upstream source of every value.
#pragma once
#include "netlist/model.hpp"

#include <cstdint>
#include <functional>
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
  // Program params the driver passes to run_program, each computed from the
  // netlist (nullopt: the driver has no value for this netlist).
  struct Param {
    std::string name;  // with the `$`
    std::string how;   // how the driver computes it, for the loader's line
    std::function<std::optional<int64_t>(const Netlist&)> value;
  };
  std::vector<Param> params = {};
  // Queues the driver writes with the constant 0, every slot, before the run,
  // whatever the stimulus config says (a netlist override naming the queue
  // exactly still wins).
  std::vector<std::string> zeroed = {};
};

// Every driver, in a fixed order (the first is `generic`).
const std::vector<TestDriver>& testDrivers();

// The driver named `name`, or null.
const TestDriver* findTestDriver(const std::string& name);

// The driver of a netlist at `path`: the deepest run of the path's directory
// components that names an upstream test directory (verif/tm_tests,
// verif/op_tests, verif/graph_tests, verif/data_movement,
// verif/template_netlist, verif/netlist_tests, loader/tests, perf_lib), else
// `generic`; in verif/netlist_tests a file named netlist_dual_view_ram* is
// test_dual_view_ram's. Only the path's text is used (no file system access).
const TestDriver& testDriverForPath(const std::string& path);

// What the driver adds to a netlist's test-config.
struct AppliedDefaults {
  bool stimulus = false;   // the netlist had no stimulus-config and the driver has one
  bool comparison = false; // the same for comparison-config
  std::vector<std::string> zeroed; // queues given a Constant 0 override (driver's `zeroed`)
  bool any() const { return stimulus || comparison || !zeroed.empty(); }
};

// Fills the sections `nl`'s test-config lacks with the driver's (a netlist
// without test-config gets one). Sections the netlist has are kept whole, as
// BUDA's read_configs_map_with_defaults keeps the netlist's `default` entry.
// The driver's `zeroed` queues that `nl` has get an exact-name Constant 0
// override in the stimulus (unless the netlist's own names them).
AppliedDefaults applyTestDriver(Netlist& nl, const TestDriver& driver);

// The driver's program params that have a value for `nl`, in the driver's order.
std::vector<std::pair<const TestDriver::Param*, int64_t>> driverParams(const TestDriver& driver, const Netlist& nl);

} // namespace tessera::netlist
