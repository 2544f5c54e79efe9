// Helpers of the lib/hlk unit tests: parse a netlist written in the test,
// validate it like netlist-check, and configure its ops.
#pragma once
#include "device/soc_descriptor.hpp"
#include "hlk/config.hpp"
#include "netlist/parser.hpp"
#include "netlist/validator.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

namespace hlktest {

using namespace tessera;

struct Loaded {
  netlist::Netlist nl;
  std::unique_ptr<SocDescriptor> device;
  netlist::ValidationTarget target() const { return {device->arch, device.get()}; }
  const netlist::Op& op(const std::string& name) const {
    for (const auto& g : nl.graphs)
      for (const auto& o : g.ops)
        if (o.name == name) return o;
    FAIL("no op " << name);
    return nl.graphs.at(0).ops.at(0);
  }
};

// Parses `text`; with `validate`, the validator (every netlist-check rule,
// the fused-op constraints included) must accept it without errors.
inline Loaded load(const std::string& text, bool validate = true) {
  SourceBuffer source("hlk_test.yaml", text);
  DiagnosticEngine diags;
  auto nl = netlist::parseNetlist(source, diags);
  INFO(text);
  REQUIRE(nl);
  Loaded l{std::move(*nl), nullptr};
  Arch arch = l.nl.devices.arch.empty() ? Arch::Grayskull : l.nl.devices.arch.front().value;
  l.device = std::make_unique<SocDescriptor>(loadBundledDescriptor(defaultDescriptorName(arch)));
  if (validate) netlist::validateNetlist(l.nl, l.target(), diags);
  for (const Diagnostic& d : diags.diagnostics())
    if (d.severity == Severity::Error) FAIL(d.message << " [" << d.rule << "]");
  return l;
}

struct Configured {
  std::optional<hlk::KernelConfig> config;
  DiagnosticEngine diags;
};

inline std::unique_ptr<Configured> configure(const Loaded& l, const std::string& op) {
  auto c = std::make_unique<Configured>();
  c->config = hlk::configureOp(l.nl, l.op(op), l.target(), c->diags);
  return c;
}

inline const hlk::OperandInfo& operand(const hlk::KernelConfig& k, int number) {
  for (const auto& o : k.operands)
    if (o.operand == number) return o;
  FAIL("no operand " << number);
  return k.operands.front();
}

// A queue line: `name: {...}` fed by HOST with the given blocking and format.
inline std::string queue(const std::string& name, const std::string& input, const std::string& blocking,
                         const std::string& df, int channelAddr) {
  return "  " + name + ": {type: queue, input: " + input + ", entries: 2, grid_size: [1, 1], " + blocking +
         ", df: " + df + ", target_device: 0, loc: dram, dram: [[0, 0x0" + std::to_string(channelAddr) + "000000]]}\n";
}

} // namespace hlktest
