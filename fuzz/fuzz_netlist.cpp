// libFuzzer target for the netlist front end: YAML -> parser -> validator
// (against a Grayskull and a Wormhole B0 device) -> diagnostics printer, and,
// for inputs without errors, the JSON export and the --stats summary.
//
// Build and run: fuzz/run-fuzz.sh (see docs/fuzzing.md).
#include "device/soc_descriptor.hpp"
#include "netlist/json_export.hpp"
#include "netlist/parser.hpp"
#include "netlist/stats.hpp"
#include "netlist/validator.hpp"
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <optional>
#include <string>
#include <utility>

namespace {

using namespace tessera;

struct Devices {
  SocDescriptor grayskull = loadBundledDescriptor("grayskull_10x12");
  SocDescriptor wormholeB0 = loadBundledDescriptor("wormhole_b0_8x10");
};

const Devices& devices() {
  static const Devices d = [] {
    Devices x;
    // loadBundledDescriptor returns an empty descriptor for an unknown name;
    // fuzzing against that would silently test much less.
    if (x.grayskull.workers.empty() || x.wormholeB0.workers.empty()) {
      std::cerr << "fuzz-netlist: bundled descriptors failed to load\n";
      std::abort();
    }
    return x;
  }();
  return d;
}

// Everything netlist-check does with one input, once per target device.
void checkNetlist(const SourceBuffer& source) {
  const Devices& dev = devices();
  DiagnosticEngine parseDiags;
  std::optional<netlist::Netlist> nl = netlist::parseNetlist(source, parseDiags);

  std::ostringstream out;
  if (!nl) {
    printDiagnostics(out, source, parseDiags);
    return;
  }
  bool cleanOnSomeTarget = false;
  const std::pair<Arch, const SocDescriptor*> targets[] = {{Arch::Grayskull, &dev.grayskull},
                                                           {Arch::WormholeB0, &dev.wormholeB0}};
  for (const auto& [arch, device] : targets) {
    DiagnosticEngine diags = parseDiags;
    netlist::validateNetlist(*nl, netlist::ValidationTarget{arch, device}, diags);
    printDiagnostics(out, source, diags);                                        // default: first 20 errors
    printDiagnostics(out, source, diags, PrintOptions{0, /*warningsAsErrors=*/true}); // all of them
    cleanOnSomeTarget |= diags.errorCount() == 0;
  }
  // netlist-check only exports netlists without errors.
  if (cleanOnSomeTarget) {
    out << netlist::netlistToJson(*nl).dump(2);
    out << netlist::formatStats(*nl);
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)devices();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SourceBuffer source("fuzz.yaml", std::string(reinterpret_cast<const char*>(data), size));
  checkNetlist(source);
  return 0;
}
