// libFuzzer target for the SoC descriptor parser (lib/device/soc_descriptor.cpp).
//
// Besides parsing, every descriptor that parses is used the way the rest of
// the toolchain uses one: the documented invariants are checked (workers fill
// the logical grid, lookups round-trip) and a fixed netlist is validated
// against it, so a descriptor the parser accepts but the validator cannot
// cope with is found too.
//
// Build and run: fuzz/run-fuzz.sh (see docs/fuzzing.md).
#include "device/soc_descriptor.hpp"
#include "netlist/parser.hpp"
#include "netlist/validator.hpp"
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

namespace {

using namespace tessera;

// Spans several cores and DRAM channels, so grid and channel checks run.
constexpr const char* kNetlist = R"(devices:
  arch: [grayskull, wormhole, wormhole_b0, blackhole]
queues:
  in0: {input: HOST, type: queue, entries: 2, grid_size: [2, 2], t: 1, mblock: [1, 1], ublock: [2, 2], df: Float16_b, target_device: 0, loc: dram, dram: [[0, 0x10000000], [1, 0x10000000], [2, 0x10000000], [3, 0x10000000]]}
  in1: {input: HOST, type: queue, entries: 2, grid_size: [1, 1], t: 1, mblock: [2, 2], ublock: [2, 2], df: Float16_b, target_device: 0, loc: host, host: [0x0]}
  out: {input: add0, type: queue, entries: 2, grid_size: [2, 2], t: 1, mblock: [1, 1], ublock: [2, 2], df: Float16_b, target_device: 0, loc: dram, dram: [[4, 0x20000000], [5, 0x20000000], [6, 0x20000000], [7, 0x20000000]]}
graphs:
  g0:
    target_device: 0
    input_count: 2
    add0: {type: add, grid_loc: [1, 2], grid_size: [2, 2], inputs: [in0, in1], in_df: [Float16_b, Float16_b], acc_df: Float16_b, out_df: Float16_b, intermed_df: Float16_b, ublock_order: r, buf_size_mb: 2, math_fidelity: HiFi3, untilize_output: false, t: 1, mblock: [1, 1], ublock: [2, 2]}
programs:
  - run:
      - var: {$c_loop: 2, $c_in: 2}
      - loop: $c_loop
      - execute: {graph_name: g0, queue_settings: {in0: {prologue: false, epilogue: false, zero: false, rd_ptr_global: $0, wr_ptr_global: $0}, in1: {prologue: false, epilogue: false, zero: false, rd_ptr_global: $0, wr_ptr_global: $0}}}
      - endloop
)";

struct Fixture {
  SourceBuffer source{"fixed.yaml", kNetlist};
  DiagnosticEngine parseDiags;
  std::optional<netlist::Netlist> nl;
};

const Fixture& fixture() {
  static const Fixture* f = [] {
    auto* x = new Fixture;
    x->nl = netlist::parseNetlist(x->source, x->parseDiags);
    if (!x->nl || x->parseDiags.errorCount() != 0) {
      std::ostringstream os;
      printDiagnostics(os, x->source, x->parseDiags);
      std::cerr << "fuzz-soc-descriptor: the built-in netlist does not parse:\n" << os.str();
      std::abort();
    }
    return x;
  }();
  return *f;
}

[[noreturn]] void invariantBroken(const char* what) {
  std::cerr << "fuzz-soc-descriptor: invariant broken: " << what << "\n";
  std::abort();
}

void checkInvariants(const SocDescriptor& d) {
  // soc_descriptor.hpp: the workers fill the logical grid completely.
  if (d.workerRows != static_cast<int>(d.workerRowY.size()) || d.workerCols != static_cast<int>(d.workerColX.size()))
    invariantBroken("workerRows/workerCols disagree with workerRowY/workerColX");
  if (static_cast<long long>(d.workerRows) * d.workerCols != static_cast<long long>(d.workers.size()))
    invariantBroken("workers do not fill the logical grid");
  for (int r = 0; r < d.workerRows; ++r)
    for (int c = 0; c < d.workerCols; ++c) {
      CoreCoord core = d.workerCore(r, c);
      auto back = d.workerLogical(core);
      if (!back || back->row != r || back->col != c) invariantBroken("workerCore/workerLogical do not round-trip");
    }
  // Out-of-range lookups are defined to give {-1, -1}.
  (void)d.workerCore(-1, 0);
  (void)d.workerCore(d.workerRows, d.workerCols);
  (void)d.dramCore(-1);
  (void)d.dramCore(d.dramChannelCount(), 0);
  for (int ch = 0; ch < d.dramChannelCount(); ++ch)
    for (size_t sub = 0; sub <= d.dramChannels[ch].size(); ++sub) (void)d.dramCore(ch, static_cast<int>(sub));
  for (const CoreCoord& c : d.workers) (void)toString(c);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)fixture();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SourceBuffer source("fuzz_soc.yaml", std::string(reinterpret_cast<const char*>(data), size));
  DiagnosticEngine diags;
  std::optional<SocDescriptor> desc = parseSocDescriptor(source, diags);
  std::ostringstream out;
  printDiagnostics(out, source, diags);
  if (!desc) return 0;

  checkInvariants(*desc);

  const Fixture& f = fixture();
  DiagnosticEngine vdiags = f.parseDiags;
  netlist::validateNetlist(*f.nl, netlist::ValidationTarget{desc->arch, &*desc}, vdiags);
  printDiagnostics(out, f.source, vdiags, PrintOptions{0, false});
  return 0;
}
