// libFuzzer target for the program interpreter (lib/runtime/interpreter.cpp)
// with a bounded step budget: the netlist's programs (var/staticvar/param,
// varinst, nested loops, execute with queue_settings, allocate/deallocate)
// run against a target that runs no ops.
//
// One input: parseNetlist, validateNetlist against grayskull_10x12 and
// wormhole_b0_8x10; for the first arch it is clean on, every program runs
// (no params given) with maxSteps 100000, maxExecutes 1000. A RuntimeError
// (a named rule with a location) is the interpreter's way to refuse; any
// other exception escapes and is a finding, as is a crash or a hang (> 10 s).
// Netlists whose queues would take much memory (over 4096 entries in all, or
// an entry over 256 tiles) are skipped: their size is the netlist's, not a bug.
//
// Build and run: fuzz/run-fuzz.sh SECONDS program (docs/fuzzing.md).
#include "device/soc_descriptor.hpp"
#include "netlist/parser.hpp"
#include "netlist/shape.hpp"
#include "netlist/validator.hpp"
#include "runtime/interpreter.hpp"
#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace {

using namespace tessera;

class NullTarget : public runtime::Target {
public:
  std::string name() const override { return "fuzz-null"; }
  void execute(runtime::EpochIo&) override {}
  void launch(const runtime::Launch&) override {} // several graphs at once too
};

bool tooLarge(const netlist::Netlist& nl) {
  int64_t entries = 0;
  for (const netlist::Queue& q : nl.queues) {
    entries += std::max<int64_t>(1, q.entries.value);
    auto shape = netlist::queueShape(q);
    if (shape && (shape->t > 256 || shape->r > 256 || shape->c > 256 || shape->t * shape->r * shape->c > 256)) return true;
    if (entries > 4096) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const SocDescriptor grayskull = loadBundledDescriptor("grayskull_10x12");
  static const SocDescriptor wormholeB0 = loadBundledDescriptor("wormhole_b0_8x10");
  SourceBuffer source("fuzz.yaml", std::string(reinterpret_cast<const char*>(data), size));
  DiagnosticEngine parseDiags;
  auto nl = netlist::parseNetlist(source, parseDiags);
  if (!nl || parseDiags.errorCount() != 0 || tooLarge(*nl)) return 0;
  const std::pair<Arch, const SocDescriptor*> targets[] = {{Arch::Grayskull, &grayskull},
                                                           {Arch::WormholeB0, &wormholeB0}};
  for (const auto& [arch, device] : targets) {
    DiagnosticEngine diags = parseDiags;
    netlist::validateNetlist(*nl, netlist::ValidationTarget{arch, device}, diags);
    if (diags.errorCount() != 0) continue;
    runtime::QueueStore store(*nl);
    NullTarget target;
    runtime::HostHooks hooks;
    runtime::Interpreter interp(*nl, store, target, hooks, arch);
    interp.maxSteps = 100'000;
    interp.maxExecutes = 1'000;
    for (const netlist::Program& program : nl->programs) {
      try {
        interp.run(program, {});
      } catch (const runtime::RuntimeError&) {
      }
    }
    break;
  }
  return 0;
}
