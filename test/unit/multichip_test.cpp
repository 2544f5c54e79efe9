// Unit tests of lib/netlist/multichip: chips of elements, the chips a default
// cluster needs, graphs joined by op-to-op edges, and the several-chip rules
// through validateNetlist with an explicit cluster (expected diagnostics
// worked out from docs/cluster.md).
#include "device/cluster.hpp"
#include "device/soc_descriptor.hpp"
#include "netlist/multichip.hpp"
#include "netlist/parser.hpp"
#include "netlist/validator.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace tessera;
using namespace tessera::netlist;

namespace {

std::string opLine(const std::string& name, const std::string& input, const std::string& extra = "grid_loc: [0, 0], ") {
  return "    " + name + ": {type: datacopy, " + extra + "grid_size: [1, 1], inputs: [" + input +
         "], in_df: [Float16], out_df: Float16, intermed_df: Float16, acc_df: Float16, math_fidelity: HiFi3, t: 1, "
         "mblock: [1, 1], ublock: [1, 1]}\n";
}

// Graphs g0..g3 on chips 0, 1, 0 and 2: g1 reads g0, g2 reads g1 (one
// group), g3 reads only a queue (a group of its own).
std::string fourGraphs() {
  return "devices: {arch: wormhole_b0}\n"
         "queues:\n"
         "  in0: {input: HOST, type: queue, entries: 1, grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [1, 1], df: Float16, "
         "target_device: 0, loc: dram, dram: [[0, 0x10000000]]}\n"
         "graphs:\n"
         "  g0:\n    target_device: 0\n    input_count: 1\n" + opLine("a", "in0") +
         "  g1:\n    target_device: 1\n    input_count: 1\n" + opLine("b", "a") +
         "  g2:\n    target_device: 0\n    input_count: 1\n" + opLine("c", "b", "grid_loc: [1, 0], ") +
         "  g3:\n    target_device: 2\n    input_count: 1\n" + opLine("d", "in0") +
         "programs:\n  - main:\n      - execute: {graph_name: g0, queue_settings: {}}\n";
}

Netlist mustParse(const std::string& text) {
  SourceBuffer source("m.yaml", text);
  DiagnosticEngine diags;
  auto nl = parseNetlist(source, diags);
  REQUIRE(diags.errorCount() == 0);
  REQUIRE(nl.has_value());
  return std::move(*nl);
}

std::vector<std::string> rulesOf(const DiagnosticEngine& diags) {
  std::vector<std::string> out;
  for (const Diagnostic& d : diags.diagnostics())
    if (d.severity == Severity::Error) out.push_back(d.rule);
  return out;
}

} // namespace

TEST_CASE("multichip: chips, default chip count, op-joined graphs", "[multichip]") {
  Netlist nl = mustParse(fourGraphs());
  CHECK(chipsNamed(nl) == 3);
  CHECK(chipOf(nl.graphs[3]) == 2u);
  auto groups = opJoinedGraphs(nl);
  REQUIRE(groups.size() == 2);
  REQUIRE(groups[0].size() == 3);
  CHECK(groups[0][0]->name == "g0");
  CHECK(groups[0][1]->name == "g1");
  CHECK(groups[0][2]->name == "g2");
  REQUIRE(groups[1].size() == 1);
  CHECK(groups[1][0]->name == "g3");

  Netlist one = mustParse("devices: {arch: grayskull}\nqueues: {}\ngraphs: {}\nprograms: []\n");
  CHECK(chipsNamed(one) == 1);
  CHECK(opJoinedGraphs(one).empty());

  CHECK(crossChipOpEdgesSupported(Arch::Grayskull));
  CHECK(crossChipOpEdgesSupported(Arch::WormholeB0));
  CHECK_FALSE(crossChipOpEdgesSupported(Arch::Blackhole));
}

TEST_CASE("multichip: clusterText names the chips", "[multichip]") {
  std::string why;
  CHECK(clusterText(*defaultCluster(Arch::WormholeB0, 4, why)) == "cluster 'default-wormhole_b0-2x2' (chips 0..3)");
  CHECK(clusterText(singleChipCluster()) == "cluster 'single-chip' (chip 0)");
  ClusterDescriptor sparse;
  sparse.name = "odd";
  for (ChipId c : {1u, 4u, 9u}) sparse.chips[c] = ChipLocation{};
  CHECK(clusterText(sparse) == "cluster 'odd' (chips 1, 4, 9)");
}

TEST_CASE("multichip: validateNetlist against a cluster", "[multichip]") {
  const SocDescriptor wh = loadBundledDescriptor("wormhole_b0_8x10");
  Netlist nl = mustParse(fourGraphs());
  std::string why;
  SECTION("the default 2x2 holds chips 0..2 and links them: valid") {
    auto c = defaultCluster(Arch::WormholeB0, chipsNamed(nl), why);
    REQUIRE(c);
    DiagnosticEngine diags;
    validateNetlist(nl, ValidationTarget{Arch::WormholeB0, &wh, &*c}, diags);
    CHECK(diags.errorCount() == 0);
  }
  SECTION("a pair lacks chip 2") {
    auto c = defaultCluster(Arch::WormholeB0, 2, why);
    DiagnosticEngine diags;
    validateNetlist(nl, ValidationTarget{Arch::WormholeB0, &wh, &*c}, diags);
    CHECK(rulesOf(diags) == std::vector<std::string>{"target-device"});
  }
  SECTION("without a cluster the target is one chip") {
    DiagnosticEngine diags;
    validateNetlist(nl, ValidationTarget{Arch::WormholeB0, &wh}, diags);
    CHECK(rulesOf(diags) == std::vector<std::string>{"target-device", "target-device"}); // g1 and g3
  }
  SECTION("c on a's core: one epoch, one chip") {
    std::string text = fourGraphs();
    text.replace(text.find("grid_loc: [1, 0]"), 16, "grid_loc: [0, 0]");
    Netlist clash = mustParse(text);
    auto c = defaultCluster(Arch::WormholeB0, 3, why);
    DiagnosticEngine diags;
    validateNetlist(clash, ValidationTarget{Arch::WormholeB0, &wh, &*c}, diags);
    CHECK(rulesOf(diags) == std::vector<std::string>{"grid-overlap"});
  }
  SECTION("chips 0 and 1 not linked: b cannot read a") {
    ClusterDescriptor c;
    c.name = "apart";
    for (ChipId id : {0u, 1u, 2u}) c.chips[id] = ChipLocation{};
    c.links.push_back(EthLink{{0, 8}, {2, 0}, {}});
    c.mmio = {0};
    DiagnosticEngine diags;
    validateNetlist(nl, ValidationTarget{Arch::WormholeB0, &wh, &c}, diags);
    // b (chip 1) reads a (chip 0); c (chip 0) reads b (chip 1).
    CHECK(rulesOf(diags) == std::vector<std::string>{"chip-route", "chip-route"});
  }
}
