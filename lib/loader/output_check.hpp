// What `loader` does with the queues after a run: writes each queue's
// entries as .npy (--outputs), and checks every op-fed queue against the
// reference run's entries or against --expected files, with the netlist's
// comparison-config (docs/loader.md, "The check").
#pragma once
#include "formats/packed.hpp"
#include "netlist/model.hpp"
#include "runtime/queues.hpp"
#include "support/diagnostics.hpp"

#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tessera::loader {

class HostIo;

using EntryLog = std::map<std::string, std::vector<formats::PackedTensor>>;

struct OutputCheckRequest {
  bool recording = false;              // entries were logged (else only counts are printed)
  const EntryLog* reference = nullptr; // the reference run's writes: check against them
  std::string outputsDir;              // --outputs: write every queue's .npy here
  std::string expectedDir;             // --expected: check op-fed queues against these .npy
};

// Prints a line per queue (or the check table against the reference) on
// `out`. Returns whether any check failed, or nullopt after an error that
// is already reported on `err` (a bad comparison-config through
// `printDiags`, an unwritable --outputs file, a bad --expected file).
std::optional<bool> checkOutputs(const netlist::Netlist& nl, const runtime::QueueStore& store, const HostIo& host,
                                 const OutputCheckRequest& request, DiagnosticEngine& diags,
                                 const std::function<void()>& printDiags, std::ostream& out, std::ostream& err);

} // namespace tessera::loader
