// Unit tests of firstAcceptingArch and archFallbackNote (lib/netlist/target):
// the arch `loader run` and `netlist-check --any-arch` pick when a netlist's
// first listed arch rejects it.
#include "device/device_cache.hpp"
#include "netlist/parser.hpp"
#include "netlist/target.hpp"
#include "netlist/validator.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace tessera;
using namespace tessera::netlist;

namespace {

// A nop accumulating in ACC: Float32 needs wormhole_b0's 32-bit dest.
std::string accNetlist(const std::string& archs, const std::string& acc) {
  return "devices:\n  arch: " + archs + R"(
queues:
  in0:  {input: HOST, type: queue, entries: 1, grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [2, 2], df: Float16_b, target_device: 0, loc: dram, dram: [[0, 0x10000000]]}
  out0: {input: op0, type: queue, entries: 1, grid_size: [1, 1], t: 1, mblock: [1, 1], ublock: [2, 2], df: Float16_b, target_device: 0, loc: dram, dram: [[1, 0x10000000]]}
graphs:
  g0:
    target_device: 0
    input_count: 1
    op0: {type: nop, grid_loc: [0, 0], grid_size: [1, 1], inputs: [in0], in_df: [Float16_b], out_df: Float16_b, intermed_df: Float16_b, acc_df: )" +
         acc + R"(, math_fidelity: HiFi4, t: 1, mblock: [1, 1], ublock: [2, 2]}
programs:
  - main:
      - var: {$c0: 0}
      - execute: {graph_name: g0, queue_settings: {in0: {prologue: false, epilogue: false, zero: false, rd_ptr_global: $c0, rd_ptr_local: $c0}}}
)";
}

struct Chosen {
  DiagnosticEngine first;              // the first arch's validation
  std::optional<AcceptingArch> other;  // firstAcceptingArch's answer
};

Chosen choose(const std::string& text) {
  SourceBuffer source("a.yaml", text);
  DiagnosticEngine parsed;
  std::optional<Netlist> nl = parseNetlist(source, parsed);
  REQUIRE(nl);
  REQUIRE(parsed.errorCount() == 0);
  static DeviceCache devices; // owns the descriptors the targets point into
  Chosen c{parsed, std::nullopt};
  auto target = chooseTarget(*nl, std::nullopt, devices, c.first);
  REQUIRE(target);
  validateNetlist(*nl, *target, c.first);
  c.other = firstAcceptingArch(*nl, target->arch, devices, parsed);
  return c;
}

} // namespace

TEST_CASE("firstAcceptingArch: the next listed arch that accepts the netlist") {
  Chosen c = choose(accNetlist("[grayskull, wormhole_b0]", "Float32"));
  CHECK(c.first.hasRule("acc-df-arch"));
  REQUIRE(c.other);
  CHECK(c.other->target.arch == Arch::WormholeB0);
  CHECK(c.other->diags.errorCount() == 0);
  CHECK(archFallbackNote(Arch::Grayskull, c.first, c.other->target.arch, "running on") ==
        "grayskull, the netlist's first arch, rejects it (acc-df-arch: op 'op0': acc_df Float32 needs a 32-bit dest "
        "register, which grayskull does not have); running on wormhole_b0, the first arch it lists that accepts it");
}

TEST_CASE("firstAcceptingArch: listed order decides, and the rejected arch is skipped") {
  // blackhole and wormhole_b0 both accept it: the one listed first wins.
  Chosen c = choose(accNetlist("[grayskull, blackhole, wormhole_b0]", "Float32"));
  REQUIRE(c.other);
  CHECK(c.other->target.arch == Arch::Blackhole);
}

TEST_CASE("firstAcceptingArch: none when no listed arch accepts the netlist") {
  Chosen c = choose(accNetlist("[grayskull]", "Float32"));
  CHECK(c.first.errorCount() > 0);
  CHECK_FALSE(c.other);
}
